/**
 * The approval: everything the buyer's link does. What the approval page shows for a link (the checkout to
 * approve, the order it placed, or why it no longer works), the buyer's approval (their proof, then the order
 * placed: order-placement.ts) and their decline (the checkout canceled). The checkout's own moves are the
 * checkout service's (checkout-service.ts).
 */
import type { Database } from '../db/database.js';
import { readOrder, type Order } from '../orders/orders.js';
import { ProofRefused, type ApprovalProof, type ProvenBy } from './buyer-proof.js';
import { approvalSummary, checkoutDigest, describeChanges, type CheckoutView } from './checkout.js';
import type { CheckoutService, CheckoutServiceOptions } from './checkout-service.js';
import { readApproval, readCheckout, type ApprovalRecord } from './checkout-store.js';
import { approvalSentence, approvalVerdict, type ApprovalVerdict } from './approval-validity.js';
import { CheckoutRefused } from './machine.js';
import { placeApprovedOrder, type OrderPlacedHook, type PlacementParts } from './order-placement.js';
import { beginPayment, completePayment, paymentLeft, paymentSessionExpired, type PaymentCompleted, type PaymentParts } from './approval-payment.js';

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
  | { kind: 'unproven'; reason: string }
  /** With a hosted payment page: the buyer proved it is them and pays there next (the approval page links to it). */
  | { kind: 'paying'; url: string }
  /** The payment page could not be opened (the provider did not answer): nothing held, the page asks again. */
  | { kind: 'unavailable'; reason: string };

/** The order a used approval link placed. */
async function placedOrder(db: Database, verdict: ApprovalVerdict): Promise<Order | undefined> {
  return verdict.code === 'used' ? readOrder(db, verdict.orderId) : undefined;
}

/** What paying on a hosted page needs from the store (store.ts gives it when the provider holds funds). */
export type PaymentSetup = Pick<PaymentParts, 'baseUrl' | 'sessionLifetimeMs' | 'afterPlacement'>;

export class ApprovalService {
  private readonly placement: PlacementParts;
  private paymentParts: PaymentParts | undefined;

  constructor(
    private readonly checkouts: CheckoutService,
    private readonly options: CheckoutServiceOptions,
  ) {
    this.placement = { ...options, checkouts, placedHooks: [] };
  }

  /** Told of every order an approval places, in its transaction (subscriptions). Before or after usePaymentPage alike. */
  afterOrderPlaced(hook: OrderPlacedHook): void {
    this.placement.placedHooks!.push(hook);
  }

  /** A provider holding the buyer's money (Stripe): the approval sends the buyer to its page before the order is placed. */
  usePaymentPage(setup: PaymentSetup): void {
    const provider = this.options.payments.provider;
    this.paymentParts = provider?.holdsFunds ? { ...this.placement, ...setup, provider } : undefined;
  }

  private paying(): PaymentParts {
    if (!this.paymentParts) throw new Error('this store sends no buyer to a payment page');
    return this.paymentParts;
  }

  /** The buyer came back from the payment page, or the provider's event says its session completed. */
  completePayment(db: Database, sessionId: string, token?: string): Promise<PaymentCompleted> {
    return completePayment(db, this.paying(), sessionId, token);
  }

  /** The buyer left the payment page without paying (its cancel link): the approval page works again. */
  async paymentCanceled(db: Database, token: string): Promise<void> {
    await paymentLeft(db, this.paying(), token, 'the buyer left the payment page without paying');
  }

  /** The provider's event: a payment page expired. Whether an approval had sent the buyer there. */
  paymentSessionExpired(db: Database, sessionId: string): Promise<boolean> {
    return paymentSessionExpired(db, this.paying(), sessionId);
  }

