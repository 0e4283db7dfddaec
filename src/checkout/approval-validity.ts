/**
 * Whether an approval link still places an order, decided in one place: the approval page's state, the buyer's
 * approve and decline, the placement's re-check inside its transaction and the settling of a checkout whose link
 * ran out all ask approvalVerdict, and every verdict reads as one sentence (APPROVAL_SENTENCES), whichever of
 * them asked. No I/O here.
 */
import { timingSafeEqual } from 'node:crypto';
import type { CheckoutRecord } from './checkout.js';
import type { ApprovalRecord } from './checkout-store.js';
import type { CheckoutStatus } from './machine.js';

export type ApprovalVerdict =
  /** The link places the order when the buyer approves: the link and its checkout, as read. */
  | { code: 'valid'; approval: ApprovalRecord; checkout: CheckoutRecord }
  /** No such link, or its checkout is gone. */
  | { code: 'unknown' }
  /** The form answered is not this link's (a page from before, or one made elsewhere). */
  | { code: 'wrong_form' }
  /** The link placed its order. */
  | { code: 'used'; orderId: string }
  /** The link was voided; `reason`, why, as it was written down then (one of the sentences below, mostly). */
  | { code: 'voided'; reason: string | null }
  | { code: 'expired' }
  /** The checkout no longer waits for the buyer (nor for the payment of a buyer who proved it was them). */
  | { code: 'closed'; status: CheckoutStatus };

/** What the buyer reads, for each verdict but `valid`, and why a link is voided when that is about the link. */
export const APPROVAL_SENTENCES = {
  unknown: 'This approval link is not valid.',
  wrong_form: 'This form has expired. Reload the page.',
  used: 'This order was already placed.',
  /** A voided link whose reason was not written down. */
  voided: 'This approval link is no longer valid.',
  expired: 'This approval link has expired.',
  /** Void reasons: a newer link for the same checkout; the checkout changed under the link. */
  superseded: 'A newer approval link was issued for this checkout; use the latest link you were given.',
  changed: 'The checkout was changed after this approval link was issued.',
} as const;

/**
 * The link's verdict, in this order: unknown, wrong form (when a form secret is given: a caller with no form, a
 * webhook, gives none), used, voided, expired, closed, valid.
 */
export function approvalVerdict(approval: ApprovalRecord | undefined, checkout: CheckoutRecord | undefined, now: Date, formSecret?: string): ApprovalVerdict {
  if (!approval || !checkout) return { code: 'unknown' };
  if (formSecret !== undefined && !sameSecret(approval.formSecret, formSecret)) return { code: 'wrong_form' };
  if (approval.usedAt && checkout.orderId) return { code: 'used', orderId: checkout.orderId };
  if (approval.voidedAt) return { code: 'voided', reason: approval.voidReason };
  // The link, or the checkout it approves (which may end first), ran out.
  if (approval.expiresAt <= now || (checkout.status !== 'completed' && checkout.status !== 'canceled' && checkout.expiresAt <= now)) return { code: 'expired' };
  // With a hosted payment page the buyer proves it is them, then pays: the link still places the order meanwhile.
  const paying = checkout.status === 'complete_in_progress' && approval.provenAt !== null;
  if (checkout.status !== 'requires_escalation' && !paying) return { code: 'closed', status: checkout.status };
  return { code: 'valid', approval, checkout };
}

/** The one sentence a verdict reads as. */
export function approvalSentence(verdict: Exclude<ApprovalVerdict, { code: 'valid' }>): string {
  switch (verdict.code) {
    case 'voided':
      return verdict.reason ?? APPROVAL_SENTENCES.voided;
    case 'closed':
      return `This checkout is ${verdict.status.replace(/_/g, ' ')}.`;
    default:
      return APPROVAL_SENTENCES[verdict.code];
  }
}

/** Two secrets compared in constant time. */
function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
