/**
 * The approval: everything the buyer's link does. What the approval page shows for a link (the checkout to
 * approve, the order it placed, or why it no longer works), the buyer's approval (their proof, then the order
 * placed: order-placement.ts) and their decline (the checkout canceled). The checkout's own moves are the
 * checkout service's (checkout-service.ts).
 */
import type { Database } from '../db/database.js';
import { readOrder, type Order } from '../orders/orders.js';
import { ProofRefused, type ApprovalProof, type ProvenBy } from './buyer-proof.js';
import { approvalSummary, checkoutDigest, describeChanges, type CheckoutRecord, type CheckoutView } from './checkout.js';
import type { CheckoutService, CheckoutServiceOptions } from './checkout-service.js';
import { readApproval, readCheckout, type ApprovalRecord } from './checkout-store.js';
import { CheckoutRefused } from './machine.js';
import { placeApprovedOrder, sameSecret, type PlacementParts } from './order-placement.js';

/** What the approval page shows for a link. */
export type ApprovalState =
  | { kind: 'pending'; approval: ApprovalRecord; view: CheckoutView }
  | { kind: 'completed'; order: Order }
  | { kind: 'closed'; reason: string; changes: string[]; view: CheckoutView | undefined }
  | { kind: 'unknown' };

/** `placedNow`: this approval placed the order (false when the page was approved again after it was placed). */
export type ApprovalOutcome =
  | { kind: 'placed'; order: Order; placedNow: boolean; provenBy?: ProvenBy; enrollment?: string }
  | { kind: 'declined' }
  | { kind: 'refused'; reason: string; changes: string[] }
  /** The proof was missing or not accepted: the page asks again, nothing else changed. */
  | { kind: 'unproven'; reason: string };

/** The order a used approval link placed, once its checkout has it. */
async function placedOrder(db: Database, approval: ApprovalRecord, checkout: CheckoutRecord): Promise<Order | undefined> {
  return approval.usedAt && checkout.orderId ? readOrder(db, checkout.orderId) : undefined;
}

export class ApprovalService {
  private readonly placement: PlacementParts;

  constructor(
    private readonly checkouts: CheckoutService,
    private readonly options: CheckoutServiceOptions,
  ) {
    this.placement = { ...options, checkouts };
  }

  /** What the approval page shows for a link: the checkout to approve, the order it placed, or why it is closed. */
  async approvalState(db: Database, token: string): Promise<ApprovalState> {
    const approval = await readApproval(db, token);
    if (!approval) return { kind: 'unknown' };
    const stored = await readCheckout(db, approval.checkoutId);
    if (!stored) return { kind: 'unknown' };
    const placed = await placedOrder(db, approval, stored);
    if (placed) return { kind: 'completed', order: placed };
    const record = await this.checkouts.settle(db, stored);
    const view = this.checkouts.view(record);
    const fresh = (await readApproval(db, token))!;
    // Another approval of this link may have placed the order between the first two reads (on PostgreSQL each is a
    // statement of its own): the checkout then reads completed while the approval read before it was unused.
    const placedMeanwhile = await placedOrder(db, fresh, record);
    if (placedMeanwhile) return { kind: 'completed', order: placedMeanwhile };
    if (fresh.voidedAt) return { kind: 'closed', reason: fresh.voidReason ?? 'This approval link is no longer valid.', changes: this.changes(fresh, view), view };
    if (fresh.expiresAt <= this.checkouts.now()) return { kind: 'closed', reason: 'This approval link has expired. Ask your agent for a new one.', changes: [], view };
    if (record.status !== 'requires_escalation') return { kind: 'closed', reason: `This checkout is ${record.status.replace(/_/g, ' ')}.`, changes: [], view };
    return { kind: 'pending', approval: fresh, view };
  }

  private changes(approval: ApprovalRecord, view: CheckoutView): string[] {
    const now = approvalSummary(view);
    return checkoutDigest(now) === approval.digest ? [] : describeChanges(approval.summary, now);
  }

  /**
   * The buyer approves what the page showed: their proof, then the order placed in one transaction
   * (order-placement.ts: the link and checkout re-checked, stock, order, payment, outbox). Any failure keeps
   * nothing; the refusal says why in words for the buyer.
   */
  async approve(db: Database, token: string, formSecret: string, shownDigest: string, proof: ApprovalProof): Promise<ApprovalOutcome> {
    const state = await this.approvalState(db, token);
    if (state.kind === 'completed') return { kind: 'placed', order: state.order, placedNow: false };
    if (state.kind === 'unknown') return { kind: 'refused', reason: 'This approval link is not valid.', changes: [] };
    if (state.kind === 'closed') return { kind: 'refused', reason: state.reason, changes: state.changes };
    const { buyerProof } = this.options;
    try {
      // A typed code is checked (and a wrong one counted) before anything else, in a transaction of its own.
      const checkedCodeId = proof.kind === 'code' && buyerProof.mode !== 'link' ? await buyerProof.checkCode(db, state.approval, proof.code) : undefined;
      return await placeApprovedOrder(db, this.placement, {
        token,
        digest: shownDigest,
        formSecret,
        confirm: (tx, approval, checkout) => buyerProof.consume(tx, approval, checkout.buyer.email!, proof, checkedCodeId),
      });
    } catch (error) {
      if (error instanceof ProofRefused) return { kind: 'unproven', reason: error.message };
      throw error;
    }
  }

  /** The buyer declines: the checkout is canceled. */
  async decline(db: Database, token: string, formSecret: string): Promise<ApprovalOutcome> {
    const approval = await readApproval(db, token);
    if (!approval || !sameSecret(approval.formSecret, formSecret)) return { kind: 'refused', reason: 'This form has expired. Reload the page.', changes: [] };
    if (approval.usedAt) return { kind: 'refused', reason: 'This order was already placed.', changes: [] };
    // Only the link the buyer is being asked about may cancel: a stale page must not cancel a newer version.
    if (approval.voidedAt) return { kind: 'refused', reason: approval.voidReason ?? 'This approval link is no longer valid.', changes: [] };
    if (approval.expiresAt <= this.checkouts.now()) return { kind: 'refused', reason: 'This approval link has expired.', changes: [] };
    try {
      await this.checkouts.cancel(db, approval.checkoutId, 'buyer', 'declined by the buyer on the approval page');
    } catch (error) {
      if (error instanceof CheckoutRefused) return { kind: 'refused', reason: error.message, changes: [] };
      throw error;
    }
    return { kind: 'declined' };
  }
}
