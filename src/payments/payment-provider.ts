/**
 * The one port to whoever holds the buyer's money. The store asks a provider four things about an order's payment,
 * and reads its events:
 *
 *  - at the approval, what the buyer must do (`begin`): with `manual`, nothing now (the order says how to pay, the
 *    merchant's PAYMENT_INSTRUCTIONS, and by when); with a hosted provider (Stripe Checkout), a page to send the buyer
 *    to, created with the checkout's exact lines, shipping, tax, email, metadata (checkout id, approved digest), an
 *    idempotency key per approval, an expiry and the success and cancel URLs. When the buyer comes back (or the
 *    provider's event says so), `confirm` retrieves the session and answers `authorized` only for a hold of exactly
 *    the approved amount and currency that waits for capture (Stripe: `requires_capture`);
 *  - `capture` (all or part of what is held), `cancel` (release the hold), `refund` (an amount of what was captured);
 *  - `readEvent`: a webhook's raw body and signature header become a typed event, or a `WebhookRefused`.
 *
 * Calls that leave the process never run inside a database transaction holding the order's row: on the embedded
 * database a transaction holds the only connection, so a slow provider would freeze the store. A move on an order's
 * money (src/orders/order-actions.ts) is therefore three steps:
 *
 *   1. reserve, in one transaction on the locked order: the guard of the order's transition table, then a
 *      `payment_operations` row `requested` with its amount and a fresh idempotency key, and the amount added to the
 *      order's `capturing` or `refunding`. A reservation already counts against what may still be captured or
 *      refunded (a check constraint holds `refunded + refunding <= captured`), so two racing refunds can never give
 *      back more than was captured: the second one's guard sees the first one's reservation;
 *   2. call the provider with that idempotency key, outside any transaction;
 *   3. record the outcome in a second transaction: `succeeded` moves the money columns and the payment state and
 *      announces the event (mail, the platform's webhook); `failed` releases the reservation and the merchant reads
 *      the provider's refusal. A reservation left `requested` by a process that stopped between 1 and 3 is asked
 *      again with its key (`OrderActions.settleUnsettled`): the provider answers what it did the first time.
 *
 * The approval places the order in one transaction of its own (stock, order, outbox) after the provider's hold is
 * confirmed outside it; the hold's facts (`ProviderAuthorization`) are handed to `placeOrder` and kept on the order.
 * The provider's reference (a PaymentIntent id) is stored on the order for the store and the merchant only; no page,
 * mail or agent answer shows it. No card data ever reaches the store.
 */

export const PAYMENT_PROVIDERS = ['manual', 'stripe'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDERS)[number];

/** What a buyer pays for, as the provider's hosted page lists it (cents). */
export interface PaymentLine {
  title: string;
  quantity: number;
  unitAmount: number;
}

/** Everything a hosted payment page is created with, for one approval. */
export interface PaymentSessionRequest {
  checkoutId: string;
  /** The digest of what the buyer approved: kept in the session's metadata and checked when it comes back. */
  digest: string;
  /** One per approval: asking twice (a double click, a retry) gives the same session. */
  idempotencyKey: string;
  currency: string;
  buyerEmail: string;
  lines: readonly PaymentLine[];
  shipping: { title: string; amount: number };
  tax: number;
  /** The amount the hold must be for (lines + shipping + tax). */
  total: number;
  /** When the hosted page stops taking payment (Stripe: at least 30 minutes after creation). */
  expiresAt: Date;
  successUrl: string;
  cancelUrl: string;
  metadata: Readonly<Record<string, string>>;
}

/** What the buyer must do at the approval. */
export type PaymentStep =
  /** Nothing now: the order is placed with its payment pending, and says how to pay and by when. */
  | { kind: 'instructions'; instructions: string; dueAt: Date }
  /** Go to the provider's page (a top-level navigation); `sessionId` is how the store asks about it afterwards. */
  | { kind: 'redirect'; url: string; sessionId: string; expiresAt: Date };

/** The provider holds the buyer's money for an order, waiting for capture: what the order keeps of it. */
export interface ProviderAuthorization {
  /** The provider's reference of the payment (a Stripe PaymentIntent id). */
  reference: string;
  amount: number;
  currency: string;
  /** When the hold lapses if not captured (Stripe: 7 days for most cards). */
  authorizedUntil: Date;
}

