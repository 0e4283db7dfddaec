/**
 * Placing the order a buyer approved, in ONE transaction: the approval and its checkout are locked and re-checked
 * (the link still valid, the digest exactly what the buyer approved, nothing blocking), what confirms the approval
 * is done (the buyer's proof consumed), stock is taken (demand summed per variant, a conditional update), the
 * order placed with its lines and backorders, the checkout completed with its order, the cart closed, the event
 * announced (the outbox rows) and, after a mailed code, a passkey enrollment granted. Any failure keeps nothing.
 *
 * The approval page calls it once the buyer answers; anything else that learns the buyer approved (a payment
 * page's return, a payment provider's webhook) calls it the same way: the same transaction, the same checks, at
 * most one order per approval link.
 */
import type { Database, Queryable } from '../db/database.js';
import { STORE_CURRENCY } from '../catalog/types.js';
import { demandByVariant, InsufficientStock } from '../inventory/inventory.js';
import { announce } from '../orders/order-events.js';
import { placeOrder, readOrder, type Order } from '../orders/orders.js';
import { PaymentDeclined } from '../payments/payment-handlers.js';
import type { ProviderAuthorization } from '../payments/payment-provider.js';
import { approvalSentence, approvalVerdict } from './approval-validity.js';
import type { ProvenBy } from './buyer-proof.js';
import { approvalSummary, checkoutDigest, describeChanges, informationStatus, itemsSoldOut, type CheckoutRecord, type CheckoutView } from './checkout.js';
import type { CheckoutService, CheckoutServiceOptions } from './checkout-service.js';
import { markApprovalUsed, readApproval, readCheckout, type ApprovalRecord } from './checkout-store.js';

/**
 * Told of each order placed, inside its transaction, after the checkout completed and before the order's event is
 * announced (a subscription is made of its plan lines, or the renewal it approves is marked approved).
 */
export type OrderPlacedHook = (tx: Queryable, order: Order, checkout: CheckoutRecord, view: CheckoutView) => Promise<void>;

/** What placing needs: the checkout's life (its view, clock and moves) and the services the order touches. */
export interface PlacementParts extends Pick<CheckoutServiceOptions, 'inventory' | 'carts' | 'payments' | 'orderEvents' | 'buyerProof'> {
  checkouts: CheckoutService;
  /** Hooks added after the store's services are made (ApprovalService.afterOrderPlaced); shared by reference. */
  placedHooks?: OrderPlacedHook[];
}

export interface PlacementRequest {
  /** The approval link the buyer answered. */
  token: string;
  /** The digest of what the buyer approved (the approval page's hidden field); anything else is refused. */
  digest: string;
  /** The approval page's form secret, checked against the link's; a caller with no form (a webhook) leaves it out. */
  formSecret?: string;
  /**
   * Inside the transaction, once the approval and checkout are locked and re-checked and before stock is taken:
   * what confirms the buyer approved (their proof consumed). What it throws rolls everything back and reaches
   * the caller; it returns how the buyer was proven, which the checkout's history records.
   */
  confirm(tx: Queryable, approval: ApprovalRecord, checkout: CheckoutRecord): Promise<ProvenBy>;
  /**
   * A payment provider's hold, confirmed outside the transaction (the buyer paid on a hosted page): the order's payment
   * starts authorized with it. The buyer proved it was them before being sent to pay (`confirm` answers how).
   */
  authorization?: ProviderAuthorization;
}

/** `placedNow`: false when the link had already placed its order (that order is answered). */
export type Placement =
  | { kind: 'placed'; order: Order; placedNow: boolean; provenBy?: ProvenBy; enrollment?: string }
  /** `code`: set when items sold out as the buyer approved (the checkout went back to what its information says). */
  | { kind: 'refused'; reason: string; changes: string[]; code?: 'sold_out_at_approval' };

const SOLD_OUT = 'Some items sold out before the order could be placed, so nothing was ordered or charged. Ask your agent to update the checkout.';

