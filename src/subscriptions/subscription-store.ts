/** Subscriptions, their renewals, events and the buyer's links in PostgreSQL. I/O only; the rules are subscriptions.ts's. */
import type { Queryable } from '../db/database.js';
import type { Renewal, RenewalState, Subscription, SubscriptionActor, SubscriptionEvent, SubscriptionState } from './subscriptions.js';

const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
const dateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : date(value));

type Row = Record<string, unknown>;

function subscriptionFromRow(row: Row): Subscription {
  return {
    id: Number(row.id),
    state: row.state as SubscriptionState,
    buyerEmail: String(row.buyer_email),
    buyer: json(row.buyer as Subscription['buyer']),
    shippingAddress: json(row.shipping_address as Subscription['shippingAddress']),
    shippingOption: String(row.shipping_option),
    plan: json(row.plan as Subscription['plan']),
    lines: json(row.lines as Subscription['lines']),
    nextAt: date(row.next_at),
    originOrderId: String(row.origin_order_id),
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    canceledAt: dateOrNull(row.canceled_at),
    cancelReason: row.cancel_reason === null ? null : String(row.cancel_reason),
  };
}

function renewalFromRow(row: Row): Renewal {
  return {
    id: Number(row.id),
    subscriptionId: Number(row.subscription_id),
    dueAt: date(row.due_at),
    state: row.state as RenewalState,
    checkoutId: String(row.checkout_id),
    orderId: row.order_id === null ? null : String(row.order_id),
    producedAt: date(row.produced_at),
    remindAt: date(row.remind_at),
    skipAt: date(row.skip_at),
    remindedAt: dateOrNull(row.reminded_at),
    closedAt: dateOrNull(row.closed_at),
    closeReason: row.close_reason === null ? null : String(row.close_reason),
  };
}

const SUBSCRIPTION_COLUMNS =
  'id, state, buyer_email, buyer, shipping_address, shipping_option, plan, lines, next_at, origin_order_id, created_at, updated_at, canceled_at, cancel_reason';
const RENEWAL_COLUMNS = 'id, subscription_id, due_at, state, checkout_id, order_id, produced_at, remind_at, skip_at, reminded_at, closed_at, close_reason';

export type NewSubscription = Omit<Subscription, 'id' | 'state' | 'updatedAt' | 'canceledAt' | 'cancelReason'>;

export async function insertSubscription(tx: Queryable, subscription: NewSubscription): Promise<Subscription> {
  const rows = await tx.query<Row>(
    `insert into subscriptions (state, buyer_email, buyer, shipping_address, shipping_option, plan, lines, next_at, origin_order_id, created_at, updated_at)
     values ('active', $1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     returning ${SUBSCRIPTION_COLUMNS}`,
    [
      subscription.buyerEmail,
      JSON.stringify(subscription.buyer),
      JSON.stringify(subscription.shippingAddress),
      subscription.shippingOption,
      JSON.stringify(subscription.plan),
      JSON.stringify(subscription.lines),
      subscription.nextAt.toISOString(),
      subscription.originOrderId,
      subscription.createdAt.toISOString(),
    ],
  );
  return subscriptionFromRow(rows[0]!);
}

/** A subscription by id; `lock` holds its row until the caller's transaction ends. */
export async function readSubscription(db: Queryable, id: number, options: { lock?: boolean } = {}): Promise<Subscription | undefined> {
  if (!Number.isSafeInteger(id) || id < 1) return undefined;
  const rows = await db.query<Row>(`select ${SUBSCRIPTION_COLUMNS} from subscriptions where id = $1${options.lock ? ' for update' : ''}`, [id]);
  return rows[0] ? subscriptionFromRow(rows[0]) : undefined;
}

/** What may change of a subscription: everything but its identity and origin. */
export type SubscriptionUpdate = Partial<Pick<Subscription, 'state' | 'shippingAddress' | 'shippingOption' | 'plan' | 'lines' | 'nextAt' | 'canceledAt' | 'cancelReason'>>;

