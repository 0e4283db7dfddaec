/**
 * The checkout service: creating and updating checkouts, an agent's request to complete (which never places
 * an order: it asks the buyer), the buyer's approval on the store's page (stock, order, payment and outbox in
 * ONE transaction), decline and cancel. Every change of status goes through the machine's table and is
 * recorded with who made it. Each method takes the database handle; a change runs in its own transaction with
 * the checkout's row locked, so two changes to one checkout never interleave, on any instance.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { CheckoutConfig } from '../config.js';
import type { Database, Queryable } from '../db/database.js';
import type { CartService, CartView } from '../cart/cart-service.js';
import { lineProperties, type VariantLookup } from '../cart/cart.js';
import type { Catalog } from '../catalog/catalog.js';
import { STORE_CURRENCY } from '../catalog/types.js';
import { demandByVariant, InsufficientStock, type Inventory } from '../inventory/inventory.js';
import { announce, type OrderEventSubscriber } from '../orders/order-events.js';
import { placeOrder, readOrder, type Order } from '../orders/orders.js';
import { PaymentDeclined, type PaymentHandler } from '../payments/payment-handlers.js';
import {
  approvalSummary,
  checkoutDigest,
  describeChanges,
  informationStatus,
  unitPrice,
  viewCheckout,
  type Buyer,
  type Channel,
  type CheckoutLine,
  type CheckoutRecord,
  type CheckoutView,
} from './checkout.js';
import {
  insertApproval,
  insertCheckout,
  insertTransition,
  markApprovalUsed,
  readApproval,
  readCheckout,
  readExpiredOpenCheckoutIds,
  readOpenCheckoutForCart,
  readPendingApproval,
  readTransitions,
  voidPendingApprovals,
  writeCheckout,
  type ApprovalRecord,
  type TransitionRecord,
} from './checkout-store.js';
import { ProofRefused, type ApprovalProof, type BuyerProof, type ProvenBy } from './buyer-proof.js';
import { isTerminal, refusal, type Actor, type CheckoutStatus, type Refusal } from './machine.js';
import { checkedCheckoutText, type FieldPath } from './fields.js';
import type { AddressInput } from './shipping.js';

/** Lines a checkout may hold, and units per line (as the cart's own ceiling). */
export const MAX_CHECKOUT_LINES = 100;

export interface LineInput {
  variantId: number;
  quantity: number;
  sellingPlanId?: number | null;
  properties?: Record<string, string>;
}

/** The writable state of a checkout: an update replaces all of it (what is left out is cleared). */
export interface CheckoutInput {
  lines: readonly LineInput[];
  buyer?: Buyer;
  destination?: AddressInput | null;
  shippingOption?: string | null;
  /** Where the agent's platform hears of the order (its profile's order webhook); left as it is when absent. */
  webhookUrl?: string | null;
}

/** What a buyer fills in for a checkout of their cart: everything but the lines (the cart's) and the agent's webhook. */
export type CheckoutDetails = Omit<CheckoutInput, 'lines' | 'webhookUrl'>;

/** A cart's lines as a checkout's. */
const cartLines = (cart: CartView): LineInput[] =>
  cart.cart.lines.map((priced) => ({
    variantId: priced.line.variantId,
    quantity: priced.line.quantity,
    sellingPlanId: priced.line.sellingPlanId,
    properties: priced.line.properties,
  }));

export class CheckoutNotFound extends Error {
  constructor(readonly id: string) {
    super(`no checkout has the id ${id.slice(0, 64)}`);
    this.name = 'CheckoutNotFound';
  }
}

/** A request the checkout refuses (a closed checkout, an unknown variant): nothing changed. `field`: the one at fault. */
export class CheckoutRefused extends Error {
  readonly field: FieldPath | undefined;

  constructor(readonly reason: Refusal) {
    super(reason.content);
    this.name = 'CheckoutRefused';
    this.field = reason.field;
  }
}

/** A checkout as the doors show it, with the buyer's approval link while one is pending. */
export interface CheckoutAnswer {
  view: CheckoutView;
  /** Set while the buyer's approval is pending (status requires_escalation). */
  approval: ApprovalRecord | undefined;
  /** Set when an agent asked to complete: the reason it was not completed, for the client. */
  escalation?: Refusal;
}

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

