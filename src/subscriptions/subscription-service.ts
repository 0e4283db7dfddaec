/**
 * Subscriptions' life. A subscription is made in the transaction of the order that bought lines on a plan (one per
 * plan: the buyer and address are the order's). Its renewals are checkouts the buyer approves on the store's approval
 * page, like any other: `run` produces each (once, across instances and restarts: the subscription's row is claimed
 * with FOR UPDATE SKIP LOCKED and a renewal is unique per subscription and date) with the mail that links to it,
 * reminds once, and skips what was not approved in time. The buyer changes their subscriptions on their page, the
 * merchant in the admin or the terminal; every change is recorded and confirmed by mail (the outbox).
 *
 * Locks are taken in one order everywhere, so no two of these wait for each other: a checkout, then its renewal,
 * then the subscription. A checkout is therefore canceled in its own transaction before its renewal is closed.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Catalog } from '../catalog/catalog.js';
import { planTermsOf, planUnitPrice, type PlanTerms } from '../catalog/types.js';
import type { Database, Queryable } from '../db/database.js';
import { recordAudit, type Actor as AuditActor } from '../audit/audit-log.js';
import { CheckoutRefused, type CheckoutService } from '../checkout/checkout-service.js';
import type { CheckoutRecord, CheckoutView } from '../checkout/checkout.js';
import { itemsSoldOut } from '../checkout/checkout.js';
import { readUsAddress, type AddressInput } from '../checkout/shipping.js';
import { checkedCheckoutText } from '../checkout/fields.js';
import type { Inventory } from '../inventory/inventory.js';
import { sellableQuantity } from '../inventory/stock.js';
import { momentsIn } from '../markup/moments.js';
import { readOrder, type Order } from '../orders/orders.js';
import { addToOutbox, type MailMessage } from '../outbox/outbox.js';
import {
  claimDueSubscriptions,
  claimRenewalsDue,
  claimSettledRenewals,
  closeRenewal,
  eventsOf,
  insertEvent,
  insertLink,
  insertRenewal,
  insertSubscription,
  listSubscriptions,
  markReminded,
  pendingRenewalOf,
  purgeExpiredLinks,
  readLink,
  readRenewalByLink,
  readRenewalOfCheckout,
  readSubscription,
  renewalsOf,
  subscriptionCounts,
  subscriptionsOfOrder,
  upcomingDeliveries,
  writeSubscription,
  type SubscriptionFilter,
  type SubscriptionUpdate,
} from './subscription-store.js';
import { changedMail, manageLinkMail, renewalMail, skippedMail, startedMail, type SubscriptionMailShop } from './subscription-mail.js';
import { followingDate, noticeAt, renewalDeadlines, type Renewal, type Subscription, type SubscriptionActor, type SubscriptionEvent, type SubscriptionLine } from './subscriptions.js';

export interface SubscriptionServiceOptions {
  catalog: Catalog;
  inventory: Inventory;
  checkouts: CheckoutService;
  clock: () => Date;
  baseUrl: string;
  /** SUBSCRIPTION_NOTICE_DAYS: a renewal is mailed this many days before its delivery. */
  noticeDays: number;
  /** The most units a line may hold (the cart's ceiling). */
  maxLineQuantity: number;
  shop: SubscriptionMailShop;
  mailDeadlineSeconds: number;
  /** Where a subscription whose renewal could not be produced is reported (the others are produced all the same). */
  onError?: (what: string, error: unknown) => void;
}

export interface RunReport {
  produced: number;
  reminded: number;
  skipped: number;
  /** Subscriptions whose renewal could not be produced this time (reported; tried again at the next run). */
  failed: number;
}

export interface NextDelivery {
  dueAt: Date;
  lines: { variantId: number; title: string; quantity: number; unitPrice: number; fullUnitPrice: number; lineTotal: number; available: boolean }[];
  subtotal: number;
}

export interface SubscriptionDetails {
  subscription: Subscription;
  renewals: Renewal[];
  events: SubscriptionEvent[];
  next: NextDelivery;
  /** False when the catalog no longer offers the plan: the subscription keeps the terms it was bought on. */
  planOffered: boolean;
  /** The plans of the subscription's plan group the catalog offers now (another interval). */
  planChoices: PlanTerms[];
  orders: { id: string; number: number; createdAt: Date; total: number }[];
}

/** Who changes a subscription: its buyer (their page's link proves the mailbox), or the merchant (audited). */
export type Changer = { actor: 'buyer'; email: string } | { actor: 'merchant'; audit: AuditActor };

export type RenewalEntry =
  | { kind: 'approve'; approvalToken: string }
  | { kind: 'sold_out'; renewal: Renewal; subscription: Subscription; view: CheckoutView; soldOut: string[]; canApproveWithout: boolean }
  | { kind: 'approved'; renewal: Renewal; subscription: Subscription; order: { id: string; number: number } }
  | { kind: 'closed'; renewal: Renewal; subscription: Subscription; reason: string }
  | { kind: 'unknown' };