export async function writeSubscription(tx: Queryable, id: number, update: SubscriptionUpdate, at: Date): Promise<Subscription> {
  const current = (await readSubscription(tx, id))!;
  const next = { ...current, ...update };
  const rows = await tx.query<Row>(
    `update subscriptions set state = $2, shipping_address = $3, shipping_option = $4, plan = $5, lines = $6, next_at = $7,
            canceled_at = $8, cancel_reason = $9, updated_at = $10
      where id = $1 returning ${SUBSCRIPTION_COLUMNS}`,
    [
      id,
      next.state,
      JSON.stringify(next.shippingAddress),
      next.shippingOption,
      JSON.stringify(next.plan),
      JSON.stringify(next.lines),
      next.nextAt.toISOString(),
      next.canceledAt?.toISOString() ?? null,
      next.cancelReason,
      at.toISOString(),
    ],
  );
  return subscriptionFromRow(rows[0]!);
}

export interface SubscriptionFilter {
  state?: SubscriptionState;
  email?: string;
  /** Subscriptions with an id below this (the next page, newest first). */
  before?: number;
  limit?: number;
}

/** Subscriptions, newest first. */
export async function listSubscriptions(db: Queryable, filter: SubscriptionFilter = {}): Promise<Subscription[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.state) where.push(`state = $${params.push(filter.state)}`);
  if (filter.email !== undefined) where.push(`lower(buyer_email) = lower($${params.push(filter.email)})`);
  if (filter.before !== undefined) where.push(`id < $${params.push(filter.before)}`);
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  const rows = await db.query<Row>(
    `select ${SUBSCRIPTION_COLUMNS} from subscriptions ${where.length ? `where ${where.join(' and ')}` : ''} order by id desc limit ${limit}`,
    params,
  );
  return rows.map(subscriptionFromRow);
}

/** The subscriptions an order started. */
export async function subscriptionsOfOrder(db: Queryable, orderId: string): Promise<Subscription[]> {
  const rows = await db.query<Row>(`select ${SUBSCRIPTION_COLUMNS} from subscriptions where origin_order_id = $1 order by id`, [orderId]);
  return rows.map(subscriptionFromRow);
}

/**
 * Active subscriptions whose next delivery's renewal is due by `noticeBy` and not yet produced, locked for the
 * caller's transaction; rows another instance holds are passed over (it is producing them), and those of `passOver`.
 */
export async function claimDueSubscriptions(tx: Queryable, noticeBy: Date, limit: number, passOver: readonly number[] = [], only?: number): Promise<Subscription[]> {
  const rows = await tx.query<Row>(
    `select ${SUBSCRIPTION_COLUMNS} from subscriptions s
      where s.state = 'active' and s.next_at <= $1 and not (s.id = any($3::bigint[])) and ($4::bigint is null or s.id = $4)
        -- A date written with microseconds (by hand, in SQL) is read to the millisecond, as the renewal's was written.
        and not exists (select 1 from subscription_renewals r where r.subscription_id = s.id and r.due_at = date_trunc('milliseconds', s.next_at) and r.state <> 'replaced')
      order by s.next_at, s.id
      limit $2
      for update skip locked`,
    [noticeBy.toISOString(), limit, passOver, only ?? null],
  );
  return rows.map(subscriptionFromRow);
}

export type NewRenewal = Omit<Renewal, 'id' | 'state' | 'orderId' | 'remindedAt' | 'closedAt' | 'closeReason'> & { linkToken: string };

