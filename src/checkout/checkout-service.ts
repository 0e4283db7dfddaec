/**
 * The checkout's life: creating and updating checkouts, a cart's checkout, an agent's request to complete (which
 * never places an order: it asks the buyer, issuing an approval link), settling a checkout that expired or moved
 * under its link, and cancel. Every change of status goes through the machine's table and is recorded with who made
 * it. Each method takes the database handle; a change runs in its own transaction with the checkout's row locked,
 * so two changes to one checkout never interleave, on any instance.
 *
 * What the buyer's link does (the approval page, approve, decline) is the approval's (approval-service.ts); placing
 * the order it approves is order-placement.ts. Both move the checkout through the moves here (view, settle,
 * change, apply).
 */
import { randomBytes } from 'node:crypto';
import type { CheckoutConfig } from './checkout-options.js';
import type { Database, Queryable } from '../db/database.js';
import type { CartService, CartView } from '../cart/cart-service.js';
import { lineProperties, type VariantLookup } from '../cart/cart.js';
import type { PlanTerms } from '../catalog/types.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Inventory } from '../inventory/inventory.js';
import type { OrderEventSubscriber } from '../orders/order-events.js';
import type { PaymentHandler } from '../payments/payment-handlers.js';
import { ApprovalService, type ApprovalOutcome, type ApprovalState } from './approval-service.js';
import { APPROVAL_SENTENCES, approvalVerdict } from './approval-validity.js';
import {
  approvalSummary,
  checkoutDigest,
  informationStatus,
  itemsSoldOut,
  moveNotice,
  orderCanceledNotice,
  unitPrice,
  viewCheckout,
  type Buyer,
  type Channel,
  type CheckoutLine,
  type CheckoutMessage,
  type CheckoutRecord,
  type CheckoutView,
} from './checkout.js';
import {
  insertApproval,
  insertCheckout,
  insertTransition,
  readCheckout,
  readCompletedCheckoutOfCart,
  readExpiredOpenCheckoutIds,
  readLastTransition,
  readOpenCheckoutForCart,
  readPendingApproval,
  readTransitions,
  voidPendingApprovals,
  writeCheckout,
  type ApprovalRecord,
  type TransitionRecord,
} from './checkout-store.js';
import type { ApprovalProof, BuyerProof } from './buyer-proof.js';
import { CheckoutRefused, isTerminal, refusal, type Actor, type CheckoutStatus, type MoveCode, type Refusal } from './machine.js';
import { readOrderCancellation } from '../orders/orders.js';
import { checkedCheckoutText } from './fields.js';
import type { AddressInput } from './shipping.js';

export { CheckoutRefused } from './machine.js';
export type { ApprovalOutcome, ApprovalState } from './approval-service.js';

/** Lines a checkout may hold, and units per line (as the cart's own ceiling). */
export const MAX_CHECKOUT_LINES = 100;

export interface LineInput {
  variantId: number;
  quantity: number;
  sellingPlanId?: number | null;
  /** A renewal's line: the subscription's terms, which price it (the catalog's plan may have changed or gone). */
  plan?: PlanTerms;
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
  /** The platform whose agent writes it (the host of its profile, for the merchant's reports); left as it is when absent. */
  agentPlatform?: string | null;
  /** The cart's note and attributes (a checkout of a cart carries them); left as they are when absent. */
  note?: string | null;
  attributes?: Record<string, string>;
}

/** What a buyer fills in for a checkout of their cart: everything but the lines (the cart's) and the agent's webhook and platform. */
export type CheckoutDetails = Omit<CheckoutInput, 'lines' | 'webhookUrl' | 'agentPlatform' | 'note' | 'attributes'>;

/** A cart's lines as a checkout's. */
const cartLines = (cart: CartView): LineInput[] =>
  cart.cart.lines.map((priced) => ({
    variantId: priced.line.variantId,
    quantity: priced.line.quantity,
    sellingPlanId: priced.line.sellingPlanId,
    properties: priced.line.properties,
  }));

/** What a checkout of a cart carries from it besides its lines: the note and attributes (cart/update.js). */
const cartDetails = (cart: CartView): { note: string | null; attributes: Record<string, string> } => ({
  note: cart.cart.note,
  attributes: cart.cart.attributes,
});

export class CheckoutNotFound extends Error {
  constructor(readonly id: string) {
    super(`no checkout has the id ${id.slice(0, 64)}`);
    this.name = 'CheckoutNotFound';
  }
}