  /** What the approval page shows for a link: the checkout to approve, the order it placed, or why it is closed. */
  async approvalState(db: Database, token: string): Promise<ApprovalState> {
    const approval = await readApproval(db, token);
    const stored = approval && (await readCheckout(db, approval.checkoutId));
    const first = approvalVerdict(approval, stored, this.checkouts.now());
    if (first.code === 'unknown') return { kind: 'unknown' };
    const placed = await placedOrder(db, first);
    if (placed) return { kind: 'completed', order: placed };
    // A link that ran out, or whose checkout moved, is settled first: its checkout leaves the buyer's hands.
    const record = await this.checkouts.settle(db, stored!);
    const fresh = (await readApproval(db, token))!;
    // Another approval of this link may have placed the order between the first two reads (on PostgreSQL each is a
    // statement of its own): the checkout then reads completed while the approval read before it was unused.
    const verdict = approvalVerdict(fresh, record, this.checkouts.now());
    const placedMeanwhile = await placedOrder(db, verdict);
    if (placedMeanwhile) return { kind: 'completed', order: placedMeanwhile };
    const view = this.checkouts.view(record);
    if (verdict.code === 'valid') return { kind: 'pending', approval: fresh, view };
    return { kind: 'closed', ...this.refusal(verdict, fresh, view), view };
  }

  /** A verdict as the buyer reads it: its sentence, and for a voided link what changed since it was issued. */
  private refusal(verdict: Exclude<ApprovalVerdict, { code: 'valid' }>, approval: ApprovalRecord | undefined, view: CheckoutView | undefined) {
    const now = view && approvalSummary(view);
    const changed = verdict.code === 'voided' && approval && now && checkoutDigest(now) !== approval.digest;
    return { reason: approvalSentence(verdict), changes: changed ? describeChanges(approval.summary, now) : [] };
  }

  /**
   * The buyer approves what the page showed: their proof, then the order placed in one transaction
   * (order-placement.ts: the link and checkout re-checked, stock, order, payment, outbox). Any failure keeps
   * nothing; the refusal says why in words for the buyer.
   */
  async approve(db: Database, token: string, formSecret: string, shownDigest: string, proof: ApprovalProof): Promise<ApprovalOutcome> {
    const state = await this.approvalState(db, token);
    if (state.kind === 'completed') return { kind: 'placed', order: state.order, placedNow: false };
    if (state.kind === 'unknown') return { kind: 'refused', reason: approvalSentence({ code: 'unknown' }), changes: [] };
    if (state.kind === 'closed') return { kind: 'refused', reason: state.reason, changes: state.changes };
    const { buyerProof } = this.options;
    try {
      // A typed code is checked (and a wrong one counted) before anything else, in a transaction of its own.
      const proven = state.approval.provenAt !== null;
      const checkedCodeId = !proven && proof.kind === 'code' && buyerProof.mode !== 'link' ? await buyerProof.checkCode(db, state.approval, proof.code) : undefined;
      if (this.paymentParts) {
        const begun = await beginPayment(db, this.paymentParts, {
          token,
          digest: shownDigest,
          formSecret,
          confirm: (tx, approval) => buyerProof.consume(tx, approval, state.view.record.buyer.email!, proof, checkedCodeId),
        });
        if (begun.kind === 'redirect') return { kind: 'paying', url: begun.url };
        if (begun.kind === 'placed') return { kind: 'placed', order: begun.order, placedNow: false };
        return begun;
      }
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
    const checkout = approval && (await readCheckout(db, approval.checkoutId));
    // Only the link the buyer is being asked about may cancel: a stale page must not cancel a newer version.
    const verdict = approvalVerdict(approval, checkout, this.checkouts.now(), formSecret);
    if (verdict.code !== 'valid') return { kind: 'refused', ...this.refusal(verdict, approval, checkout && this.checkouts.view(checkout)) };
    try {
      await this.checkouts.cancel(db, verdict.checkout.id, 'buyer', 'declined by the buyer on the approval page', 'checkout_declined');
    } catch (error) {
      if (error instanceof CheckoutRefused) return { kind: 'refused', reason: error.message, changes: [] };
      throw error;
    }
    return { kind: 'declined' };
  }
}