/** A change refused: nothing changed. `message` is a sentence for a person; `problems` name an address's fields. */
export class SubscriptionRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly problems: { field: string; content: string }[] = [],
  ) {
    super(message);
    this.name = 'SubscriptionRefused';
  }
}

export class SubscriptionNotFound extends Error {
  constructor() {
    super('no such subscription');
    this.name = 'SubscriptionNotFound';
  }
}

const DAY_MS = 24 * 3600 * 1000;
/** The buyer's link to their subscriptions page works this long. */
const MANAGE_LINK_DAYS = 30;
/** Links to one mailbox's subscriptions made in an hour (every subscription mail makes one) past which none is mailed on request. */
const LINKS_PER_MAILBOX_HOUR = 10;
/** A code mailed with a subscriptions link works this long, for this many tries. */
const CODE_MINUTES = 15;
const CODE_TRIES = 5;
/** Rows one claim takes; each is produced in its own transaction. */
const BATCH = 20;

/** What the store did, told to the buyer, where the buyer's own words ("Your subscription is paused") do not turn into it. */
const STORE_DID: Record<string, string> = {
  paused: 'The store paused your subscription',
  resumed: 'The store resumed your subscription',
  canceled: 'The store canceled your subscription',
};

/** The most characters of a cancellation's reason (the admin's form says the same). */
const MAX_REASON = 200;
/** A change found the schedule had produced a renewal under it: it starts again. */
const AGAIN = Symbol('again');

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
const secret = () => randomBytes(32).toString('base64url');

export class SubscriptionService {
  constructor(private readonly options: SubscriptionServiceOptions) {}

  private now(): Date {
    return this.options.clock();
  }

  /** STORE_TIMEZONE: the wall clock deliveries' dates follow. */
  private get zone(): string {
    return this.options.shop.timeZone;
  }

  private get graceDays(): number {
    return this.options.noticeDays;
  }

  renewalUrl(token: string): string {
    return `${this.options.baseUrl}/subscriptions/renewals/${token}`;
  }

  // --- made by an order, renewed by an order ---

  /**
   * In the transaction of an order just placed (ApprovalService.afterOrderPlaced): a renewal's order marks it approved
   * and moves its subscription to the next date; any other order's plan lines become one subscription per plan.
   */
  readonly onOrderPlaced = async (tx: Queryable, order: Order, checkout: CheckoutRecord): Promise<void> => {
    const now = this.now();
    const renewal = await readRenewalOfCheckout(tx, checkout.id, { lock: true });
    if (renewal) {
      if (renewal.state !== 'pending') return;
      await closeRenewal(tx, renewal.id, 'approved', now, `approved: order #${order.number}`, order.id);
      const subscription = await readSubscription(tx, renewal.subscriptionId, { lock: true });
      if (subscription && subscription.nextAt.getTime() === renewal.dueAt.getTime()) {
        await writeSubscription(tx, subscription.id, { nextAt: followingDate(subscription, renewal.dueAt, this.zone) }, now);
      }
      await insertEvent(tx, renewal.subscriptionId, now, 'buyer', 'renewal_approved', `order #${order.number}`);
      return;
    }
    const byPlan = new Map<number, { plan: PlanTerms; lines: SubscriptionLine[] }>();
    for (const line of order.lines) {
      if (!line.sellingPlan) continue;
      const { fullUnitPrice: _full, ...plan } = line.sellingPlan;
      const group = byPlan.get(plan.sellingPlanId) ?? { plan, lines: [] };
      group.lines.push({ variantId: line.variantId, productId: line.productId, title: line.title, quantity: line.quantity });
      byPlan.set(plan.sellingPlanId, group);
    }
    for (const { plan, lines } of byPlan.values()) {
      const subscription = await insertSubscription(tx, {
        buyerEmail: order.buyerEmail,
        buyer: order.buyer,
        shippingAddress: order.shippingAddress,
        shippingOption: order.shippingOption.id,
        plan,
        lines,
        nextAt: followingDate({ plan, createdAt: now }, now, this.zone),
        originOrderId: order.id,
        createdAt: now,
      });
      await insertEvent(tx, subscription.id, now, 'buyer', 'created', `order #${order.number}`);
      await this.mail(tx, startedMail(subscription, await this.manageUrl(tx, subscription.buyerEmail), this.options.shop));
    }
  };

  // --- the schedule ---