export async function placeApprovedOrder(db: Database, parts: PlacementParts, request: PlacementRequest): Promise<Placement> {
  const { checkouts, inventory, buyerProof } = parts;
  const { token } = request;
  let checkoutId: string | undefined;
  try {
    let placedNow = false;
    let provenBy: ProvenBy | undefined;
    let enrollment: string | undefined;
    const order = await db.transaction(async (tx) => {
      const link = await readApproval(tx, token, { lock: true });
      const verdict = approvalVerdict(link, link && (await readCheckout(tx, link.checkoutId, { lock: true })), checkouts.now(), request.formSecret);
      if (verdict.code === 'used') return (await readOrder(tx, verdict.orderId))!;
      if (verdict.code !== 'valid') throw new ApprovalRefused(approvalSentence(verdict));
      const { approval, checkout: locked } = verdict;
      checkoutId = locked.id;
      const view = checkouts.view(locked);
      const summary = approvalSummary(view);
      const digest = checkoutDigest(summary);
      if (digest !== approval.digest || request.digest !== approval.digest) {
        throw new ApprovalRefused('The checkout changed after this page was shown. Review it again.', describeChanges(approval.summary, summary));
      }
      if (view.blockers.length > 0) throw new ApprovalRefused(view.blockers.map((b) => b.content).join(' '), [], itemsSoldOut(view));
      // The person proves they are the buyer (or nothing, in link mode): consumed with the order, kept if it fails.
      provenBy = await request.confirm(tx, approval, locked);
      // Already in progress while the buyer paid on a hosted page (unless they came back to the page first).
      const inProgress =
        locked.status === 'complete_in_progress'
          ? locked
          : await checkouts.apply(
              tx,
              locked,
              { to: 'complete_in_progress', actor: 'buyer', reason: `approved by the buyer on the approval page (${PROVEN_BY_WORDS[provenBy]})` },
              { approvedByBuyer: true },
            );
      const beyondStock = await inventory.take(
        tx,
        demandByVariant(view.lines.map((priced) => ({ variantId: priced.line.variantId, quantity: priced.line.quantity }))),
      );
      const address = view.address!;
      const option = view.selectedOption!;
      const order = await placeOrder(
        tx,
        {
          checkoutId: locked.id,
          channel: locked.channel,
          webhookUrl: locked.webhookUrl,
          agentPlatform: locked.agentPlatform ?? null,
          note: locked.note,
          attributes: locked.attributes,
          currency: STORE_CURRENCY,
          buyerEmail: locked.buyer.email!,
          buyer: locked.buyer,
          shippingAddress: { ...address },
          shippingOption: { id: option.id, title: option.title, amount: option.amount },
          subtotal: view.totals.subtotal,
          shipping: view.totals.shipping ?? 0,
          tax: view.totals.tax ?? 0,
          total: view.totals.total,
          lines: backordersByLine(view, beyondStock).map(({ priced, backordered }, position) => ({
            id: priced.line.id,
            position,
            variantId: priced.line.variantId,
            productId: priced.item!.product.id,
            sku: priced.sku,
            productTitle: priced.productTitle,
            variantTitle: priced.variantTitle,
            title: priced.title,
            quantity: priced.line.quantity,
            unitPrice: priced.unitPrice,
            lineTotal: priced.lineTotal,
            sellingPlanId: priced.line.sellingPlanId,
            sellingPlan: priced.plan ? { ...priced.plan, fullUnitPrice: priced.fullUnitPrice } : null,
            properties: priced.line.properties,
            backordered,
          })),
          ...(request.authorization ? { paymentAuthorization: request.authorization } : {}),
        },
        parts.payments,
      );
      await markApprovalUsed(tx, token, provenBy);
      await checkouts.apply(tx, inProgress, { to: 'completed', actor: 'system', reason: `order #${order.number} placed`, update: { orderId: order.id } });
      // The cart it was bought from is closed: its cookie gets a fresh cart, and reading it by token finds nothing.
      if (locked.cartToken) await parts.carts.close(tx, locked.cartToken);
      for (const hook of parts.placedHooks ?? []) await hook(tx, order, locked, view);
      await announce(tx, parts.orderEvents ?? [], { type: 'placed', order });
      // A code proved the email: the browser that typed it may register a passkey for next time.
      if (provenBy === 'code') enrollment = await buyerProof.grantEnrollment(tx, order.buyerEmail, order.id);
      placedNow = true;
      return order;
    });
    // The order is committed: a failed read of the new stock level must not report it as failed (the poll catches up).
    await inventory.refresh(db).catch(() => undefined);
    return { kind: 'placed', order, placedNow, provenBy, enrollment };
  } catch (error) {
    // Items sold out as the buyer approved: the checkout goes back to what its information says (its link void),
    // saying so, so the agent can update it.
    const backToTheAgent = async (reason: string) => {
      if (!checkoutId) return;
      await checkouts
        .change(db, checkoutId, (locked, view) =>
          locked.status === 'requires_escalation' ? { to: informationStatus(view), actor: 'system', reason, code: 'sold_out_at_approval' } : undefined,
        )
        .catch(() => undefined);
    };
    if (error instanceof ApprovalRefused) {
      if (!error.soldOut) return { kind: 'refused', reason: error.message, changes: error.changes };
      await backToTheAgent(error.message);
      return { kind: 'refused', reason: error.message, changes: error.changes, code: 'sold_out_at_approval' };
    }
    if (error instanceof InsufficientStock) {
      await inventory.refresh(db).catch(() => undefined);
      await backToTheAgent(SOLD_OUT);
      return { kind: 'refused', reason: SOLD_OUT, changes: [], code: 'sold_out_at_approval' };
    }
    if (error instanceof PaymentDeclined) return { kind: 'refused', reason: `${error.buyerMessage} Nothing was ordered or charged.`, changes: [] };
    throw error;
  }
}

/**
 * The units each line sells beyond stock: the take reports them per variant; a variant's earlier lines got the
 * stock first (as the checkout's view counts them), so its later lines carry the backorder.
 */
function backordersByLine(view: CheckoutView, beyondStock: ReadonlyMap<number, number>): { priced: CheckoutView['lines'][number]; backordered: number }[] {
  const left = new Map(beyondStock);
  const result = view.lines.map((priced) => ({ priced, backordered: 0 }));
  for (const entry of [...result].reverse()) {
    const variantId = entry.priced.line.variantId;
    const units = left.get(variantId) ?? 0;
    entry.backordered = Math.min(units, entry.priced.line.quantity);
    left.set(variantId, units - entry.backordered);
  }
  return result;
}

export const PROVEN_BY_WORDS: Record<ProvenBy, string> = { passkey: 'proven with a passkey', code: 'proven with a mailed code', link: 'no proof asked' };

class ApprovalRefused extends Error {
  constructor(
    message: string,
    readonly changes: string[] = [],
    /** Refused because items sold out since the page was shown. */
    readonly soldOut = false,
  ) {
    super(message);
  }
}
