/**
 * The Stripe provider (PAYMENT_PROVIDER=stripe), through the official `stripe` package. At the approval the buyer is
 * sent to a Stripe Checkout Session (mode payment, manual capture: Stripe holds the money until the store captures
 * it) made of the checkout's exact lines, shipping and tax, with the checkout id and the approved digest in the
 * metadata of the session and of its PaymentIntent. When the buyer comes back, or Stripe's event says the session
 * completed, `confirm` retrieves the session with its PaymentIntent and answers `authorized` only for a hold
 * (`requires_capture`) of exactly the approved amount and currency, for this checkout and digest.
 *
 * Capture, cancel (release) and refund carry the store's idempotency key, so a call asked again after a lost answer
 * does nothing twice. An answer Stripe gave is an outcome (a refusal included); no answer at all (Stripe down, the
 * network) is thrown, and the caller asks again later with the same key.
 *
 * Webhooks: the raw body's signature is verified by the SDK against STRIPE_WEBHOOK_SECRET (five minutes' tolerance,
 * the SDK's default), and the event mapped to the port's ProviderEvent. No card data ever reaches the store.
 */
import Stripe from 'stripe';
import type { StripeConfig } from './payment-options.js';
import {
  PaymentSessionRefused,
  WebhookRefused,
  type OperationOutcome,
  type PaymentProvider,
  type PaymentSessionRequest,
  type PaymentStart,
  type PaymentStep,
  type ProviderEvent,
  type ProviderOperation,
  type SessionOutcome,
} from './payment-provider.js';

/**
 * How long a Checkout Session takes payment: Stripe's minimum is 30 minutes after the session is created, counted
 * when the request arrives, so a few minutes more leave room for the request's travel and a retry.
 */
export const STRIPE_SESSION_LIFETIME_MS = 35 * 60 * 1000;
/** Stripe's smallest charge in US dollars (its documented minimum charge amounts). */
const STRIPE_MINIMUM_USD_CENTS = 50;
/** A card authorization Stripe holds uncaptured lapses after seven days (most cards). */
const AUTHORIZATION_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface StripeProviderOptions extends Pick<StripeConfig, 'secretKey' | 'webhookSecret' | 'host' | 'port' | 'protocol'> {
  /** Retries of a request Stripe did not answer (or answered 5xx/409), with the same idempotency key; 2 by default. */
  maxNetworkRetries?: number;
  /** Milliseconds before a request with no answer fails; 20 s by default. */
  timeoutMs?: number;
}

/** The metadata keys the store writes on a session and its PaymentIntent. */
const CHECKOUT_KEY = 'checkout_id';
const DIGEST_KEY = 'approval_digest';

const toSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** A Stripe error that is an answer (the request arrived and was refused), as opposed to no answer at all. */
function refusalOf(error: unknown): Stripe.errors.StripeError | undefined {
  if (!(error instanceof Stripe.errors.StripeError)) return undefined;
  if (error instanceof Stripe.errors.StripeConnectionError || error instanceof Stripe.errors.StripeAPIError) return undefined;
  if ((error.statusCode ?? 500) >= 500 || error.statusCode === 429 || error.statusCode === 409) return undefined;
  return error;
}

/** Stripe Checkout takes at most this many line items in payment mode. */
const STRIPE_MAX_LINE_ITEMS = 100;

/**
 * Lines as Stripe Checkout lists them: each line its unit price and quantity (one line of its total if they disagree),
 * and tax as a line. A cart may hold 100 lines (MAX_CART_LINES), and tax takes one more: past Stripe's limit, the
 * last lines are listed as one ("3 more items") of their total, so the amount is the same.
 */
export function lineItems(request: PaymentSessionRequest): Stripe.Checkout.SessionCreateParams.LineItem[] {
  const currency = request.currency.toLowerCase();
  const item = (name: string, quantity: number, unitAmount: number): Stripe.Checkout.SessionCreateParams.LineItem => ({
    quantity,
    price_data: { currency, unit_amount: unitAmount, product_data: { name: name.slice(0, 250) || 'Item' } },
  });
  const room = STRIPE_MAX_LINE_ITEMS - (request.tax > 0 ? 1 : 0);
  const listed = request.lines.length <= room ? request.lines : request.lines.slice(0, room - 1);
  const folded = request.lines.slice(listed.length);
  const items = listed.map((line) => item(line.title, line.quantity, line.unitAmount));
  if (folded.length > 0) {
    const units = folded.reduce((sum, line) => sum + line.quantity, 0);
    items.push(item(`${folded.length} more items (${units} units)`, 1, folded.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0)));
  }
  if (request.tax > 0) items.push(item('Tax', 1, request.tax));
  return items;
}

