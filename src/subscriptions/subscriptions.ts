/**
 * Subscriptions, with no I/O: what a buyer subscribed to (lines, the plan's terms as bought, where it ships), its
 * state, and the calendar of its renewals. A renewal is never a charge: it is a checkout the buyer approves on the
 * store's approval page, like any other (no payment is taken without them). The buyer is mailed its link
 * SUBSCRIPTION_NOTICE_DAYS before the delivery date, reminded once on the date, and the delivery is skipped (the
 * subscription stays active) if it is still not approved some days after.
 */
import type { PlanTerms } from '../catalog/types.js';
import type { PostalAddress } from '../checkout/shipping.js';

export const SUBSCRIPTION_STATES = ['active', 'paused', 'canceled'] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

export interface SubscriptionLine {
  variantId: number;
  productId: number;
  /** The item's name when it was bought ("Espresso Capsules - Classic / 10 capsules"), kept if the catalog drops it. */
  title: string;
  quantity: number;
}

export interface Subscription {
  id: number;
  state: SubscriptionState;
  buyerEmail: string;
  buyer: { email?: string; firstName?: string; lastName?: string; phoneNumber?: string };
  shippingAddress: PostalAddress;
  /** The shipping option's id (standard, express…), as the renewal's checkout offers it then. */
  shippingOption: string;
  /** The plan's terms as bought: a renewal is priced at that day's price less this discount. */
  plan: PlanTerms;
  lines: SubscriptionLine[];
  /** The next delivery's date. */
  nextAt: Date;
  originOrderId: string;
  createdAt: Date;
  updatedAt: Date;
  canceledAt: Date | null;
  cancelReason: string | null;
}

export const RENEWAL_STATES = ['pending', 'approved', 'skipped', 'replaced'] as const;
export type RenewalState = (typeof RENEWAL_STATES)[number];

/** One delivery of a subscription: its checkout, waiting for the buyer, then approved (an order) or skipped. */
export interface Renewal {
  id: number;
  subscriptionId: number;
  dueAt: Date;
  state: RenewalState;
  checkoutId: string;
  orderId: string | null;
  producedAt: Date;
  /** When the buyer is reminded, once, if they have not approved it yet (the delivery date, or a day after it was mailed). */
  remindAt: Date;
  /** When it is skipped if still not approved. */
  skipAt: Date;
  remindedAt: Date | null;
  closedAt: Date | null;
  closeReason: string | null;
}

/** Who changed a subscription: the buyer (their page), the merchant (admin, CLI), or the store (the scheduler). */
export type SubscriptionActor = 'buyer' | 'merchant' | 'system';

export interface SubscriptionEvent {
  at: Date;
  actor: SubscriptionActor;
  kind: string;
  detail: string;
}

const DAY_MS = 24 * 3600 * 1000;

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/** What a clock on the wall in `timeZone` reads at `at`: year, month (0 to 11), day, hours, minutes, seconds, ms. */
function wallClock(at: Date, timeZone: string): number[] {
  let format = wallClocks.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    wallClocks.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, Number(p.value)]));
  return [part.year!, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!, at.getUTCMilliseconds()];
}

/** The instant at which the wall clock in `timeZone` reads these parts (the first of two in an hour that repeats). */
function instantOf(parts: number[], timeZone: string): Date {
  const [year, month, day, hour, minute, second, ms] = parts as [number, number, number, number, number, number, number];
  const asIfUtc = Date.UTC(year, month, day, hour, minute, second, ms);
  const offsetAt = (instant: number) => Date.UTC(...(wallClock(new Date(instant), timeZone) as [number, number, number, number, number, number, number])) - instant;
  let instant = asIfUtc - offsetAt(asIfUtc);
  instant = asIfUtc - offsetAt(instant);
  return new Date(instant);
}

/**
 * The date `count` units after `from`, on the store's wall clock (`timeZone`, UTC by default): the same time of day;
 * months and years land on `day` of the month (by default `from`'s there) where the month has it, else on its last
 * day (Jan 31 + 1 month = Feb 28 or 29); days and weeks are calendar days.
 */
export function addInterval(from: Date, unit: PlanTerms['intervalUnit'], count: number, day?: number, timeZone = 'UTC'): Date {
  const [year, month, fromDay, ...time] = wallClock(from, timeZone) as [number, number, number, ...number[]];
  if (unit === 'day' || unit === 'week') return instantOf([year, month, fromDay + count * (unit === 'week' ? 7 : 1), ...time], timeZone);
  const months = month + (unit === 'year' ? 12 * count : count);
  const lastDay = new Date(Date.UTC(year, months + 1, 0)).getUTCDate();
  return instantOf([year, months, Math.min(day ?? fromDay, lastDay), ...time], timeZone);
}

/**
 * The next delivery after this one: an interval on, on the day of the month the subscription started, in the store's
 * zone (so a subscription started on the 31st comes back to the 31st after February's 28th, rather than drifting to
 * the 28th, and an evening order west of UTC keeps its own day).
 */
export const followingDate = (subscription: Pick<Subscription, 'plan' | 'createdAt'>, after: Date, timeZone = 'UTC'): Date =>
  addInterval(after, subscription.plan.intervalUnit, subscription.plan.intervalCount, wallClock(subscription.createdAt, timeZone)[2], timeZone);

/** When a delivery's renewal is produced and mailed: `noticeDays` before its date. */
export const noticeAt = (dueAt: Date, noticeDays: number): Date => new Date(dueAt.getTime() - noticeDays * DAY_MS);

/**
 * A renewal's reminder and skip dates, produced at `producedAt` for the delivery of `dueAt`: reminded on the date
 * (or a day after it was mailed, when it was mailed late), skipped `graceDays` after the reminder, and never after
 * the next delivery's own date.
 */
export function renewalDeadlines(dueAt: Date, producedAt: Date, graceDays: number, nextDueAt: Date): { remindAt: Date; skipAt: Date } {
  const remindAt = new Date(Math.max(dueAt.getTime(), producedAt.getTime() + DAY_MS));
  const skipAt = new Date(Math.min(remindAt.getTime() + Math.max(1, graceDays) * DAY_MS, Math.max(nextDueAt.getTime(), remindAt.getTime() + DAY_MS)));
  return { remindAt, skipAt };
}

/** A subscription's one-line name: its lines and plan ("2 × Espresso Capsules - Classic / 10 capsules, every month"). */
export function subscriptionTitle(subscription: Pick<Subscription, 'lines'>): string {
  return subscription.lines.map((line) => (line.quantity === 1 ? line.title : `${line.quantity} × ${line.title}`)).join(', ');
}