export interface CheckoutServiceOptions {
  catalog: Catalog;
  inventory: Inventory;
  carts: CartService;
  config: CheckoutConfig;
  maxLineQuantity: number;
  payments: PaymentHandler;
  /** Told of each order placed, inside the approval's transaction (the confirmation mail, the platform's webhook). */
  orderEvents?: readonly OrderEventSubscriber[];
  /** What the buyer proves on the approval page before the order is placed (APPROVAL_PROOF). */
  buyerProof: BuyerProof;
  now?: () => Date;
}

const newCheckoutId = () => `chk_${randomBytes(16).toString('base64url')}`;
const newApprovalToken = () => randomBytes(32).toString('base64url');

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The order a used approval link placed, once its checkout has it. */
async function placedOrder(db: Database, approval: ApprovalRecord, checkout: CheckoutRecord): Promise<Order | undefined> {
  return approval.usedAt && checkout.orderId ? readOrder(db, checkout.orderId) : undefined;
}

export class CheckoutService {
  constructor(private readonly options: CheckoutServiceOptions) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private lookup(): VariantLookup {
    const snapshot = this.options.catalog.snapshot;
    return (variantId) => snapshot.variantById(variantId);
  }

  private view(record: CheckoutRecord): CheckoutView {
    return viewCheckout(record, this.lookup(), this.options.inventory, this.options.config, this.now());
  }

  /** Lines as stored, numbered li_1…; every variant must be sold and every quantity within the ceiling. */
  private lines(input: readonly LineInput[]): CheckoutLine[] {
    if (input.length > MAX_CHECKOUT_LINES) {
      throw new CheckoutRefused({ code: 'too_many_lines', content: `A checkout holds at most ${MAX_CHECKOUT_LINES} lines.`, field: ['lines'], params: { max: MAX_CHECKOUT_LINES } });
    }
    const lookup = this.lookup();
    return input.map((line, index) => {
      const item = lookup(line.variantId);
      if (!item) {
        const variantId = line.variantId;
        throw new CheckoutRefused({ code: 'not_found', content: `Cannot find variant ${variantId}.`, field: ['lines', index, 'variant'], params: { variantId } });
      }
      if (!Number.isSafeInteger(line.quantity) || line.quantity < 1 || line.quantity > this.options.maxLineQuantity) {
        const { title } = item.product;
        const max = this.options.maxLineQuantity;
        throw new CheckoutRefused({
          code: 'quantity_limit',
          content: `The quantity of ${title} must be from 1 to ${max}.`,
          field: ['lines', index, 'quantity'],
          params: { title, max },
        });
      }
      const sellingPlanId = line.sellingPlanId ?? null;
      return {
        id: `li_${index + 1}`,
        variantId: line.variantId,
        quantity: line.quantity,
        sellingPlanId,
        properties: lineProperties(line.properties),
        quotedPrice: unitPrice(item, sellingPlanId),
      };
    });
  }

  /** Creates a checkout from line items, or from a cart (answering the cart's open checkout if it has one). */
  async create(db: Database, input: CheckoutInput & { cartToken?: string }, channel: Channel, actor: Actor): Promise<CheckoutAnswer> {
    return (await this.openOrCreate(db, checkedCheckoutText(input), channel, actor)).answer;
  }

  /**
   * The buyer's own checkout of a cart (the store's checkout page): the cart's open checkout, or a new one, set to
   * the cart's lines as they are now and these details. It asks nothing of anyone yet (requestCompletion does).
   */
  async checkoutCart(db: Database, cartToken: string, given: CheckoutDetails, channel: Channel, actor: Actor): Promise<CheckoutAnswer> {
    const details = checkedCheckoutText(given);
    const opened = await this.openOrCreate(db, { ...details, lines: [], cartToken }, channel, actor);
    if (opened.created) return opened.answer;
    const cart = await this.options.carts.findCart(db, cartToken);
    if (!cart) throw new CheckoutNotFound(cartToken);
    return this.update(db, opened.answer.view.record.id, { ...details, lines: cartLines(cart) }, actor);
  }

  /** The cart's open checkout as it is now, or undefined; never makes one. */
  async openForCart(db: Database, cartToken: string): Promise<CheckoutAnswer | undefined> {
    const open = await readOpenCheckoutForCart(db, cartToken);
    if (!open) return undefined;
    const current = await this.settle(db, open);
    return isTerminal(current.status) ? undefined : this.answer(db, current);
  }

