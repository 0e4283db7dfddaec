/**
 * The default payment provider (PAYMENT_PROVIDER=manual): no account, no card. At the approval the buyer is told how
 * to pay (the merchant's PAYMENT_INSTRUCTIONS, such as bank details or "pay on delivery") and by when
 * (PAYMENT_DUE_DAYS after the order); the order keeps both, as they were then, with its payment `pending`. The
 * merchant captures when the money arrived (`storefront orders capture ID [AMOUNT]`), records money given back
 * (`refund`), and a cancel before payment voids it. Nothing leaves the process, so nothing here can fail.
 */
import {
  PaymentProviderUnsupported,
  WebhookRefused,
  type OperationOutcome,
  type PaymentProvider,
  type PaymentStart,
  type PaymentStep,
} from './payment-provider.js';

/** What a store says when the merchant set no PAYMENT_INSTRUCTIONS: still how, if not yet the details. */
export const DEFAULT_PAYMENT_INSTRUCTIONS = 'Reply to your order confirmation email and the store will send you its payment details.';
export const DEFAULT_PAYMENT_DUE_DAYS = 7;

export interface ManualProviderOptions {
  /** The merchant's PAYMENT_INSTRUCTIONS. */
  instructions: string;
  /** PAYMENT_DUE_DAYS: days after the order the payment is due. */
  dueDays: number;
  now?: () => Date;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function manualProvider(options: Partial<ManualProviderOptions> = {}): PaymentProvider {
  const instructions = options.instructions ?? DEFAULT_PAYMENT_INSTRUCTIONS;
  const dueDays = options.dueDays ?? DEFAULT_PAYMENT_DUE_DAYS;
  const now = options.now ?? (() => new Date());
  const dueAfter = (placedAt: Date) => new Date(placedAt.getTime() + dueDays * DAY_MS);
  const done = async (): Promise<OperationOutcome> => ({ ok: true, providerReference: null });
  return {
    name: 'manual',
    holdsFunds: false,
    async begin(): Promise<PaymentStep> {
      return { kind: 'instructions', instructions, dueAt: dueAfter(now()) };
    },
    async confirm() {
      throw new PaymentProviderUnsupported('manual', 'send the buyer to a payment page');
    },
    async expire() {
      throw new PaymentProviderUnsupported('manual', 'send the buyer to a payment page');
    },
    start(order): PaymentStart {
      return { provider: 'manual', state: 'pending', authorized: 0, authorizedUntil: null, dueAt: dueAfter(order.placedAt), instructions, reference: null };
    },
    // The merchant says the money arrived, gave some back, or the order was canceled before it was paid.
    capture: done,
    cancel: done,
    refund: done,
    readEvent() {
      throw new WebhookRefused('the manual payment provider takes no webhooks');
    },
  };
}
