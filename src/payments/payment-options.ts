/** What payments are configured with (src/config.ts reads it from the environment; payments own its shape). */
import type { CaptureOn } from '../orders/order-machine.js';
import type { PaymentProviderName } from './payment-provider.js';

export interface PaymentConfig {
  /** PAYMENT_PROVIDER: who holds the buyer's money: `manual` (the default: the merchant's instructions) or `stripe`. */
  provider: PaymentProviderName;
  /** PAYMENT_INSTRUCTIONS: how a buyer pays with the manual provider (bank details, "pay on delivery"); several lines allowed. */
  instructions: string;
  /** Whether PAYMENT_INSTRUCTIONS was set (unset: a default sentence, and the start banner says to set it). */
  instructionsSet: boolean;
  /** PAYMENT_DUE_DAYS: days after the order a manual payment is due. */
  dueDays: number;
  /** CAPTURE_ON: when a provider's hold is captured: at the first shipment (`fulfillment`), at `approval`, or `manual`ly. */
  captureOn: CaptureOn;
  /** PAYMENT_PROVIDER=stripe: the account's keys and where its API is (STRIPE_API_URL: a stand-in in tests). */
  stripe: StripeConfig | undefined;
}

export interface StripeConfig {
  /** STRIPE_SECRET_KEY: sk_test_… or sk_live_… (or a restricted rk_ key). */
  secretKey: string;
  /** STRIPE_WEBHOOK_SECRET: whsec_…, the endpoint's signing secret. */
  webhookSecret: string;
  /** STRIPE_API_URL (default https://api.stripe.com), as the SDK takes it. */
  apiUrl: string;
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

/** The most characters PAYMENT_INSTRUCTIONS may hold (a page, a mail and the terminal show it whole). */
export const PAYMENT_INSTRUCTIONS_MAX = 1000;