  /**
   * What is due as of `asOf` (now by default): renewals whose delivery is within the notice days are produced and
   * mailed, renewals at their date reminded once, renewals past their skip date (or declined, or expired) skipped.
   * Idempotent: run twice, or on every instance at once, each happens once.
   */
  async run(db: Database, asOf: Date = this.now()): Promise<RunReport> {
    const report: RunReport = { produced: 0, reminded: 0, skipped: 0, failed: 0 };
    // Not approved in time: the checkout is canceled first (its own transaction), then the renewal closed below.
    for (const renewal of await claimRenewalsDue(db, 'skip', asOf, 500)) {
      await this.options.checkouts.cancel(db, renewal.checkoutId, 'system', 'the renewal was not approved in time', 'checkout_expired').catch((error: unknown) => {
        if (!(error instanceof CheckoutRefused)) throw error;
      });
    }
    report.skipped += await this.settleClosedCheckouts(db, asOf);
    for (;;) {
      const reminded = await db.transaction(async (tx) => {
        const due = await claimRenewalsDue(tx, 'remind', asOf, BATCH);
        for (const renewal of due) await this.remind(tx, renewal, asOf);
        return due.length;
      });
      report.reminded += reminded;
      if (reminded < BATCH) break;
    }
    // One subscription per transaction: one that cannot be produced (its row rolled back) holds up no other.
    const failed: number[] = [];
    for (;;) {
      let claimed: number | undefined;
      try {
        const produced = await db.transaction(async (tx) => {
          const [subscription] = await claimDueSubscriptions(tx, new Date(asOf.getTime() + this.options.noticeDays * DAY_MS), 1, failed);
          if (!subscription) return false;
          claimed = subscription.id;
          await this.produce(tx, subscription, asOf);
          return true;
        });
        if (!produced) break;
        report.produced++;
      } catch (error) {
        if (claimed === undefined) throw error;
        failed.push(claimed);
        report.failed++;
        this.options.onError?.(`the renewal of subscription ${claimed} could not be produced; tried again at the next run`, error);
      }
    }
    await purgeExpiredLinks(db, asOf);
    return report;
  }

  /** The renewal of one subscription, if it is due (a change replaced the one waiting): as the schedule would. */
  private async produceOne(db: Database, id: number, asOf: Date): Promise<void> {
    await db.transaction(async (tx) => {
      const [subscription] = await claimDueSubscriptions(tx, new Date(asOf.getTime() + this.options.noticeDays * DAY_MS), 1, [], id);
      if (subscription) await this.produce(tx, subscription, asOf);
    });
  }

  /** Pending renewals whose checkout was canceled (declined by the buyer, expired, not approved in time): skipped. */
  private async settleClosedCheckouts(db: Database, asOf: Date): Promise<number> {
    let skipped = 0;
    for (;;) {
      const count = await db.transaction(async (tx) => {
        const settled = await claimSettledRenewals(tx, asOf, BATCH);
        for (const renewal of settled) {
          const declined = (await tx.query<{ code: string | null }>(`select code from checkout_transitions where checkout_id = $1 order by id desc limit 1`, [renewal.checkoutId]))[0]?.code === 'checkout_declined';
          const reason = declined ? 'you declined it on the approval page.' : 'it was not approved in time.';
          await this.skipRenewal(tx, renewal, asOf, reason, 'system');
          skipped++;
        }
        return settled.length;
      });
      if (count < BATCH) return skipped;
    }
  }

  /** Closes a pending renewal as skipped (its checkout already canceled), moves the subscription on and mails the buyer. */
  private async skipRenewal(tx: Queryable, renewal: Renewal, at: Date, reason: string, actor: SubscriptionActor): Promise<void> {
    await closeRenewal(tx, renewal.id, 'skipped', at, reason);
    let subscription = (await readSubscription(tx, renewal.subscriptionId, { lock: true }))!;
    if (subscription.nextAt.getTime() === renewal.dueAt.getTime()) {
      subscription = await writeSubscription(tx, subscription.id, { nextAt: followingDate(subscription, renewal.dueAt, this.zone) }, at);
    }
    await insertEvent(tx, subscription.id, at, actor, 'renewal_skipped', reason);
    await this.mail(tx, skippedMail(subscription, renewal.dueAt, reason, await this.manageUrl(tx, subscription.buyerEmail), this.options.shop));
  }

  private async remind(tx: Queryable, renewal: Renewal, at: Date): Promise<void> {
    await markReminded(tx, renewal.id, at);
    const subscription = (await readSubscription(tx, renewal.subscriptionId))!;
    const token = await this.renewalToken(tx, renewal.id);
    await insertEvent(tx, subscription.id, at, 'system', 'renewal_reminded', '');
    await this.mail(
      tx,
      renewalMail(
        subscription,
        { renewalUrl: this.renewalUrl(token), manageUrl: await this.manageUrl(tx, subscription.buyerEmail), dueAt: renewal.dueAt, skipAt: renewal.skipAt, subtotal: this.nextDelivery(subscription).subtotal },
        this.options.shop,
        true,
      ),
    );
  }

  private async renewalToken(db: Queryable, renewalId: number): Promise<string> {
    const rows = await db.query<{ link_token: string }>('select link_token from subscription_renewals where id = $1', [renewalId]);
    return rows[0]!.link_token;
  }