/** A checkout as the doors show it, with the buyer's approval link while one is pending. */
export interface CheckoutAnswer {
  view: CheckoutView;
  /** Set while the buyer's approval is pending (status requires_escalation). */
  approval: ApprovalRecord | undefined;
  /** Set when an agent asked to complete: the reason it was not completed, for the client. */
  escalation?: Refusal;
  /**
   * How the checkout came to be as it is, when a client must be told: why it is canceled (declined, expired, canceled
   * and by whom), why the buyer's approval placed nothing (items sold out meanwhile), or that its order was canceled.
   */
  notice?: CheckoutMessage;
}

/** A move of a checkout: where to, who made it, why in words and, where a client is told, as a code. */
export interface CheckoutMove {
  to: CheckoutStatus;
  actor: Actor;
  reason: string;
  code?: MoveCode;
  update?: Partial<CheckoutRecord>;
}

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

export class CheckoutService {
  /** What the buyer's link does; the doors call it directly, the three methods at the end of this class lead to it. */
  readonly approvals: ApprovalService;

  constructor(private readonly options: CheckoutServiceOptions) {
    this.approvals = new ApprovalService(this, options);
  }

  now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private lookup(): VariantLookup {
    const snapshot = this.options.catalog.snapshot;
    return (variantId) => snapshot.variantById(variantId);
  }