  /** `created`: false when the answer is the cart's checkout that was already open. */
  private async openOrCreate(
    db: Database,
    input: CheckoutInput & { cartToken?: string },
    channel: Channel,
    actor: Actor,
  ): Promise<{ answer: CheckoutAnswer; created: boolean }> {
    let lines: LineInput[] = [...input.lines];
    let cartToken: string | null = null;
    if (input.cartToken !== undefined) {
      const cart = await this.options.carts.findCart(db, input.cartToken);
      if (!cart) throw new CheckoutNotFound(input.cartToken);
      cartToken = cart.token;
      const open = await readOpenCheckoutForCart(db, cartToken);
      if (open) {
        const current = await this.expireIfDue(db, open);
        if (!isTerminal(current.status)) return { answer: await this.answer(db, current), created: false };
      }
      // A checkout made from a cart uses the cart's lines, whatever lines the request also carries.
      lines = cartLines(cart);
    }
    const now = this.now();
    const draft: CheckoutRecord = {
      id: newCheckoutId(),
      status: 'incomplete',
      cartToken,
      lines: this.lines(lines),
      buyer: input.buyer ?? {},
      destination: input.destination ?? null,
      shippingOption: input.shippingOption ?? null,
      channel,
      webhookUrl: input.webhookUrl ?? null,
      version: 0,
      orderId: null,
      expiresAt: new Date(now.getTime() + this.options.config.ttlSeconds * 1000),
      createdAt: now,
      updatedAt: now,
    };
    draft.status = informationStatus(this.view(draft));
    const created = await db.transaction(async (tx) => {
      const record = await insertCheckout(tx, draft);
      if (record) await insertTransition(tx, record.id, null, record.status, actor, cartToken ? 'created from a cart' : 'created');
      return record;
    });
    if (created) return { answer: await this.answer(db, created), created: true };
    // Another request made this cart's checkout meanwhile: that one is the cart's checkout.
    const open = cartToken ? await readOpenCheckoutForCart(db, cartToken) : undefined;
    if (!open) throw new Error('a cart checkout was neither inserted nor found');
    return { answer: await this.answer(db, open), created: false };
  }

  /** The checkout as it is now (an expired one is canceled first), or undefined. */
  async get(db: Database, id: string): Promise<CheckoutAnswer | undefined> {
    const record = await readCheckout(db, id);
    if (!record) return undefined;
    return this.answer(db, await this.settle(db, record));
  }

  /**
   * Brings a stored checkout up to date before it is shown: an expired one is canceled, and one waiting for
   * the buyer whose lines, prices or stock moved since the page was issued goes back to ready or incomplete
   * (its approval void, saying what changed). Writes only when something is due.
   */
  private async settle(db: Database, record: CheckoutRecord): Promise<CheckoutRecord> {
    const expired = await this.expireIfDue(db, record);
    if (expired.status !== 'requires_escalation') return expired;
    const approval = await readPendingApproval(db, record.id);
    const view = this.view(record);
    if (approval && view.blockers.length === 0 && checkoutDigest(approvalSummary(view)) === approval.digest && approval.expiresAt > this.now()) return record;
    return this.change(db, record.id, (locked, lockedView) => {
      if (locked.status !== 'requires_escalation') return undefined;
      const expired = approval !== undefined && approval.expiresAt <= this.now();
      const reason = expired
        ? 'This approval link has expired. Ask your agent for a new one.'
        : (lockedView.blockers[0]?.content ?? 'The checkout was changed after this approval link was issued.');
      return { to: informationStatus(lockedView), actor: 'system', reason };
    });
  }

  private async expireIfDue(db: Database, record: CheckoutRecord): Promise<CheckoutRecord> {
    if (isTerminal(record.status) || record.expiresAt > this.now()) return record;
    return this.change(db, record.id, (locked) =>
      isTerminal(locked.status) ? undefined : { to: 'canceled', actor: 'system', reason: 'expired' },
    );
  }