export function stripeProvider(options: StripeProviderOptions): PaymentProvider {
  const stripe = new Stripe(options.secretKey, {
    host: options.host,
    port: options.port,
    protocol: options.protocol,
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    timeout: options.timeoutMs ?? 20_000,
    appInfo: { name: 'storefront' },
  });

  /** Runs one money move; Stripe's refusal is an outcome, no answer is thrown. */
  async function move(run: () => Promise<string | null>, goneWhen: (error: Stripe.errors.StripeError) => boolean): Promise<OperationOutcome> {
    try {
      return { ok: true, providerReference: await run() };
    } catch (error) {
      const refused = refusalOf(error);
      if (!refused) throw error;
      return { ok: false, reason: refused.message, holdGone: goneWhen(refused) };
    }
  }

  /** Whether Stripe's refusal says the PaymentIntent can no longer be captured (canceled, lapsed). */
  const holdGone = (error: Stripe.errors.StripeError) => error.code === 'payment_intent_unexpected_state' || error.code === 'resource_missing';

  return {
    name: 'stripe',
    holdsFunds: true,

    async begin(request): Promise<PaymentStep> {
      const metadata = { ...request.metadata, [CHECKOUT_KEY]: request.checkoutId, [DIGEST_KEY]: request.digest };
      const currency = request.currency.toLowerCase();
      if (request.currency.toUpperCase() === 'USD' && request.total < STRIPE_MINIMUM_USD_CENTS) {
        throw new PaymentSessionRefused('Card payments start at $0.50, and this order comes to less.');
      }
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            line_items: lineItems(request),
            shipping_options: [
              {
                shipping_rate_data: {
                  type: 'fixed_amount',
                  display_name: request.shipping.title.slice(0, 100) || 'Shipping',
                  fixed_amount: { amount: request.shipping.amount, currency },
                },
              },
            ],
            customer_email: request.buyerEmail,
            client_reference_id: request.checkoutId,
            metadata,
            payment_intent_data: { capture_method: 'manual', metadata },
            expires_at: toSeconds(request.expiresAt),
            success_url: request.successUrl,
            cancel_url: request.cancelUrl,
          },
          { idempotencyKey: request.idempotencyKey },
        );
      } catch (error) {
        // Stripe answered and refused (not a lost answer, not Stripe down): asking again gives the same answer.
        if (refusalOf(error)) throw new PaymentSessionRefused('The card payment page refused this order.');
        throw error;
      }
      if (!session.url) throw new Error('Stripe answered a Checkout Session without a URL');
      return { kind: 'redirect', url: session.url, sessionId: session.id, expiresAt: new Date(session.expires_at * 1000) };
    },

    async expire(sessionId) {
      try {
        await stripe.checkout.sessions.expire(sessionId);
        return 'expired';
      } catch (error) {
        // Stripe refuses to expire a session that is not open: it completed (paid) or expired already.
        if (!refusalOf(error)) throw error;
        const session = await stripe.checkout.sessions.retrieve(sessionId);
        return session.status === 'complete' ? 'completed' : 'expired';
      }
    },

    async confirm(sessionId, expected): Promise<SessionOutcome> {
      const session = await stripe.checkout.sessions.retrieve(sessionId, { expand: ['payment_intent'] });
      if (session.status === 'expired') return { kind: 'closed', reason: 'the payment page expired before the buyer paid' };
      if (session.status !== 'complete') return { kind: 'open' };
      const intent = typeof session.payment_intent === 'object' ? session.payment_intent : null;
      if (!intent) return { kind: 'open' };
      const checkoutId = session.metadata?.[CHECKOUT_KEY] ?? '';
      const digest = session.metadata?.[DIGEST_KEY] ?? '';
      if (intent.status === 'canceled') return { kind: 'closed', reason: 'the payment was canceled' };
      const held = intent.status === 'requires_capture';
      const reference = held ? intent.id : null;
      if (!held) return { kind: 'mismatch', reason: `the payment is ${intent.status.replace(/_/g, ' ')}, not held for capture`, reference };
      if (intent.capture_method !== 'manual') return { kind: 'mismatch', reason: 'the payment is not held for capture', reference };
      if (intent.amount !== expected.amount || intent.amount_capturable !== expected.amount || intent.currency !== expected.currency.toLowerCase()) {
        return { kind: 'mismatch', reason: 'the payment is not for the approved amount', reference };
      }
      if (checkoutId !== expected.checkoutId || digest !== expected.digest || intent.metadata?.[CHECKOUT_KEY] !== checkoutId || intent.metadata?.[DIGEST_KEY] !== digest) {
        return { kind: 'mismatch', reason: 'the payment is not for what the buyer approved', reference };
      }
      return {
        kind: 'authorized',
        checkoutId,
        digest,
        reference: intent.id,
        amount: intent.amount,
        currency: intent.currency.toUpperCase(),
        authorizedUntil: new Date(intent.created * 1000 + AUTHORIZATION_DAYS * DAY_MS),
      };
    },

    start(order, authorization): PaymentStart {
      if (!authorization) throw new Error('a Stripe order is placed only with a confirmed authorization');
      return {
        provider: 'stripe',
        state: 'authorized',
        authorized: authorization.amount,
        authorizedUntil: authorization.authorizedUntil,
        dueAt: null,
        instructions: null,
        reference: authorization.reference,
      };
    },

    capture: (operation: ProviderOperation) =>
      move(async () => {
        const intent = await stripe.paymentIntents.capture(operation.reference ?? '', { amount_to_capture: operation.amount }, { idempotencyKey: operation.idempotencyKey });
        return typeof intent.latest_charge === 'string' ? intent.latest_charge : null;
      }, holdGone),

    async cancel(operation: ProviderOperation) {
      // Nothing held (no PaymentIntent yet): nothing to release.
      if (!operation.reference) return { ok: true, providerReference: null };
      const outcome = await move(async () => {
        await stripe.paymentIntents.cancel(operation.reference!, { cancellation_reason: 'requested_by_customer' }, { idempotencyKey: operation.idempotencyKey });
        return null;
      }, holdGone);
      if (outcome.ok || !outcome.holdGone) return outcome;
      // Refused because it is no longer cancelable: released already (canceled, lapsed) is what was asked.
      const intent = await stripe.paymentIntents.retrieve(operation.reference);
      return intent.status === 'canceled' ? { ok: true, providerReference: null } : outcome;
    },

    refund: (operation: ProviderOperation) =>
      move(async () => {
        const refund = await stripe.refunds.create({ payment_intent: operation.reference ?? '', amount: operation.amount }, { idempotencyKey: operation.idempotencyKey });
        return refund.id;
      }, () => false),

    readEvent(rawBody, signature): ProviderEvent {
      if (!signature) throw new WebhookRefused('the request has no Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signature, options.webhookSecret);
      } catch (error) {
        throw new WebhookRefused(error instanceof Error ? error.message.slice(0, 200) : 'the signature could not be verified');
      }
      return providerEvent(event);
    },
  };
}

