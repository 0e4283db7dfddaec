/**
 * The approval with a hosted payment page (a provider that holds the buyer's money: Stripe). The buyer's proof is
 * given first, as with any approval; then, instead of placing the order at once:
 *
 *  1. `beginPayment`: in one transaction the link and checkout are locked and re-checked, the proof consumed, the
 *     approval marked proven (how, when) and the checkout moved to complete_in_progress; after the commit the
 *     provider's session is created (outside any transaction) and the buyer sent to its page. A buyer who comes back
 *     to the approval page while the session still takes payment is sent to the same page again, without another
 *     proof; once it ran out, a new session is begun (the attempt's number makes its idempotency key).
 *  2. `completePayment`, on the buyer's return and on the provider's `session completed` event, whichever comes first:
 *     the provider is asked (outside any transaction) whether it holds exactly the approved amount for this checkout
 *     and digest, and only then the order is placed (order-placement.ts) with the proof already given and the hold's
 *     facts. One approval link places at most one order, so the return and the event racing place one. If the order
 *     can no longer be placed (stock sold out, the link or checkout ran out or changed), the hold is released, the
 *     checkout goes back to what its information says (its link void) and the buyer reads why.
 *  3. `paymentLeft`: the buyer left the payment page without paying (its cancel link), or it expired: the checkout
 *     waits for the buyer again, and the approval page still works.
 */
import { createHash } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { STORE_CURRENCY } from '../catalog/types.js';
import { readOrder, type Order } from '../orders/orders.js';
import { PaymentSessionRefused, type PaymentProvider, type PaymentSessionRequest } from '../payments/payment-provider.js';
import { approvalSentence, approvalVerdict } from './approval-validity.js';
import type { ProvenBy } from './buyer-proof.js';
import { approvalSummary, checkoutDigest, describeChanges, informationStatus, itemsSoldOut, type ApprovalSummary } from './checkout.js';
import { endPaymentSession, markApprovalProven, readApproval, readApprovalByPaymentSession, readCheckout, readPendingApproval, recordPaymentSession, voidApproval, type ApprovalRecord } from './checkout-store.js';
import type { MoveCode } from './machine.js';
import { placeApprovedOrder, PROVEN_BY_WORDS, type PlacementParts } from './order-placement.js';

/** What paying needs besides placing: the provider, where the buyer comes back to, what runs after an order is placed. */
export interface PaymentParts extends PlacementParts {
  provider: PaymentProvider;
  /** BASE_URL: the success and cancel URLs are the approval link's. */
  baseUrl: string;
  /** How long a hosted payment page takes payment (the provider's minimum and a margin). */
  sessionLifetimeMs: number;
  /** After an order was placed by a payment (CAPTURE_ON=approval captures at once). */
  afterPlacement?: (db: Database, order: Order) => Promise<unknown>;
}

export type PaymentBegun =
  /** Send the buyer to the provider's page (a 303). */
  | { kind: 'redirect'; url: string }
  | { kind: 'placed'; order: Order; enrollment?: string }
  | { kind: 'refused'; reason: string; changes: string[] }
  /** The provider could not be reached: nothing is held; the approval stays proven, the page asks again. */
  | { kind: 'unavailable'; reason: string };

export type PaymentCompleted =
  | { kind: 'placed'; order: Order; placedNow: boolean; enrollment?: string }
  /** Not paid yet (still on the page, or back without paying). */
  | { kind: 'open' }
  | { kind: 'refused'; reason: string; changes: string[] }
  /** No approval sent the buyer to this session (another store's, an old attempt's): nothing to do. */
  | { kind: 'unknown' };

/** A session still taking payment for this long is reused rather than begun again. */
const REUSE_MARGIN_MS = 5 * 60 * 1000;
const UNAVAILABLE = 'The payment page could not be opened just now, so nothing was charged. Try again in a moment.';
const RELEASED = 'The hold on your card was released.';

/** The payment page the approval sends the buyer back to: its session while it takes payment long enough to pay. */
export function reusablePaymentSession(approval: ApprovalRecord, now: Date): ApprovalRecord['paymentSession'] {
  const session = approval.paymentSession;
  return session !== null && session.expiresAt.getTime() - now.getTime() > REUSE_MARGIN_MS ? session : null;
}

/** The approval link's own path (the success and cancel URLs are under it). */
export const paymentReturnPath = (token: string) => `/checkout/approve/${token}/paid`;
export const paymentCancelPath = (token: string) => `/checkout/approve/${token}/payment-canceled`;