  /**
   * One change to one checkout, in a transaction with its row locked: `decide` looks at the checkout as it is
   * and names the move (or none); the move is checked against the machine, recorded, and pending approvals
   * are voided whenever the checkout leaves the buyer's hands.
   */
  private async change(
    db: Database,
    id: string,
    decide: (record: CheckoutRecord, view: CheckoutView) => { to: CheckoutStatus; actor: Actor; reason: string; update?: Partial<CheckoutRecord> } | undefined,
  ): Promise<CheckoutRecord> {
    return db.transaction(async (tx) => {
      const locked = await readCheckout(tx, id, { lock: true });
      if (!locked) throw new CheckoutNotFound(id);
      const move = decide(locked, this.view(locked));
      if (!move) return locked;
      return this.apply(tx, locked, move);
    });
  }

  private async apply(
    tx: Queryable,
    locked: CheckoutRecord,
    move: { to: CheckoutStatus; actor: Actor; reason: string; update?: Partial<CheckoutRecord> },
    context: { approvedByBuyer?: boolean } = {},
  ): Promise<CheckoutRecord> {
    const next: CheckoutRecord = { ...locked, ...move.update, status: move.to };
    const nextView = this.view(next);
    const refused = refusal(locked.status, move.to, {
      actor: move.actor,
      blockers: move.to === 'canceled' ? [] : nextView.blockers,
      approvedByBuyer: context.approvedByBuyer ?? false,
      expired: move.to === 'canceled' ? false : nextView.expired,
    });
    if (refused) throw new CheckoutRefused(refused);
    // The checkout leaves the buyer's hands (changed, expired, canceled): its pending link is void. The link being used is not.
    if ((locked.status === 'requires_escalation' && move.to !== 'complete_in_progress') || move.to === 'canceled') {
      await voidPendingApprovals(tx, locked.id, move.to === 'canceled' ? `the checkout was canceled (${move.reason})` : move.reason);
    }
    const written = await writeCheckout(tx, next);
    if (locked.status !== move.to) await insertTransition(tx, locked.id, locked.status, move.to, move.actor, move.reason);
    return written;
  }

  /** Replaces the writable state (lines, buyer, destination, option); the status follows the information. */
  async update(db: Database, id: string, given: CheckoutInput, actor: Actor): Promise<CheckoutAnswer> {
    const input = checkedCheckoutText(given);
    const lines = this.lines(input.lines);
    const current = await readCheckout(db, id);
    if (!current) throw new CheckoutNotFound(id);
    await this.expireIfDue(db, current);
    const record = await this.change(db, id, (locked) => {
      if (isTerminal(locked.status)) {
        throw new CheckoutRefused({ code: 'checkout_closed', content: `This checkout is ${locked.status} and can no longer change.`, params: { status: locked.status } });
      }
      const update = {
        lines,
        buyer: input.buyer ?? {},
        destination: input.destination ?? null,
        shippingOption: input.shippingOption ?? null,
        webhookUrl: input.webhookUrl === undefined ? locked.webhookUrl : input.webhookUrl,
      };
      const to = informationStatus(this.view({ ...locked, ...update }));
      const reason = locked.status === 'requires_escalation' ? 'The checkout was changed after this approval link was issued.' : 'updated';
      return { to, actor, reason, update };
    });
    return this.answer(db, record);
  }

  /**
   * An agent asks to complete, or the buyer on the store's checkout page. The machine refuses either
   * `complete_in_progress` (the buyer must approve on the approval page), so a checkout with everything it needs
   * is escalated instead: a new approval link, bound to exactly what the checkout is now, and status
   * requires_escalation with the reason. A checkout still missing something stays
   * as it is, and its messages say what. Never takes stock, places an order or charges anyone.
   */
  async requestCompletion(db: Database, id: string, actor: Actor): Promise<CheckoutAnswer> {
    const current = await readCheckout(db, id);
    if (!current) throw new CheckoutNotFound(id);
    const settled = await this.settle(db, current);
    if (isTerminal(settled.status)) return this.answer(db, settled);
    let escalation: Refusal | undefined;
    const record = await db.transaction(async (tx) => {
      const locked = await readCheckout(tx, id, { lock: true });
      if (!locked) throw new CheckoutNotFound(id);
      if (isTerminal(locked.status)) return locked;
      const view = this.view(locked);
      const context = { actor, blockers: view.blockers, approvedByBuyer: false, expired: view.expired };
      escalation = refusal(locked.status, 'complete_in_progress', context);
      if (escalation?.code !== 'buyer_approval_required') {
        // Something is missing: the checkout shows it; its status is what its information says.
        const to = informationStatus(view);
        return to === locked.status ? locked : this.apply(tx, locked, { to, actor: 'system', reason: escalation?.content ?? 'information changed' });
      }
      const summary = approvalSummary(view);
      await voidPendingApprovals(tx, id, 'A newer approval link was issued for this checkout; use the latest link you were given.');
      const escalated = await this.apply(tx, locked, { to: 'requires_escalation', actor, reason: escalation.content });
      await insertApproval(tx, {
        token: newApprovalToken(),
        checkoutId: id,
        digest: checkoutDigest(summary),
        summary,
        formSecret: randomBytes(24).toString('base64url'),
        expiresAt: new Date(this.now().getTime() + this.options.config.approvalTtlSeconds * 1000),
      });
      return escalated;
    });
    const answer = await this.answer(db, record);
    return escalation ? { ...answer, escalation } : answer;
  }

