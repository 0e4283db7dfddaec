/**
 * Payment handlers: how an approved order is paid, as the UCP profile's `payment_handlers` and every checkout's
 * `ucp` block advertise it. The handler wraps the store's payment provider (src/payments/payment-provider.ts) and
 * says, inside the transaction that places the order, how its payment starts: with the manual provider `pending`
 * (the merchant's instructions and a due date kept on the order), with a provider holding the buyer's money
 * `authorized` (the hold confirmed before the transaction, handed over in the request). No card data is ever
 * stored or echoed.
 */
import type { Queryable } from '../db/database.js';
import type { CaptureOn } from '../orders/order-machine.js';
import { manualProvider } from './manual-provider.js';
import type { PaymentProvider, PaymentStart, ProviderAuthorization } from './payment-provider.js';
import { chargedWhen } from './payment-words.js';

/**
 * An order's payment: pending (manual: until the merchant says it arrived), authorized (a provider holds it), captured,
 * partially_refunded or refunded, voided (canceled before it was paid, or the hold released), failed, disputed.
 */
export type PaymentState = 'pending' | 'authorized' | 'captured' | 'partially_refunded' | 'refunded' | 'voided' | 'failed' | 'disputed';

export const PAYMENT_STATES: readonly PaymentState[] = ['pending', 'authorized', 'captured', 'partially_refunded', 'refunded', 'voided', 'failed', 'disputed'];

export interface PaymentRequest {
  orderId: string;
  amount: number;
  currency: string;
  /** When the order is placed (the manual provider's due date counts from it); now when absent. */
  placedAt?: Date;
  /** The provider's hold, confirmed before the order's transaction (a hosted provider); absent for manual. */
  authorization?: ProviderAuthorization;
}

export interface PaymentResult {
  state: PaymentState;
  /** What the buyer and merchant read about the payment. */
  summary: string;
  /** How the order's payment starts (provider, hold, instructions, due date); absent: pending, manual, no instructions. */
  start?: PaymentStart;
}

/** A payment handler failed to authorize: the order is not placed, and the buyer reads `buyerMessage`. */
export class PaymentDeclined extends Error {
  constructor(readonly buyerMessage: string) {
    super(buyerMessage);
    this.name = 'PaymentDeclined';
  }
}

export interface PaymentHandler {
  /** Reverse-domain name of the handler's specification (the key in `payment_handlers`). */
  name: string;
  /** This store's instance of it (`handler_id` in payment instruments). */
  id: string;
  version: string;
  title: string;
  /** What the buyer is told on the approval page about paying. */
  buyerNotice: string;
  /**
   * How an agent reads it (the handler's `config` in the profile and every checkout): where the buyer pays
   * (`paid_on`: the store's payment instructions, or a hosted payment page after the approval), when the money is
   * taken (`capture`: `manual` when the merchant records it, else CAPTURE_ON's moment), and the buyer's notice.
   */
  config: { paid_on: 'instructions' | 'hosted_payment_page'; capture: 'manual' | 'on_fulfillment' | 'on_approval'; provider: string; description: string };
  /** Authorizes the payment inside the order's transaction; throws PaymentDeclined to refuse. */
  authorize(tx: Queryable, request: PaymentRequest): Promise<PaymentResult>;
  /** The provider behind it (the manual one when absent). */
  provider?: PaymentProvider;
}

/** The handler namespace: this store's own domain, reversed (payments.example.com -> com.example.payments). */
export function handlerNamespace(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.toLowerCase();
  const labels = host.split('.').filter(Boolean).reverse().map((label) => label.replace(/[^a-z0-9_]/g, '_'));
  const isName = labels.length >= 2 && labels.every((label) => /^[a-z]/.test(label));
  return isName ? labels.join('.') : 'local.storefront';
}

const MANUAL_NOTICE = 'Nothing is charged now: once the order is placed, pay the store as its payment instructions say, by the due date.';

/**
 * The manual provider's handler: nothing is charged at the approval; the buyer pays by the merchant's instructions
 * by the due date, and the merchant captures when the money arrived.
 */
export function manualCapture(baseUrl: string, version: string, provider: PaymentProvider = manualProvider()): PaymentHandler {
  return {
    name: `${handlerNamespace(baseUrl)}.manual_capture`,
    id: 'manual_capture',
    version,
    title: 'Pay the store after ordering',
    buyerNotice: MANUAL_NOTICE,
    config: { paid_on: 'instructions', capture: 'manual', provider: provider.name, description: MANUAL_NOTICE },
    provider,
    async authorize(_tx, request) {
      const start = provider.start({ total: request.amount, currency: request.currency, placedAt: request.placedAt ?? new Date() });
      return { state: start.state, summary: 'Payment pending: pay as the payment instructions say, by the due date.', start };
    },
  };
}

/** CAPTURE_ON as a handler's `config.capture` says it. */
export function handlerCapture(captureOn: CaptureOn): PaymentHandler['config']['capture'] {
  return captureOn === 'manual' ? 'manual' : captureOn === 'approval' ? 'on_approval' : 'on_fulfillment';
}

/**
 * A provider that holds the buyer's money (a hosted payment page): the order is placed only with the confirmed
 * hold, handed over in the request; without one the approval is refused.
 */
export function providerCapture(
  baseUrl: string,
  version: string,
  provider: PaymentProvider,
  words: { title: string; buyerNotice: string },
  captureOn: CaptureOn,
): PaymentHandler {
  const capture = handlerCapture(captureOn);
  return {
    name: `${handlerNamespace(baseUrl)}.${provider.name}`,
    id: provider.name,
    version,
    ...words,
    config: { paid_on: 'hosted_payment_page', capture, provider: provider.name, description: words.buyerNotice },
    provider,
    async authorize(_tx, request) {
      const hold = request.authorization;
      if (!hold || hold.amount !== request.amount || hold.currency.toUpperCase() !== request.currency.toUpperCase()) {
        throw new PaymentDeclined('The payment was not authorized for the amount of this order.');
      }
      const start = provider.start({ total: request.amount, currency: request.currency, placedAt: request.placedAt ?? new Date() }, hold);
      return { state: start.state, summary: 'Payment authorized.', start };
    },
  };
}

/** The handler of the store's provider: Stripe's card hold, or the manual provider's instructions. */
export function paymentHandlerFor(baseUrl: string, version: string, provider: PaymentProvider, captureOn: CaptureOn = 'fulfillment'): PaymentHandler {
  if (provider.name === 'stripe') {
    return providerCapture(
      baseUrl,
      version,
      provider,
      {
        title: 'Card, on Stripe’s secure payment page',
        buyerNotice: `After you approve, you pay by card on Stripe’s secure page: the amount is held on your card and charged ${chargedWhen(captureOn)}.`,
      },
      captureOn,
    );
  }
  return manualCapture(baseUrl, version, provider);
}