/** An idempotency key per approval and attempt, which names neither the link nor the buyer. */
const sessionKey = (token: string, attempt: number) => `storefront_session_${createHash('sha256').update(token).digest('base64url').slice(0, 32)}_${attempt}`;

/** What the buyer approved, as the provider's page lists it: each line at its unit price (its total when they disagree), shipping and tax. */
function sessionLines(summary: ApprovalSummary): PaymentSessionRequest['lines'] {
  return summary.lines.map((line) =>
    line.unitPrice * line.quantity === line.lineTotal
      ? { title: line.title, quantity: line.quantity, unitAmount: line.unitPrice }
      : { title: `${line.title} × ${line.quantity}`, quantity: 1, unitAmount: line.lineTotal },
  );
}

/**
 * After the buyer's proof (`confirm`, inside the transaction; not asked again of an approval already proven): the
 * checkout in progress and the buyer sent to the provider's page.
 */
export async function beginPayment(
  db: Database,
  parts: PaymentParts,
  request: { token: string; digest: string; formSecret: string; confirm(tx: Queryable, approval: ApprovalRecord): Promise<ProvenBy> },
  /** The session begun before was just closed at the provider: begin another. */
  ended = false,
): Promise<PaymentBegun> {
  const { checkouts } = parts;
  const { token } = request;
  const prepared = await db.transaction(async (tx) => {
    const link = await readApproval(tx, token, { lock: true });
    const verdict = approvalVerdict(link, link && (await readCheckout(tx, link.checkoutId, { lock: true })), checkouts.now(), request.formSecret);
    if (verdict.code === 'used') return { kind: 'used' as const, orderId: verdict.orderId };
    if (verdict.code !== 'valid') return { kind: 'refused' as const, reason: approvalSentence(verdict), changes: [] };
    const { approval, checkout } = verdict;
    const view = checkouts.view(checkout);
    const summary = approvalSummary(view);
    if (checkoutDigest(summary) !== approval.digest || request.digest !== approval.digest) {
      return { kind: 'refused' as const, reason: 'The checkout changed after this page was shown. Review it again.', changes: describeChanges(approval.summary, summary) };
    }
    if (view.blockers.length > 0) {
      const reason = view.blockers.map((b) => b.content).join(' ');
      // Items sold out since the page was shown: the checkout goes back to the agent now, saying so (nothing was paid).
      if (checkout.status === 'requires_escalation' && itemsSoldOut(view)) {
        await checkouts.apply(tx, checkout, { to: informationStatus(view), actor: 'system', reason, code: 'sold_out_at_approval' });
      }
      return { kind: 'refused' as const, reason, changes: [] };
    }
    const now = checkouts.now();
    const session = approval.paymentSession;
    const reuse = reusablePaymentSession(approval, now);
    // A session about to end still takes payment: it is closed at the provider before another is begun (below), so
    // the buyer can never pay two.
    if (!ended && session !== null && reuse === null && session.expiresAt > now) return { kind: 'ending' as const, sessionId: session.id };
    const provenBy = approval.provenBy ?? (await request.confirm(tx, approval));
    // A session being begun by another request (no URL yet) keeps its attempt, so both ask with the same key.
    const pending = session === null && approval.paymentSessionExpiresAt !== null && approval.paymentSessionExpiresAt.getTime() - now.getTime() > parts.sessionLifetimeMs - REUSE_MARGIN_MS;
    if (!reuse && !pending) await markApprovalProven(tx, token, provenBy, new Date(now.getTime() + parts.sessionLifetimeMs));
    if (checkout.status === 'requires_escalation') {
      await checkouts.apply(
        tx,
        checkout,
        { to: 'complete_in_progress', actor: 'buyer', reason: `approved by the buyer on the approval page (${PROVEN_BY_WORDS[provenBy]}); paying on the payment page` },
        { approvedByBuyer: true },
      );
    }
    return { kind: 'ready' as const, approval: (await readApproval(tx, token))!, reuse };
  });
  if (prepared.kind === 'used') return { kind: 'placed', order: (await readOrder(db, prepared.orderId))! };
  if (prepared.kind === 'refused') return prepared;
  if (prepared.kind === 'ending') {
    let closed: 'expired' | 'completed';
    try {
      closed = await parts.provider.expire(prepared.sessionId);
    } catch {
      return { kind: 'unavailable', reason: UNAVAILABLE };
    }
    if (closed === 'completed') {
      // The buyer paid it meanwhile (another tab): that payment is the approval's.
      const completed = await completePayment(db, parts, prepared.sessionId, token);
      if (completed.kind === 'placed') return { kind: 'placed', order: completed.order, enrollment: completed.enrollment };
      if (completed.kind === 'refused') return completed;
      return { kind: 'unavailable', reason: UNAVAILABLE };
    }
    await endPaymentSession(db, prepared.sessionId);
    return beginPayment(db, parts, request, true);
  }
  if (prepared.reuse) return { kind: 'redirect', url: prepared.reuse.url };
  const { approval } = prepared;
  const summary = approval.summary;
  let step;
  try {
    step = await parts.provider.begin({
      checkoutId: approval.checkoutId,
      digest: approval.digest,
      idempotencyKey: sessionKey(token, approval.paymentAttempts),
      currency: STORE_CURRENCY,
      buyerEmail: summary.email,
      lines: sessionLines(summary),
      shipping: { title: summary.shipping.title, amount: summary.shipping.amount },
      tax: summary.totals.tax ?? 0,
      total: summary.totals.total,
      expiresAt: approval.paymentSessionExpiresAt!,
      successUrl: `${parts.baseUrl}${paymentReturnPath(token)}?session_id={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${parts.baseUrl}${paymentCancelPath(token)}`,
      metadata: {},
    });
  } catch (error) {
    // Nothing is held: the checkout waits for the buyer again (still proven), and the page offers to try again, or
    // says why trying again would not help.
    await paymentLeft(db, parts, token, 'the payment page could not be opened');
    if (error instanceof PaymentSessionRefused) {
      return { kind: 'refused', reason: `The payment page could not be opened for this order: ${error.message} Nothing was charged; contact the store.`, changes: [] };
    }
    return { kind: 'unavailable', reason: UNAVAILABLE };
  }
  if (step.kind !== 'redirect') throw new Error(`the ${parts.provider.name} provider sends the buyer to no payment page`);
  await recordPaymentSession(db, token, { id: step.sessionId, url: step.url, expiresAt: step.expiresAt });
  return { kind: 'redirect', url: step.url };
}