  /** Cancels an open checkout (any status but completed and canceled); a canceled one is answered as it is. */
  async cancel(db: Database, id: string, actor: Actor, reason = 'canceled'): Promise<CheckoutAnswer> {
    const record = await this.change(db, id, (locked) => {
      if (locked.status === 'canceled') return undefined;
      if (locked.status === 'completed') {
        throw new CheckoutRefused({ code: 'checkout_closed', content: 'This checkout is completed: its order was placed and it cannot be canceled.', params: { status: 'completed' } });
      }
      return { to: 'canceled', actor, reason };
    });
    return this.answer(db, record);
  }

  async transitions(db: Queryable, id: string): Promise<TransitionRecord[]> {
    return readTransitions(db, id);
  }

  /** Cancels open checkouts past their expiry (the hourly sweep; reads cancel them too). */
  async expireDue(db: Database, limit = 500): Promise<number> {
    const ids = await readExpiredOpenCheckoutIds(db, this.now(), limit);
    for (const id of ids) {
      const record = await readCheckout(db, id);
      if (record) await this.expireIfDue(db, record);
    }
    return ids.length;
  }

  private async answer(db: Queryable, record: CheckoutRecord): Promise<CheckoutAnswer> {
    const approval = record.status === 'requires_escalation' ? await readPendingApproval(db, record.id) : undefined;
    return { view: this.view(record), approval };
  }

  // --- the buyer's side: the approval page ---

  /** What the approval page shows for a link: the checkout to approve, the order it placed, or why it is closed. */
  async approvalState(db: Database, token: string): Promise<ApprovalState> {
    const approval = await readApproval(db, token);
    if (!approval) return { kind: 'unknown' };
    const stored = await readCheckout(db, approval.checkoutId);
    if (!stored) return { kind: 'unknown' };
    const placed = await placedOrder(db, approval, stored);
    if (placed) return { kind: 'completed', order: placed };
    const record = await this.settle(db, stored);
    const view = this.view(record);
    const fresh = (await readApproval(db, token))!;
    // Another approval of this link may have placed the order between the first two reads (on PostgreSQL each is a
    // statement of its own): the checkout then reads completed while the approval read before it was unused.
    const placedMeanwhile = await placedOrder(db, fresh, record);
    if (placedMeanwhile) return { kind: 'completed', order: placedMeanwhile };
    if (fresh.voidedAt) return { kind: 'closed', reason: fresh.voidReason ?? 'This approval link is no longer valid.', changes: this.changes(fresh, view), view };
    if (fresh.expiresAt <= this.now()) return { kind: 'closed', reason: 'This approval link has expired. Ask your agent for a new one.', changes: [], view };
    if (record.status !== 'requires_escalation') return { kind: 'closed', reason: `This checkout is ${record.status.replace(/_/g, ' ')}.`, changes: [], view };
    return { kind: 'pending', approval: fresh, view };
  }

  private changes(approval: ApprovalRecord, view: CheckoutView): string[] {
    const now = approvalSummary(view);
    return checkoutDigest(now) === approval.digest ? [] : describeChanges(approval.summary, now);
  }