export async function insertRenewal(tx: Queryable, renewal: NewRenewal): Promise<Renewal> {
  const rows = await tx.query<Row>(
    `insert into subscription_renewals (subscription_id, due_at, state, checkout_id, link_token, produced_at, remind_at, skip_at)
     values ($1, $2, 'pending', $3, $4, $5, $6, $7) returning ${RENEWAL_COLUMNS}`,
    [
      renewal.subscriptionId,
      renewal.dueAt.toISOString(),
      renewal.checkoutId,
      renewal.linkToken,
      renewal.producedAt.toISOString(),
      renewal.remindAt.toISOString(),
      renewal.skipAt.toISOString(),
    ],
  );
  return renewalFromRow(rows[0]!);
}

export async function readRenewalByLink(db: Queryable, linkToken: string): Promise<Renewal | undefined> {
  const rows = await db.query<Row>(`select ${RENEWAL_COLUMNS} from subscription_renewals where link_token = $1`, [linkToken]);
  return rows[0] ? renewalFromRow(rows[0]) : undefined;
}

export async function readRenewalOfCheckout(db: Queryable, checkoutId: string, options: { lock?: boolean } = {}): Promise<Renewal | undefined> {
  const rows = await db.query<Row>(`select ${RENEWAL_COLUMNS} from subscription_renewals where checkout_id = $1${options.lock ? ' for update' : ''}`, [checkoutId]);
  return rows[0] ? renewalFromRow(rows[0]) : undefined;
}

/** A subscription's renewals, newest first. */
export async function renewalsOf(db: Queryable, subscriptionId: number, limit = 24): Promise<Renewal[]> {
  const rows = await db.query<Row>(`select ${RENEWAL_COLUMNS} from subscription_renewals where subscription_id = $1 order by id desc limit $2`, [subscriptionId, limit]);
  return rows.map(renewalFromRow);
}

/** The subscription's renewal waiting for the buyer, if any, locked when asked. */
export async function pendingRenewalOf(db: Queryable, subscriptionId: number, options: { lock?: boolean } = {}): Promise<Renewal | undefined> {
  const rows = await db.query<Row>(
    `select ${RENEWAL_COLUMNS} from subscription_renewals where subscription_id = $1 and state = 'pending'${options.lock ? ' for update' : ''}`,
    [subscriptionId],
  );
  return rows[0] ? renewalFromRow(rows[0]) : undefined;
}

/** Pending renewals whose reminder (`which` = 'remind') or skip date has come, locked, passing over others' rows. */
export async function claimRenewalsDue(tx: Queryable, which: 'remind' | 'skip', asOf: Date, limit: number): Promise<Renewal[]> {
  const condition = which === 'remind' ? 'remind_at <= $1 and reminded_at is null and skip_at > $1' : 'skip_at <= $1';
  const rows = await tx.query<Row>(
    `select ${RENEWAL_COLUMNS} from subscription_renewals where state = 'pending' and ${condition} order by id limit $2 for update skip locked`,
    [asOf.toISOString(), limit],
  );
  return rows.map(renewalFromRow);
}

/** Pending renewals whose checkout was canceled by other means: the buyer declined it, it expired, or it was not approved in time. */
export async function claimSettledRenewals(tx: Queryable, asOf: Date, limit: number): Promise<(Renewal & { checkoutStatus: string })[]> {
  const rows = await tx.query<Row>(
    `select ${RENEWAL_COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')}, c.status as checkout_status
       from subscription_renewals r join checkouts c on c.id = r.checkout_id
      where r.state = 'pending' and c.status = 'canceled'
        -- Declined by the buyer or expired; one canceled otherwise (a change under way withdrawing it) is the change's
        -- to close, unless its skip date passed (a change that stopped half-way).
        and (r.skip_at <= $2 or (select t.code from checkout_transitions t where t.checkout_id = c.id order by t.id desc limit 1) in ('checkout_declined', 'checkout_expired'))
      order by r.id limit $1 for update of r skip locked`,
    [limit, asOf.toISOString()],
  );
  return rows.map((row) => ({ ...renewalFromRow(row), checkoutStatus: String(row.checkout_status) }));
}