/** What a hosted session came to, checked against what the buyer approved. */
export type SessionOutcome =
  | ({ kind: 'authorized'; checkoutId: string; digest: string } & ProviderAuthorization)
  /** The buyer has not paid yet (still on the page, or back from it without paying). */
  | { kind: 'open' }
  /** The session expired or was canceled: nothing is held. */
  | { kind: 'closed'; reason: string }
  /**
   * Money is held but not as approved (another amount or currency, another checkout or digest, captured already):
   * the caller must cancel the hold (`reference`) and place nothing.
   */
  | { kind: 'mismatch'; reason: string; reference: string | null };

/** One call that moves money: the order's payment reference, the amount (cents) and the reservation's key. */
export interface ProviderOperation {
  reference: string | null;
  amount: number;
  currency: string;
  idempotencyKey: string;
}

export type OperationOutcome =
  | { ok: true; providerReference: string | null }
  /** The provider refused. `holdGone`: the authorization no longer exists (expired, canceled), nothing can be captured. */
  | { ok: false; reason: string; holdGone: boolean };

/** A provider's event, typed; `id` is the provider's event id (applied once). */
export type ProviderEvent =
  | { id: string; type: 'session_completed'; sessionId: string; checkoutId: string | null }
  | { id: string; type: 'session_expired'; sessionId: string; checkoutId: string | null }
  | { id: string; type: 'payment_canceled'; reference: string }
  | { id: string; type: 'payment_failed'; reference: string; reason: string }
  /** `refundedTotal`: everything refunded on the payment so far (a refund made in the provider's dashboard included). */
  | { id: string; type: 'refunded'; reference: string; refundedTotal: number }
  | { id: string; type: 'disputed'; reference: string; amount: number; reason: string }
  | { id: string; type: 'ignored'; providerType: string };

/**
 * The provider answered that it will not open a payment page for this order (an amount under its minimum, a request
 * it refuses): asking again would not help. `message` is the buyer's sentence.
 */
export class PaymentSessionRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentSessionRefused';
  }
}

/** A webhook that is not the provider's (bad or missing signature, stale timestamp, unreadable body): answer 400, change nothing. */
export class WebhookRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookRefused';
  }
}

/** How the payment of a new order starts, as the order keeps it. */
export interface PaymentStart {
  provider: PaymentProviderName;
  state: 'pending' | 'authorized';
  authorized: number;
  authorizedUntil: Date | null;
  dueAt: Date | null;
  instructions: string | null;
  reference: string | null;
}

export interface PaymentProvider {
  readonly name: PaymentProviderName;
  /**
   * Whether the provider holds the buyer's money until the store captures it (Stripe), so CAPTURE_ON applies; the
   * manual provider holds nothing: the merchant captures when the money arrived.
   */
  readonly holdsFunds: boolean;
  /** At the approval: what the buyer must do. */
  begin(request: PaymentSessionRequest): Promise<PaymentStep>;
  /** After the buyer's return or the provider's event: the session's outcome, checked against the approved total. */
  confirm(sessionId: string, expected: { amount: number; currency: string; checkoutId: string; digest: string }): Promise<SessionOutcome>;
  /**
   * Closes a hosted session so it takes no payment any more: `expired`, or `completed` when the buyer paid it first
   * (then `confirm` says what is held). No answer from the provider is thrown.
   */
  expire(sessionId: string): Promise<'expired' | 'completed'>;
  /** How a new order's payment starts: pending with instructions (manual), or authorized with the confirmed hold. */
  start(order: { total: number; currency: string; placedAt: Date }, authorization?: ProviderAuthorization): PaymentStart;
  capture(operation: ProviderOperation): Promise<OperationOutcome>;
  /** Releases the hold (nothing captured). */
  cancel(operation: ProviderOperation): Promise<OperationOutcome>;
  refund(operation: ProviderOperation): Promise<OperationOutcome>;
  /** A webhook's raw body and signature header: its event, or WebhookRefused. */
  readEvent(rawBody: Buffer, signature: string | undefined): ProviderEvent;
}

/** A refusal a provider that does not take a step answers with (the manual provider has no hosted page, no webhooks). */
export class PaymentProviderUnsupported extends Error {
  constructor(provider: PaymentProviderName, what: string) {
    super(`the ${provider} payment provider does not ${what}`);
    this.name = 'PaymentProviderUnsupported';
  }
}