  /**
   * The renewal of a claimed subscription's next delivery: its checkout (the subscription's lines at that day's
   * price less the plan's saving, its address and option), the renewal row and the mail with its link. Deliveries a
   * stopped store missed entirely (a whole interval past) are passed over to the next one still ahead.
   */
  private async produce(tx: Queryable, claimed: Subscription, asOf: Date): Promise<void> {
    let subscription = claimed;
    let dueAt = subscription.nextAt;
    while (followingDate(subscription, dueAt, this.zone).getTime() <= asOf.getTime()) dueAt = followingDate(subscription, dueAt, this.zone);
    if (dueAt.getTime() !== subscription.nextAt.getTime()) {
      await insertEvent(tx, subscription.id, asOf, 'system', 'deliveries_missed', `the store was not running at the date of a delivery; the next is ${dueAt.toISOString().slice(0, 10)}`);
      subscription = await writeSubscription(tx, subscription.id, { nextAt: dueAt }, asOf);
      if (noticeAt(dueAt, this.options.noticeDays).getTime() > asOf.getTime()) return;
    }
    const snapshot = this.options.catalog.snapshot;
    const lines = subscription.lines.filter((line) => snapshot.variantById(line.variantId) !== undefined);
    if (lines.length === 0) {
      await writeSubscription(tx, subscription.id, { state: 'canceled', canceledAt: asOf, cancelReason: 'its items are no longer sold' }, asOf);
      const canceled = (await readSubscription(tx, subscription.id))!;
      await insertEvent(tx, subscription.id, asOf, 'system', 'canceled', 'its items are no longer sold');
      await this.mail(tx, changedMail(canceled, 'Your subscription ended: its items are no longer sold', await this.manageUrl(tx, canceled.buyerEmail), this.options.shop));
      return;
    }
    // Mailed now, whatever date it is produced as of: a catch-up run (--as-of a past date) gives the buyer their days.
    const mailedAt = new Date(Math.max(asOf.getTime(), this.now().getTime()));
    const { remindAt, skipAt } = renewalDeadlines(dueAt, mailedAt, this.graceDays, followingDate(subscription, dueAt, this.zone));
    const checkout = await this.options.checkouts.createWithin(
      tx,
      {
        // A line over the store's ceiling (lowered since) is renewed at the ceiling rather than never.
        lines: lines.map((line) => ({ variantId: line.variantId, quantity: Math.min(line.quantity, this.options.maxLineQuantity), sellingPlanId: subscription.plan.sellingPlanId, plan: subscription.plan })),
        buyer: subscription.buyer,
        destination: { ...subscription.shippingAddress },
        shippingOption: subscription.shippingOption,
      },
      'browser',
      'system',
      `the renewal of subscription ${subscription.id}`,
      // Open a day past its skip date: the skip, not the checkout's expiry, says what happened.
      new Date(skipAt.getTime() + DAY_MS),
    );
    const token = secret();
    await insertRenewal(tx, { subscriptionId: subscription.id, dueAt, checkoutId: checkout.id, linkToken: token, producedAt: asOf, remindAt, skipAt });
    await insertEvent(tx, subscription.id, asOf, 'system', 'renewal_mailed', `delivery of ${dueAt.toISOString().slice(0, 10)}`);
    await this.mail(
      tx,
      renewalMail(
        subscription,
        { renewalUrl: this.renewalUrl(token), manageUrl: await this.manageUrl(tx, subscription.buyerEmail), dueAt, skipAt, subtotal: this.nextDelivery(subscription).subtotal },
        this.options.shop,
        false,
      ),
    );
  }

  // --- the renewal's link ---

  /**
   * Where the renewal's link leads: its approval page (a fresh approval is issued when the last one lapsed or the
   * checkout moved: prices change between the mail and the tap), what sold out, or what became of it.
   */
  async openRenewal(db: Database, token: string): Promise<RenewalEntry> {
    const renewal = token.length > 20 && token.length < 100 ? await readRenewalByLink(db, token) : undefined;
    if (!renewal) return { kind: 'unknown' };
    const subscription = (await readSubscription(db, renewal.subscriptionId))!;
    const closed = await this.closedEntry(db, renewal, subscription);
    if (closed) return closed;
    const answer = await this.options.checkouts.get(db, renewal.checkoutId);
    if (!answer) return { kind: 'unknown' };
    const status = answer.view.record.status;
    if (status === 'completed' || status === 'canceled') {
      // Approved or canceled a moment ago: the schedule's settlement says which in words; the order is shown at once.
      const order = answer.view.record.orderId ? await readOrder(db, answer.view.record.orderId) : undefined;
      if (order) return { kind: 'approved', renewal, subscription, order: { id: order.id, number: order.number } };
      return { kind: 'closed', renewal, subscription, reason: 'This delivery was skipped: it was not approved in time.' };
    }
    if (status === 'requires_escalation' && answer.approval) return { kind: 'approve', approvalToken: answer.approval.token };
    if (status === 'complete_in_progress') {
      // Approved and being paid on the provider's page: its approval page says where the payment stands.
      const [link] = await db.query<{ token: string }>('select token from checkout_approvals where checkout_id = $1 and used_at is null and voided_at is null order by created_at desc limit 1', [renewal.checkoutId]);
      return link ? { kind: 'approve', approvalToken: link.token } : { kind: 'closed', renewal, subscription, reason: 'The payment for this delivery is under way.' };
    }
    if (itemsSoldOut(answer.view)) return this.soldOut(renewal, subscription, answer.view);
    try {
      const asked = await this.options.checkouts.requestCompletion(db, renewal.checkoutId, 'buyer');
      if (asked.approval) return { kind: 'approve', approvalToken: asked.approval.token };
      if (itemsSoldOut(asked.view)) return this.soldOut(renewal, subscription, asked.view);
      return { kind: 'closed', renewal, subscription, reason: asked.view.blockers.map((b) => b.content).join(' ') || 'This delivery cannot be approved.' };
    } catch (error) {
      // It moved under the tap (approved, paid, canceled a moment ago): the link's next look says how it stands.
      if (error instanceof CheckoutRefused) return { kind: 'closed', renewal, subscription, reason: `${error.reason.content} Open the link again to see how it stands.` };
      throw error;
    }
  }