  /**
   * The buyer approves what the page showed. In ONE transaction: the approval and checkout are locked and
   * re-checked (form token, digest of exactly what was shown, expiry, single use), stock is taken (demand
   * summed per variant, a conditional update), the order placed with lines copied, the payment authorized,
   * the checkout completed with its order, and an outbox row written. Any failure keeps nothing; the
   * refusal says why in words for the buyer.
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
      let placedNow = false;
      let provenBy: ProvenBy | undefined;
      let enrollment: string | undefined;
      const order = await db.transaction(async (tx) => {
        const approval = await readApproval(tx, token, { lock: true });
        if (!approval || !sameSecret(approval.formSecret, formSecret)) throw new ApprovalRefused('This form has expired. Reload the page and approve again.');
        const locked = await readCheckout(tx, approval.checkoutId, { lock: true });
        if (!locked) throw new ApprovalRefused('This approval link is not valid.');
        if (approval.usedAt && locked.orderId) return (await readOrder(tx, locked.orderId))!;
        if (approval.voidedAt) throw new ApprovalRefused(approval.voidReason ?? 'This approval link is no longer valid.');
        if (approval.expiresAt <= this.now()) throw new ApprovalRefused('This approval link has expired. Ask your agent for a new one.');
        const view = this.view(locked);
        const summary = approvalSummary(view);
        const digest = checkoutDigest(summary);
        if (digest !== approval.digest || shownDigest !== approval.digest) {
          throw new ApprovalRefused('The checkout changed after this page was shown. Review it again.', describeChanges(approval.summary, summary));
        }
        if (view.blockers.length > 0) throw new ApprovalRefused(view.blockers.map((b) => b.content).join(' '));
        // The person proves they are the buyer (or nothing, in link mode): consumed with the order, kept if it fails.
        provenBy = await buyerProof.consume(tx, approval, locked.buyer.email!, proof, checkedCodeId);
        const inProgress = await this.apply(
          tx,
          locked,
          { to: 'complete_in_progress', actor: 'buyer', reason: `approved by the buyer on the approval page (${PROVEN_BY_WORDS[provenBy]})` },
          { approvedByBuyer: true },
        );
        const beyondStock = await this.options.inventory.take(
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
              properties: priced.line.properties,
              backordered,
            })),
          },
          this.options.payments,
        );
        await markApprovalUsed(tx, token);
        await this.apply(tx, inProgress, { to: 'completed', actor: 'system', reason: `order #${order.number} placed`, update: { orderId: order.id } });
        // The cart it was bought from is closed: its cookie gets a fresh cart, and reading it by token finds nothing.
        if (locked.cartToken) await this.options.carts.close(tx, locked.cartToken);
        await announce(tx, this.options.orderEvents ?? [], { type: 'placed', order });
        // A code proved the email: the browser that typed it may register a passkey for next time.
        if (provenBy === 'code') enrollment = await buyerProof.grantEnrollment(tx, order.buyerEmail, order.id);
        placedNow = true;
        return order;
      });
      // The order is committed: a failed read of the new stock level must not report it as failed (the poll catches up).
      await this.options.inventory.refresh(db).catch(() => undefined);
      return { kind: 'placed', order, placedNow, provenBy, enrollment };
    } catch (error) {
      if (error instanceof ProofRefused) return { kind: 'unproven', reason: error.message };
      if (error instanceof ApprovalRefused) return { kind: 'refused', reason: error.message, changes: error.changes };
      if (error instanceof InsufficientStock) {
        await this.options.inventory.refresh(db).catch(() => undefined);
        const reason = 'Some items sold out before the order could be placed, so nothing was ordered or charged. Ask your agent to update the checkout.';
        await this.change(db, state.view.record.id, (locked, view) =>
          locked.status === 'requires_escalation' ? { to: informationStatus(view), actor: 'system', reason } : undefined,
        ).catch(() => undefined);
        return { kind: 'refused', reason, changes: [] };
      }
      if (error instanceof PaymentDeclined) return { kind: 'refused', reason: `${error.buyerMessage} Nothing was ordered or charged.`, changes: [] };
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
    if (approval.expiresAt <= this.now()) return { kind: 'refused', reason: 'This approval link has expired.', changes: [] };
    try {
      await this.cancel(db, approval.checkoutId, 'buyer', 'declined by the buyer on the approval page');
    } catch (error) {
      if (error instanceof CheckoutRefused) return { kind: 'refused', reason: error.message, changes: [] };
      throw error;
    }
    return { kind: 'declined' };
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

const PROVEN_BY_WORDS: Record<ProvenBy, string> = { passkey: 'proven with a passkey', code: 'proven with a mailed code', link: 'no proof asked' };

class ApprovalRefused extends Error {
  constructor(
    message: string,
    readonly changes: string[] = [],
  ) {
    super(message);
  }
}