export async function closeRenewal(tx: Queryable, id: number, state: Exclude<RenewalState, 'pending'>, at: Date, reason: string, orderId: string | null = null): Promise<void> {
  await tx.query(`update subscription_renewals set state = $2, closed_at = $3, close_reason = $4, order_id = coalesce($5, order_id) where id = $1`, [
    id,
    state,
    at.toISOString(),
    reason,
    orderId,
  ]);
}

export async function markReminded(tx: Queryable, id: number, at: Date): Promise<void> {
  await tx.query('update subscription_renewals set reminded_at = $2 where id = $1', [id, at.toISOString()]);
}

export async function insertEvent(tx: Queryable, subscriptionId: number, at: Date, actor: SubscriptionActor, kind: string, detail = ''): Promise<void> {
  await tx.query('insert into subscription_events (subscription_id, at, actor, kind, detail) values ($1, $2, $3, $4, $5)', [
    subscriptionId,
    at.toISOString(),
    actor,
    kind,
    detail.slice(0, 500),
  ]);
}

export async function eventsOf(db: Queryable, subscriptionId: number, limit = 100): Promise<SubscriptionEvent[]> {
  const rows = await db.query<Row>('select at, actor, kind, detail from subscription_events where subscription_id = $1 order by id desc limit $2', [subscriptionId, limit]);
  return rows.map((row) => ({ at: date(row.at), actor: row.actor as SubscriptionActor, kind: String(row.kind), detail: String(row.detail) }));
}

export async function insertLink(tx: Queryable, digest: string, email: string, at: Date, expiresAt: Date): Promise<void> {
  await tx.query('insert into subscription_links (digest, buyer_email, created_at, expires_at) values ($1, $2, $3, $4)', [
    digest,
    email,
    at.toISOString(),
    expiresAt.toISOString(),
  ]);
}

export async function readLink(db: Queryable, digest: string, at: Date): Promise<string | undefined> {
  const rows = await db.query<{ buyer_email: string }>('select buyer_email from subscription_links where digest = $1 and expires_at > $2', [digest, at.toISOString()]);
  return rows[0]?.buyer_email;
}

export async function purgeExpiredLinks(db: Queryable, at: Date): Promise<void> {
  await db.query('delete from subscription_links where expires_at < $1', [at.toISOString()]);
}

/** Subscriptions by state, and renewals approved since `since` (the dashboard). */
export async function subscriptionCounts(db: Queryable, since: Date): Promise<{ active: number; paused: number; canceled: number; renewalsApproved: number }> {
  const [row] = await db.query<Row>(
    `select (select count(*) from subscriptions where state = 'active') as active,
            (select count(*) from subscriptions where state = 'paused') as paused,
            (select count(*) from subscriptions where state = 'canceled') as canceled,
            (select count(*) from subscription_renewals where state = 'approved' and closed_at >= $1) as renewals_approved`,
    [since.toISOString()],
  );
  return { active: Number(row!.active), paused: Number(row!.paused), canceled: Number(row!.canceled), renewalsApproved: Number(row!.renewals_approved) };
}

/** The next deliveries of active subscriptions, soonest first, with the renewal already produced for each, if any. */
export async function upcomingDeliveries(db: Queryable, limit = 50): Promise<{ subscription: Subscription; renewal: Renewal | undefined }[]> {
  const subscriptions = (await db.query<Row>(`select ${SUBSCRIPTION_COLUMNS} from subscriptions where state = 'active' order by next_at, id limit $1`, [limit])).map(
    subscriptionFromRow,
  );
  if (subscriptions.length === 0) return [];
  const renewals = (
    await db.query<Row>(`select ${RENEWAL_COLUMNS} from subscription_renewals where state = 'pending' and subscription_id = any($1::bigint[])`, [subscriptions.map((s) => s.id)])
  ).map(renewalFromRow);
  return subscriptions.map((subscription) => ({ subscription, renewal: renewals.find((r) => r.subscriptionId === subscription.id) }));
}