  /** The buyer approves the delivery without what sold out: the lines in stock (as many units as there are), then its approval page. */
  async approveWithoutSoldOut(db: Database, token: string): Promise<RenewalEntry> {
    const entry = await this.openRenewal(db, token);
    if (entry.kind !== 'sold_out' || !entry.canApproveWithout) return entry;
    const record = entry.view.record;
    const inventory = this.options.inventory;
    const lines = entry.view.lines.flatMap((priced) => {
      const sellable = priced.item ? sellableQuantity(priced.item.variant, inventory) : 0;
      const quantity = Math.min(priced.line.quantity, sellable);
      return quantity > 0 ? [{ variantId: priced.line.variantId, quantity, sellingPlanId: priced.line.sellingPlanId, plan: priced.line.plan, properties: priced.line.properties }] : [];
    });
    try {
      await this.options.checkouts.update(db, record.id, { lines, buyer: record.buyer, destination: record.destination, shippingOption: record.shippingOption }, 'buyer');
    } catch (error) {
      if (!(error instanceof CheckoutRefused)) throw error;
      // Closed meanwhile (approved elsewhere, skipped): the link says what became of it.
    }
    return this.openRenewal(db, token);
  }

  private soldOut(renewal: Renewal, subscription: Subscription, view: CheckoutView): RenewalEntry {
    const inventory = this.options.inventory;
    const soldOut = view.lines.filter((priced) => !priced.item || sellableQuantity(priced.item.variant, inventory) < priced.line.quantity).map((priced) => priced.title);
    const canApproveWithout = view.lines.some((priced) => priced.item && sellableQuantity(priced.item.variant, inventory) > 0);
    return { kind: 'sold_out', renewal, subscription, view, soldOut, canApproveWithout };
  }

  private async closedEntry(db: Queryable, renewal: Renewal, subscription: Subscription): Promise<RenewalEntry | undefined> {
    if (renewal.state === 'approved' && renewal.orderId) {
      const order = await readOrder(db, renewal.orderId);
      if (order) return { kind: 'approved', renewal, subscription, order: { id: order.id, number: order.number } };
    }
    if (renewal.state === 'skipped') return { kind: 'closed', renewal, subscription, reason: `This delivery was skipped: ${renewal.closeReason ?? ''}`.trim() };
    if (renewal.state === 'replaced') return { kind: 'closed', renewal, subscription, reason: 'This delivery was changed; a new link was mailed to you.' };
    return undefined;
  }

  // --- reading ---

  async list(db: Queryable, filter: SubscriptionFilter = {}): Promise<Subscription[]> {
    return listSubscriptions(db, filter);
  }

  async get(db: Queryable, id: number): Promise<SubscriptionDetails | undefined> {
    const subscription = await readSubscription(db, id);
    return subscription ? this.details(db, subscription) : undefined;
  }

  async ofBuyer(db: Queryable, email: string): Promise<SubscriptionDetails[]> {
    const subscriptions = await listSubscriptions(db, { email, limit: 100 });
    return Promise.all(subscriptions.map((subscription) => this.details(db, subscription)));
  }

  upcoming(db: Queryable, limit = 50): Promise<{ subscription: Subscription; renewal: Renewal | undefined }[]> {
    return upcomingDeliveries(db, limit);
  }

  counts(db: Queryable, since: Date): Promise<{ active: number; paused: number; canceled: number; renewalsApproved: number }> {
    return subscriptionCounts(db, since);
  }

  private async details(db: Queryable, subscription: Subscription): Promise<SubscriptionDetails> {
    const renewals = await renewalsOf(db, subscription.id);
    const orderIds = [subscription.originOrderId, ...renewals.flatMap((r) => (r.orderId ? [r.orderId] : []))];
    const orders = await db.query<{ id: string; number: string | number; created_at: Date | string; total: number }>(
      'select id, number, created_at, total from orders where id = any($1::text[]) order by created_at desc',
      [orderIds],
    );
    return {
      subscription,
      renewals,
      events: await eventsOf(db, subscription.id),
      next: this.nextDelivery(subscription),
      planOffered: this.offeredPlan(subscription) !== undefined,
      planChoices: this.planChoices(subscription),
      orders: orders.map((row) => ({ id: row.id, number: Number(row.number), createdAt: new Date(row.created_at), total: row.total })),
    };
  }