/**
 * The buyer came back from the payment page, or the provider says the session completed: the hold checked, then the
 * order placed; or the hold released and why.
 */
export async function completePayment(db: Database, parts: PaymentParts, sessionId: string, token?: string): Promise<PaymentCompleted> {
  const approval = await readApprovalByPaymentSession(db, sessionId);
  // The return names its approval link: another link's session is not this one's.
  if (!approval || (token !== undefined && approval.token !== token)) return { kind: 'unknown' };
  // Placed already (the return after the event, a reload): its order, without asking the provider again.
  if (approval.usedAt !== null) {
    const before = approvalVerdict(approval, await readCheckout(db, approval.checkoutId), parts.checkouts.now());
    if (before.code === 'used') return { kind: 'placed', order: (await readOrder(db, before.orderId))!, placedNow: false };
  }
  const { totals } = approval.summary;
  const outcome = await parts.provider.confirm(sessionId, { amount: totals.total, currency: STORE_CURRENCY, checkoutId: approval.checkoutId, digest: approval.digest });
  if (outcome.kind === 'open') return { kind: 'open' };
  if (outcome.kind === 'closed') {
    await endPaymentSession(db, sessionId);
    await paymentLeft(db, parts, approval.token, outcome.reason);
    return { kind: 'refused', reason: 'The payment was not completed, so nothing was charged. You can approve and pay again on this page.', changes: [] };
  }
  if (outcome.kind === 'mismatch') {
    await release(db, parts, approval, outcome.reference, outcome.reason, 'The payment did not match the order you approved.');
    return { kind: 'refused', reason: `The payment did not match the order you approved, so the order was not placed. ${RELEASED}`, changes: [] };
  }
  const placement = await placeApprovedOrder(db, parts, {
    token: approval.token,
    digest: approval.digest,
    // The proof was given before the buyer was sent to pay.
    confirm: async (_tx, proven) => proven.provenBy ?? 'link',
    authorization: { reference: outcome.reference, amount: outcome.amount, currency: outcome.currency, authorizedUntil: outcome.authorizedUntil },
  });
  if (placement.kind === 'placed') {
    if (placement.placedNow) await parts.afterPlacement?.(db, placement.order);
    return { kind: 'placed', order: placement.order, placedNow: placement.placedNow, enrollment: placement.enrollment };
  }
  await release(db, parts, approval, outcome.reference, placement.reason, placement.reason, placement.code);
  return { kind: 'refused', reason: `${placement.reason.replace(/ Nothing was ordered or charged\.?$/, '').replace(/,? so nothing was ordered or charged\./, '.')} ${RELEASED}`, changes: placement.changes };
}