/** A verified Stripe event as the port's event; what the store does not act on is `ignored`. */
function providerEvent(event: Stripe.Event): ProviderEvent {
  const { id } = event;
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.expired': {
      const session = event.data.object;
      const checkoutId = session.metadata?.[CHECKOUT_KEY] ?? null;
      return { id, type: event.type === 'checkout.session.completed' ? 'session_completed' : 'session_expired', sessionId: session.id, checkoutId };
    }
    case 'payment_intent.canceled':
      return { id, type: 'payment_canceled', reference: event.data.object.id };
    case 'payment_intent.payment_failed': {
      const intent = event.data.object;
      return { id, type: 'payment_failed', reference: intent.id, reason: intent.last_payment_error?.message ?? 'the payment failed' };
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      const reference = typeof charge.payment_intent === 'string' ? charge.payment_intent : (charge.payment_intent?.id ?? null);
      if (!reference) return { id, type: 'ignored', providerType: event.type };
      // Stripe counts a released part of a hold as refunded too (a partial capture, a canceled authorization):
      // only what goes back beyond the uncaptured part was captured money given back.
      const released = charge.amount - charge.amount_captured;
      return { id, type: 'refunded', reference, refundedTotal: Math.max(0, charge.amount_refunded - released) };
    }
    case 'charge.dispute.created': {
      const dispute = event.data.object;
      const reference = typeof dispute.payment_intent === 'string' ? dispute.payment_intent : (dispute.payment_intent?.id ?? null);
      if (!reference) return { id, type: 'ignored', providerType: event.type };
      return { id, type: 'disputed', reference, amount: dispute.amount, reason: dispute.reason };
    }
    default:
      return { id, type: 'ignored', providerType: event.type };
  }
}