  /** The next delivery priced now: each line at today's price less the plan's saving, and whether it is in stock. */
  nextDelivery(subscription: Subscription): NextDelivery {
    const snapshot = this.options.catalog.snapshot;
    const lines = subscription.lines.map((line) => {
      const item = snapshot.variantById(line.variantId);
      const fullUnitPrice = item?.variant.priceCents ?? 0;
      const unitPrice = item ? planUnitPrice(fullUnitPrice, subscription.plan.discountPercent) : 0;
      const available = item !== undefined && sellableQuantity(item.variant, this.options.inventory) >= line.quantity;
      return { variantId: line.variantId, title: line.title, quantity: line.quantity, unitPrice, fullUnitPrice, lineTotal: unitPrice * line.quantity, available };
    });
    return { dueAt: subscription.nextAt, lines, subtotal: lines.reduce((sum, line) => sum + line.lineTotal, 0) };
  }

  /** The plans of the subscription's group that the catalog offers now, for any of its products. */
  private planChoices(subscription: Subscription): PlanTerms[] {
    const product = this.options.catalog.snapshot.variantById(subscription.lines[0]?.variantId ?? 0)?.product;
    const group = product?.sellingPlanGroups.find((g) => g.id === subscription.plan.groupId);
    return group ? group.plans.map((plan) => planTermsOf(group, plan)) : [];
  }

  private offeredPlan(subscription: Subscription): PlanTerms | undefined {
    return this.planChoices(subscription).find((plan) => plan.sellingPlanId === subscription.plan.sellingPlanId);
  }

  // --- changes ---

  async skipNext(db: Database, id: number, by: Changer): Promise<Subscription> {
    return this.change(db, id, by, 'skipped', (subscription) => {
      if (subscription.state !== 'active') throw new SubscriptionRefused('not_active', `Only an active subscription has a next delivery to skip; this one is ${subscription.state}.`);
      return { update: { nextAt: followingDate(subscription, subscription.nextAt, this.zone) }, done: `You skipped the delivery of ${this.day(subscription.nextAt)}`, pending: 'skipped' };
    });
  }

  async pause(db: Database, id: number, by: Changer): Promise<Subscription> {
    return this.change(db, id, by, 'paused', (subscription) => {
      if (subscription.state !== 'active') throw new SubscriptionRefused('not_active', `Only an active subscription can be paused; this one is ${subscription.state}.`);
      // The delivery waiting for approval is withdrawn (not skipped): resumed before its date, it is mailed again.
      return { update: { state: 'paused' }, done: 'Your subscription is paused', pending: 'replaced' };
    });
  }

  async resume(db: Database, id: number, by: Changer): Promise<Subscription> {
    return this.change(db, id, by, 'resumed', (subscription) => {
      if (subscription.state !== 'paused') throw new SubscriptionRefused('not_paused', `Only a paused subscription can be resumed; this one is ${subscription.state}.`);
      // The next delivery is the first one still ahead (one the pause withdrew is mailed again, with its days to approve).
      let nextAt = subscription.nextAt;
      const now = this.now().getTime();
      while (nextAt.getTime() < now) nextAt = followingDate(subscription, nextAt, this.zone);
      return { update: { state: 'active', nextAt }, done: 'Your subscription is active again' };
    });
  }