/**
 * The buyer left the payment page without paying (its cancel link), it expired, or it could not be opened: the
 * checkout, still in progress, waits for the buyer again; the approval keeps its proof and, while it takes payment,
 * its session. A checkout that ran out meanwhile is canceled (expired) instead.
 */
export async function paymentLeft(db: Database, parts: PaymentParts, token: string, reason: string): Promise<void> {
  const approval = await readApproval(db, token);
  if (!approval) return;
  await parts.checkouts.change(db, approval.checkoutId, (locked) => {
    if (locked.status !== 'complete_in_progress' || approval.usedAt !== null) return undefined;
    if (parts.checkouts.view(locked).expired) return { to: 'canceled', actor: 'system', reason: 'expired', code: 'checkout_expired' };
    return { to: 'requires_escalation', actor: 'system', reason: `back to the buyer: ${reason}` };
  });
}

/** The provider says a session expired: the approval that sent the buyer there (if it is still this one's) waits again. */
export async function paymentSessionExpired(db: Database, parts: PaymentParts, sessionId: string): Promise<boolean> {
  const approval = await readApprovalByPaymentSession(db, sessionId);
  if (!approval) return false;
  await endPaymentSession(db, sessionId);
  await paymentLeft(db, parts, approval.token, 'the payment page expired');
  return true;
}

/**
 * The order cannot be placed with this hold: first, in one transaction, this approval's link is voided (so nothing
 * places an order with it any more) and its checkout, if this approval is the one it is in progress for, goes back
 * to what its information says (canceled if it ran out); then the hold is released (asked again with the same key if
 * the provider does not answer: a failure here is thrown for the caller's retry). A hold that an order of this
 * checkout was placed with meanwhile (the webhook and the return racing) is that order's, and is left alone.
 */
async function release(
  db: Database,
  parts: PaymentParts,
  approval: ApprovalRecord,
  reference: string | null,
  reason: string,
  voidReason = reason,
  /** Why the checkout goes back, as a client is told (items sold out as the buyer approved). */
  code?: MoveCode,
): Promise<void> {
  const { totals } = approval.summary;
  const ordered = await db.transaction(async (tx) => {
    const link = await readApproval(tx, approval.token, { lock: true });
    if (reference !== null) {
      const placed = await tx.query('select 1 from orders where checkout_id = $1 and payment_reference = $2', [approval.checkoutId, reference]);
      if (placed.length > 0) return true;
    }
    if (!link || link.usedAt !== null) return false;
    const current = await readPendingApproval(tx, approval.checkoutId);
    await voidApproval(tx, approval.token, voidReason);
    const locked = await readCheckout(tx, approval.checkoutId, { lock: true });
    // Another approval of the checkout (the agent changed it, the buyer was asked again) is not this payment's to move.
    if (!locked || current?.token !== approval.token) return false;
    if (locked.status === 'complete_in_progress' || locked.status === 'requires_escalation') {
      if (parts.checkouts.view(locked).expired) {
        await parts.checkouts.apply(tx, locked, { to: 'canceled', actor: 'system', reason: 'expired', code: 'checkout_expired' });
        return false;
      }
      const waiting =
        locked.status === 'complete_in_progress'
          ? await parts.checkouts.apply(tx, locked, { to: 'requires_escalation', actor: 'system', reason: `the payment's hold was released: ${reason}` })
          : locked;
      await parts.checkouts.apply(tx, waiting, { to: informationStatus(parts.checkouts.view(waiting)), actor: 'system', reason: voidReason, code });
    }
    return false;
  });
  if (ordered) return;
  const outcome = await parts.provider.cancel({
    reference,
    amount: totals.total,
    currency: STORE_CURRENCY,
    idempotencyKey: `storefront_release_${createHash('sha256').update(`${approval.token}:${reference ?? ''}`).digest('base64url').slice(0, 32)}`,
  });
  if (!outcome.ok) throw new Error(`the payment provider refused to release a hold: ${outcome.reason.slice(0, 200)}`);
}