  /** The checkout priced against the live catalog and stock, now. */
  view(record: CheckoutRecord): CheckoutView {
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
      const plan = line.plan ? { plan: line.plan } : {};
      return {
        id: `li_${index + 1}`,
        variantId: line.variantId,
        quantity: line.quantity,
        sellingPlanId,
        ...plan,
        properties: lineProperties(line.properties),
        quotedPrice: unitPrice(item, { sellingPlanId, ...plan }),
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
    return this.update(db, opened.answer.view.record.id, { ...details, lines: cartLines(cart), ...cartDetails(cart) }, actor);
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
    let details = { note: input.note ?? null, attributes: input.attributes ?? {} };
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
      // A checkout made from a cart uses the cart's lines, note and attributes, whatever the request also carries.
      lines = cartLines(cart);
      details = cartDetails(cart);
    }
    const draft = this.draft({ ...input, ...details, lines }, cartToken, channel);
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

  /** A new checkout's record, its status what its information says; `expiresAt` by CHECKOUT_TTL unless given. */
  private draft(input: CheckoutInput, cartToken: string | null, channel: Channel, expiresAt?: Date): CheckoutRecord {
    const now = this.now();
    const draft: CheckoutRecord = {
      id: newCheckoutId(),
      status: 'incomplete',
      cartToken,
      lines: this.lines(input.lines),
      buyer: input.buyer ?? {},
      destination: input.destination ?? null,
      shippingOption: input.shippingOption ?? null,
      channel,
      webhookUrl: input.webhookUrl ?? null,
      agentPlatform: input.agentPlatform ?? null,
      note: input.note ?? null,
      attributes: input.attributes ?? {},
      version: 0,
      orderId: null,
      expiresAt: expiresAt ?? new Date(now.getTime() + this.options.config.ttlSeconds * 1000),
      createdAt: now,
      updatedAt: now,
    };
    draft.status = informationStatus(this.view(draft));
    return draft;
  }

  /**
   * A checkout made inside the caller's transaction, from lines the store itself sets (a subscription's renewal):
   * no cart, open until `expiresAt`. Its text was checked where it first entered (the order it renews).
   */
  async createWithin(tx: Queryable, input: CheckoutInput, channel: Channel, actor: Actor, reason: string, expiresAt: Date): Promise<CheckoutRecord> {
    const record = await insertCheckout(tx, this.draft(input, null, channel, expiresAt));
    if (!record) throw new Error('a checkout without a cart was not inserted');
    await insertTransition(tx, record.id, null, record.status, actor, reason);
    return record;
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
  async settle(db: Database, record: CheckoutRecord): Promise<CheckoutRecord> {
    const expired = await this.expireIfDue(db, record);
    if (expired.status !== 'requires_escalation') return expired;
    const approval = await readPendingApproval(db, record.id);
    const view = this.view(record);
    const verdict = approvalVerdict(approval, record, this.now());
    if (verdict.code === 'valid' && view.blockers.length === 0 && checkoutDigest(approvalSummary(view)) === verdict.approval.digest) return record;
    return this.change(db, record.id, (locked, lockedView) => {
      if (locked.status !== 'requires_escalation') return undefined;
      const reason = verdict.code === 'expired' ? APPROVAL_SENTENCES.expired : (lockedView.blockers[0]?.content ?? APPROVAL_SENTENCES.changed);
      // Items sold out while the buyer was asked: the client is told so (the approval page refuses the same way).
      const code = verdict.code !== 'expired' && itemsSoldOut(lockedView) ? ('sold_out_at_approval' as const) : undefined;
      return { to: informationStatus(lockedView), actor: 'system', reason, code };
    });
  }

  private async expireIfDue(db: Database, record: CheckoutRecord): Promise<CheckoutRecord> {
    if (isTerminal(record.status) || record.expiresAt > this.now()) return record;
    return this.change(db, record.id, (locked) =>
      isTerminal(locked.status) ? undefined : { to: 'canceled', actor: 'system', reason: 'expired', code: 'checkout_expired' },
    );
  }

  /**
   * One change to one checkout, in a transaction with its row locked: `decide` looks at the checkout as it is
   * and names the move (or none); the move is checked against the machine, recorded, and pending approvals
   * are voided whenever the checkout leaves the buyer's hands.
   */
  async change(
    db: Database,
    id: string,
    decide: (record: CheckoutRecord, view: CheckoutView) => CheckoutMove | undefined,
  ): Promise<CheckoutRecord> {
    return db.transaction(async (tx) => {
      const locked = await readCheckout(tx, id, { lock: true });
      if (!locked) throw new CheckoutNotFound(id);
      const move = decide(locked, this.view(locked));
      if (!move) return locked;
      return this.apply(tx, locked, move);
    });
  }

  /**
   * One move of a checkout already locked in `tx`: checked against the machine (refused with CheckoutRefused),
   * its pending approval voided when the checkout leaves the buyer's hands, written and recorded.
   */
  async apply(
    tx: Queryable,
    locked: CheckoutRecord,
    move: CheckoutMove,
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
    if (locked.status !== move.to) await insertTransition(tx, locked.id, locked.status, move.to, move.actor, move.reason, move.code ?? null);
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
        agentPlatform: input.agentPlatform === undefined ? locked.agentPlatform : input.agentPlatform,
        note: input.note === undefined ? locked.note : input.note,
        attributes: input.attributes === undefined ? locked.attributes : input.attributes,
      };
      const to = informationStatus(this.view({ ...locked, ...update }));
      const reason = locked.status === 'requires_escalation' ? APPROVAL_SENTENCES.changed : 'updated';
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
      await voidPendingApprovals(tx, id, APPROVAL_SENTENCES.superseded);
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

  /**
   * Cancels an open checkout (any status but completed and canceled); a canceled one is answered as it is. `code`:
   * why, as the client is told (the buyer's decline is `checkout_declined`).
   */
  async cancel(db: Database, id: string, actor: Actor, reason = 'canceled', code: MoveCode = 'checkout_canceled'): Promise<CheckoutAnswer> {
    const record = await this.change(db, id, (locked) => {
      if (locked.status === 'canceled') return undefined;
      if (locked.status === 'completed') {
        throw new CheckoutRefused({ code: 'checkout_closed', content: 'This checkout is completed: its order was placed and it cannot be canceled.', params: { status: 'completed' } });
      }
      return { to: 'canceled', actor, reason, code };
    });
    return this.answer(db, record);
  }

  /** The checkout that placed the order of a cart (the cart is closed then): its id and its order's, or undefined. */
  checkedOutCart(db: Queryable, cartToken: string): Promise<{ id: string; orderId: string } | undefined> {
    return readCompletedCheckoutOfCart(db, cartToken);
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
    const notice = await this.notice(db, record);
    return { view: this.view(record), approval, ...(notice ? { notice } : {}) };
  }

  /** CheckoutAnswer.notice: from the latest move (canceled, or back from the buyer's approval), or the order's cancellation. */
  private async notice(db: Queryable, record: CheckoutRecord): Promise<CheckoutMessage | undefined> {
    if (record.status === 'completed') {
      const canceled = record.orderId ? await readOrderCancellation(db, record.orderId) : undefined;
      return canceled ? orderCanceledNotice(canceled) : undefined;
    }
    if (record.status !== 'canceled' && record.status !== 'incomplete' && record.status !== 'ready_for_complete') return undefined;
    const last = await readLastTransition(db, record.id);
    return last ? moveNotice(last) : undefined;
  }

  // --- the approval (approval-service.ts), for a caller that holds only the checkout service ---

  approvalState(db: Database, token: string): Promise<ApprovalState> {
    return this.approvals.approvalState(db, token);
  }

  approve(db: Database, token: string, formSecret: string, shownDigest: string, proof: ApprovalProof): Promise<ApprovalOutcome> {
    return this.approvals.approve(db, token, formSecret, shownDigest, proof);
  }

  decline(db: Database, token: string, formSecret: string): Promise<ApprovalOutcome> {
    return this.approvals.decline(db, token, formSecret);
  }
}