  async cancel(db: Database, id: number, by: Changer, reason?: string): Promise<Subscription> {
    const why = reason?.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]+/gu, ' ').trim() || null;
    if (why && why.length > MAX_REASON) throw new SubscriptionRefused('reason', `The reason is at most ${MAX_REASON} characters (this one has ${why.length}).`);
    return this.change(db, id, by, 'canceled', (subscription) => {
      if (subscription.state === 'canceled') throw new SubscriptionRefused('canceled', 'This subscription is already canceled.');
      return { update: { state: 'canceled', canceledAt: this.now(), cancelReason: why ?? (by.actor === 'buyer' ? 'canceled by the buyer' : 'canceled by the store') }, done: 'Your subscription is canceled', pending: 'skipped' };
    });
  }

  async setQuantity(db: Database, id: number, by: Changer, variantId: number, quantity: number): Promise<Subscription> {
    return this.change(db, id, by, 'quantity_changed', (subscription) => {
      this.refuseClosed(subscription);
      const max = this.options.maxLineQuantity;
      if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > max) throw new SubscriptionRefused('quantity', `The quantity must be a whole number from 1 to ${max}.`);
      const line = subscription.lines.find((l) => l.variantId === variantId);
      if (!line) throw new SubscriptionRefused('no_line', 'That item is not part of this subscription.');
      const lines = subscription.lines.map((l) => (l.variantId === variantId ? { ...l, quantity } : l));
      return { update: { lines }, done: `You changed the quantity of ${line.title} to ${quantity}`, pending: 'replaced' };
    });
  }

  async setPlan(db: Database, id: number, by: Changer, sellingPlanId: number): Promise<Subscription> {
    return this.change(db, id, by, 'plan_changed', (subscription) => {
      this.refuseClosed(subscription);
      const plan = this.planChoices(subscription).find((p) => p.sellingPlanId === sellingPlanId);
      if (!plan) throw new SubscriptionRefused('plan', 'Choose one of the delivery intervals offered for this subscription.');
      return { update: { plan }, done: `You changed the delivery to ${plan.name}`, pending: 'replaced' };
    });
  }

  async setAddress(db: Database, id: number, by: Changer, given: AddressInput): Promise<Subscription> {
    let input: AddressInput;
    try {
      input = checkedCheckoutText({ lines: [], destination: given }).destination ?? {};
    } catch (error) {
      if (error instanceof CheckoutRefused) throw new SubscriptionRefused('address', error.message, [{ field: String(error.field?.at(-1) ?? 'address'), content: error.message }]);
      throw error;
    }
    return this.change(db, id, by, 'address_changed', (subscription) => {
      this.refuseClosed(subscription);
      const read = readUsAddress(input, subscription.buyer);
      if (!read.address) {
        const problems = read.problems.map((p) => ({ field: String(p.field), content: p.content }));
        throw new SubscriptionRefused('address', problems.map((p) => p.content).join(' ') || 'A US shipping address is needed.', problems);
      }
      return { update: { shippingAddress: read.address }, done: 'You changed the shipping address', pending: 'replaced' };
    });
  }

  private refuseClosed(subscription: Subscription): void {
    if (subscription.state === 'canceled') throw new SubscriptionRefused('canceled', 'This subscription is canceled and can no longer change.');
  }

  /**
   * One change: the delivery waiting for the buyer's approval, if any, is skipped or replaced first (its checkout
   * canceled in its own transaction; one approved or being paid meanwhile refuses the change), then the renewal and
   * subscription are locked and changed, the change recorded (and audited for the merchant) and the buyer mailed. A
   * replaced delivery is produced again at once with the new terms. If the schedule produced a renewal between the
   * first look and the lock (with the old terms), nothing is kept and the change starts again.
   */
  private async change(
    db: Database,
    id: number,
    by: Changer,
    kind: string,
    decide: (subscription: Subscription) => { update: SubscriptionUpdate; done: string; pending?: 'skipped' | 'replaced' },
  ): Promise<Subscription> {
    for (let attempt = 1; ; attempt++) {
      const changed = await this.changeOnce(db, id, by, kind, decide);
      if (changed !== AGAIN) return changed;
      if (attempt === 3) throw new SubscriptionRefused('busy', 'The subscription was being renewed at that moment, so nothing was changed. Try again.');
    }
  }

  private async changeOnce(
    db: Database,
    id: number,
    by: Changer,
    kind: string,
    decide: (subscription: Subscription) => { update: SubscriptionUpdate; done: string; pending?: 'skipped' | 'replaced' },
  ): Promise<Subscription | typeof AGAIN> {
    const current = await readSubscription(db, id);
    if (!current || (by.actor === 'buyer' && current.buyerEmail.toLowerCase() !== by.email.toLowerCase())) throw new SubscriptionNotFound();
    const planned = decide(current);
    const pending = planned.pending ? await pendingRenewalOf(db, id) : undefined;
    if (pending) {
      try {
        await this.options.checkouts.cancel(db, pending.checkoutId, by.actor === 'buyer' ? 'buyer' : 'merchant', `the subscription's delivery was ${planned.pending}`);
      } catch (error) {
        if (!(error instanceof CheckoutRefused)) throw error;
        const whose = by.actor === 'buyer' ? 'your' : "the buyer's";
        throw error.reason.code === 'checkout_closed'
          ? new SubscriptionRefused('approved', `The delivery waiting for ${whose} approval was approved a moment ago; nothing was changed. Try again for the next one.`)
          : new SubscriptionRefused('paying', `The delivery waiting for ${whose} approval is being paid right now; nothing was changed. Try again in a few minutes.`);
      }
    }
    const now = this.now();
    const changed = await db.transaction(async (tx) => {
      // Renewal before subscription, as everywhere. One other than the first look's means the schedule produced it meanwhile.
      const renewal = await pendingRenewalOf(tx, id, { lock: true });
      if (planned.pending && renewal && renewal.id !== pending?.id) return AGAIN;
      const locked = (await readSubscription(tx, id, { lock: true }))!;
      const { update, done } = decide(locked);
      if (renewal && planned.pending) {
        await closeRenewal(tx, renewal.id, planned.pending, now, planned.pending === 'skipped' ? `${done.replace(/^You /, 'you ').replace(/^Your /, 'your ')}.` : `${kind.replace('_', ' ')} before it was approved`);
      }
      const written = await writeSubscription(tx, id, update, now);
      const actor: SubscriptionActor = by.actor;
      // In the buyer's words to the buyer ("You skipped…", "Your subscription is canceled"); the store's when it was the store.
      const told = by.actor === 'merchant' ? (STORE_DID[kind] ?? done.replace(/^You /, 'The store ')) : done;
      await insertEvent(tx, id, now, actor, kind, by.actor === 'merchant' ? `${kind.replace('_', ' ')} by ${by.audit.label}` : told);
      if (by.actor === 'merchant') await recordAudit(tx, by.audit, { action: `subscription.${kind}`, summary: `subscription ${id}: ${kind.replace('_', ' ')}` });
      await this.mail(tx, changedMail(written, told, await this.manageUrl(tx, written.buyerEmail), this.options.shop));
      return written;
    });
    if (changed === AGAIN) return AGAIN;
    // Its delivery with the new terms, now (the buyer mailed its link); the schedule's next minute does it otherwise.
    if (planned.pending === 'replaced' && changed.state === 'active') {
      await this.produceOne(db, id, this.now()).catch((error: unknown) => this.options.onError?.(`the renewal of subscription ${id} could not be produced; tried again at the next run`, error));
    }
    return changed;
  }

  private day(at: Date): string {
    return momentsIn(this.options.shop.timeZone).day(at);
  }

  // --- the buyer's links ---

  /** A new link to the subscriptions of `email`, working MANAGE_LINK_DAYS (kept as its digest). */
  async manageUrl(tx: Queryable, email: string): Promise<string> {
    const token = secret();
    const now = this.now();
    await insertLink(tx, sha256(token), email, now, new Date(now.getTime() + MANAGE_LINK_DAYS * DAY_MS));
    return `${this.options.baseUrl}/subscriptions/manage/${token}`;
  }

  /** The mailbox a subscriptions link was made for, while it works. */
  async buyerOfManageSecret(db: Queryable, token: string): Promise<string | undefined> {
    if (token.length < 20 || token.length > 100) return undefined;
    return readLink(db, sha256(token), this.now());
  }

  /**
   * Mails a fresh link to `email` if it has subscriptions; nothing otherwise (the page answers the same either way),
   * nor once LINKS_PER_MAILBOX_HOUR links were made for it in the last hour (no one floods a buyer's mailbox).
   */
  async mailManageLink(db: Database, email: string): Promise<void> {
    const address = email.trim().toLowerCase();
    await db.transaction(async (tx) => {
      const [row] = await tx.query<{ buyer_email: string }>('select buyer_email from subscriptions where lower(buyer_email) = $1 limit 1', [address]);
      if (!row) return;
      const since = new Date(this.now().getTime() - 3600_000).toISOString();
      const [made] = await tx.query<{ n: string | number }>('select count(*) as n from subscription_links where lower(buyer_email) = $1 and created_at > $2', [address, since]);
      if (Number(made!.n) >= LINKS_PER_MAILBOX_HOUR) return;
      // With a code for the page that asked: a new one ends the mailbox's earlier codes.
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const now = this.now();
      await tx.query('update subscription_codes set used_at = $2 where lower(buyer_email) = $1 and used_at is null', [address, now.toISOString()]);
      await tx.query('insert into subscription_codes (buyer_email, code_digest, created_at, expires_at) values ($1, $2, $3, $4)', [
        row.buyer_email,
        sha256(`${address}:${code}`),
        now.toISOString(),
        new Date(now.getTime() + CODE_MINUTES * 60_000).toISOString(),
      ]);
      await this.mail(tx, manageLinkMail(row.buyer_email, await this.manageUrl(tx, row.buyer_email), code, this.options.shop));
    });
  }

  /**
   * The code mailed with a subscriptions link, typed on the page that asked: a fresh link to the subscriptions of
   * `email` when it is the mailbox's latest code, unused, unexpired and tried fewer than CODE_TRIES times; undefined
   * otherwise (every wrong try counts).
   */
  async manageUrlForCode(db: Database, email: string, code: string): Promise<string | undefined> {
    const address = email.trim().toLowerCase();
    if (!/^\d{6}$/.test(code.trim())) return undefined;
    const now = this.now();
    return db.transaction(async (tx) => {
      const [row] = await tx.query<{ id: string; buyer_email: string; code_digest: string; attempts: number }>(
        `select id, buyer_email, code_digest, attempts from subscription_codes
          where lower(buyer_email) = $1 and used_at is null and expires_at > $2 order by id desc limit 1 for update`,
        [address, now.toISOString()],
      );
      if (!row || row.attempts >= CODE_TRIES) return undefined;
      if (row.code_digest !== sha256(`${address}:${code.trim()}`)) {
        await tx.query('update subscription_codes set attempts = attempts + 1 where id = $1', [row.id]);
        return undefined;
      }
      await tx.query('update subscription_codes set used_at = $2 where id = $1', [row.id, now.toISOString()]);
      return this.manageUrl(tx, row.buyer_email);
    });
  }

  /**
   * Mails the buyer of an order that started or renewed a subscription a link to their subscriptions (the order page
   * asks): false when the order has none. The order's id is no proof of the mailbox (agents hold it), so the link goes
   * to the mailbox, never to whoever asked, and as often as `mailManageLink` allows.
   */
  async mailManageLinkForOrder(db: Database, orderId: string): Promise<boolean> {
    const started = await subscriptionsOfOrder(db, orderId);
    const renewed = started.length ? [] : await db.query<{ id: string }>('select id from subscription_renewals where order_id = $1', [orderId]);
    if (started.length === 0 && renewed.length === 0) return false;
    const order = await readOrder(db, orderId);
    if (!order) return false;
    await this.mailManageLink(db, order.buyerEmail);
    return true;
  }

  private async mail(tx: Queryable, message: MailMessage): Promise<void> {
    await addToOutbox(tx, { kind: 'mail', topic: 'subscription', message }, this.options.mailDeadlineSeconds);
  }
}
