/**
 * The payment provider's webhook, `POST /payments/stripe/webhook`: a thin door. The raw body (not parsed: the
 * signature is over its bytes) and its Stripe-Signature header go to the provider, whose SDK verifies them against
 * STRIPE_WEBHOOK_SECRET; a request that is not Stripe's (no or bad signature, a stale timestamp, a tampered body)
 * answers 400 and changes nothing. A verified event is applied once (its id kept in payment_provider_events):
 * a completed payment session places the approved order (as the buyer's return does, whichever comes first), an
 * expired one gives the checkout back to the buyer, and the events about an order's payment (a hold canceled, a
 * failure, a refund made in Stripe's dashboard, a dispute) go to the order's actions. Unknown events are
 * acknowledged and ignored. The log names the event's type and what was done, never its ids.
 */
import type { FastifyPluginAsync } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.js';
import { ErrorMessage, sendError } from '../http/errors.js';
import { WebhookRefused, type ProviderEvent } from '../payments/payment-provider.js';
import type { Store } from '../store.js';

export const STRIPE_WEBHOOK_PATH = '/payments/stripe/webhook';
/** Stripe's events are a few kilobytes; a session with many lines somewhat more. */
const WEBHOOK_BODY_LIMIT = 512 * 1024;

/** What the store did with an event. */
type Handled = 'applied' | 'duplicate' | 'ignored' | 'not_for_orders' | 'placed' | 'already_placed' | 'refused' | 'not_paid' | 'released' | 'unknown_session';

export const stripeWebhookRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { db, approvals, orders, paymentProvider } = store;
  // In this plugin's scope only: every body is kept as the bytes that were signed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  /** A session event of this store's approvals: applied once, after it was handled (handling is idempotent). */
  async function sessionEvent(event: Extract<ProviderEvent, { type: 'session_completed' | 'session_expired' }>): Promise<Handled> {
    const seen = await db.query('select 1 from payment_provider_events where provider = $1 and event_id = $2', [paymentProvider.name, event.id]);
    if (seen.length > 0) return 'duplicate';
    let handled: Handled;
    if (event.type === 'session_completed') {
      const outcome = await approvals.completePayment(db, event.sessionId);
      handled = outcome.kind === 'placed' ? (outcome.placedNow ? 'placed' : 'already_placed') : outcome.kind === 'open' ? 'not_paid' : outcome.kind === 'unknown' ? 'unknown_session' : 'refused';
    } else {
      handled = (await approvals.paymentSessionExpired(db, event.sessionId)) ? 'released' : 'unknown_session';
    }
    await db.query('insert into payment_provider_events (provider, event_id, type) values ($1, $2, $3) on conflict do nothing', [paymentProvider.name, event.id, event.type]);
    return handled;
  }

  app.post(STRIPE_WEBHOOK_PATH, { config: { rateLimit: 'other' }, schema: { hide: true } }, async (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const signature = request.headers['stripe-signature'];
    let event: ProviderEvent;
    try {
      event = paymentProvider.readEvent(raw, typeof signature === 'string' ? signature : undefined);
    } catch (error) {
      if (!(error instanceof WebhookRefused)) throw error;
      request.log.warn('payment webhook refused: its signature could not be verified');
      return sendError(reply, 400, ErrorMessage.badRequest, 'The webhook signature could not be verified; nothing was changed.');
    }
    let handled: Handled;
    try {
      handled = event.type === 'session_completed' || event.type === 'session_expired' ? await sessionEvent(event) : await orders.applyProviderEvent(db, event);
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      // Stripe did not answer the store's questions (or refused to release a hold): Stripe delivers the event again.
      request.log.warn({ event_type: event.type, cause: (error as Error)?.name ?? 'error' }, 'payment webhook not handled yet; Stripe will deliver it again');
      return sendError(reply, 503, ErrorMessage.unavailable, 'The event could not be handled yet; deliver it again.');
    }
    request.log.info({ event_type: event.type === 'ignored' ? event.providerType : event.type, handled }, 'payment webhook');
    return reply.send({ received: true, handled });
  });
};
