/** Checkouts, their transitions and approvals in PostgreSQL. I/O only; the rules live in checkout.ts and machine.ts. */
import type { Queryable } from '../db/database.js';
import type { ApprovalSummary, CheckoutLine, CheckoutRecord } from './checkout.js';
import type { Actor, CheckoutStatus, MoveCode } from './machine.js';

interface CheckoutRow {
  [column: string]: unknown;
  id: string;
  status: CheckoutStatus;
  cart_token: string | null;
  lines: CheckoutLine[] | string;
  buyer: CheckoutRecord['buyer'] | string;
  destination: CheckoutRecord['destination'] | string | null;
  shipping_option: string | null;
  channel: CheckoutRecord['channel'];
  webhook_url: string | null;
  agent_platform: string | null;
  note: string | null;
  attributes: Record<string, string> | string | null;
  version: number;
  order_id: string | null;
  expires_at: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
}

const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
const date = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

function fromRow(row: CheckoutRow): CheckoutRecord {
  return {
    id: row.id,
    status: row.status,
    cartToken: row.cart_token,
    lines: json(row.lines),
    buyer: json(row.buyer),
    destination: row.destination === null ? null : json(row.destination),
    shippingOption: row.shipping_option,
    channel: row.channel,
    webhookUrl: row.webhook_url,
    agentPlatform: row.agent_platform,
    note: row.note,
    attributes: row.attributes === null ? {} : json(row.attributes),
    version: row.version,
    orderId: row.order_id,
    expiresAt: date(row.expires_at),
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
  };
}

const COLUMNS = 'id, status, cart_token, lines, buyer, destination, shipping_option, channel, webhook_url, agent_platform, note, attributes, version, order_id, expires_at, created_at, updated_at';

/** Inserts a checkout; for a cart that already has an open checkout, inserts nothing and answers undefined. */
export async function insertCheckout(db: Queryable, record: CheckoutRecord): Promise<CheckoutRecord | undefined> {
  const rows = await db.query<CheckoutRow>(
    `insert into checkouts (id, status, cart_token, lines, buyer, destination, shipping_option, channel, expires_at, webhook_url, agent_platform, note, attributes)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     on conflict (cart_token) where cart_token is not null and status not in ('completed', 'canceled') do nothing
     returning ${COLUMNS}`,
    [
      record.id,
      record.status,
      record.cartToken,
      JSON.stringify(record.lines),
      JSON.stringify(record.buyer),
      record.destination === null ? null : JSON.stringify(record.destination),
      record.shippingOption,
      record.channel,
      record.expiresAt.toISOString(),
      record.webhookUrl,
      record.agentPlatform ?? null,
      record.note ?? null,
      JSON.stringify(record.attributes ?? {}),
    ],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** A checkout by id; `lock` holds its row until the caller's transaction ends (one change at a time). */
export async function readCheckout(db: Queryable, id: string, options: { lock?: boolean } = {}): Promise<CheckoutRecord | undefined> {
  const rows = await db.query<CheckoutRow>(`select ${COLUMNS} from checkouts where id = $1${options.lock ? ' for update' : ''}`, [id]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function readOpenCheckoutForCart(db: Queryable, cartToken: string): Promise<CheckoutRecord | undefined> {
  const rows = await db.query<CheckoutRow>(
    `select ${COLUMNS} from checkouts where cart_token = $1 and status not in ('completed', 'canceled')`,
    [cartToken],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Writes what a change set (lines, buyer, destination, option, status, order); the version counts changes. */
export async function writeCheckout(db: Queryable, record: CheckoutRecord): Promise<CheckoutRecord> {
  const rows = await db.query<CheckoutRow>(
    `update checkouts set status = $2, lines = $3, buyer = $4, destination = $5, shipping_option = $6, order_id = $7,
            webhook_url = $8, agent_platform = $9, note = $10, attributes = $11, version = version + 1, updated_at = now()
      where id = $1
      returning ${COLUMNS}`,
    [
      record.id,
      record.status,
      JSON.stringify(record.lines),
      JSON.stringify(record.buyer),
      record.destination === null ? null : JSON.stringify(record.destination),
      record.shippingOption,
      record.orderId,
      record.webhookUrl,
      record.agentPlatform ?? null,
      record.note ?? null,
      JSON.stringify(record.attributes ?? {}),
    ],
  );
  return fromRow(rows[0]!);
}

export async function insertTransition(
  db: Queryable,
  checkoutId: string,
  from: CheckoutStatus | null,
  to: CheckoutStatus,
  actor: Actor,
  reason: string,
  code: MoveCode | null = null,
): Promise<void> {
  await db.query('insert into checkout_transitions (checkout_id, from_status, to_status, actor, reason, code) values ($1, $2, $3, $4, $5, $6)', [
    checkoutId,
    from,
    to,
    actor,
    reason,
    code,
  ]);
}

export interface TransitionRecord {
  from: CheckoutStatus | null;
  to: CheckoutStatus;
  actor: Actor;
  reason: string | null;
  /** Why, as a code, for the moves a client is told about (declined, expired, canceled, sold out at the approval). */
  code?: MoveCode | null;
  at: Date;
}

type TransitionRow = { from_status: CheckoutStatus | null; to_status: CheckoutStatus; actor: Actor; reason: string | null; code: MoveCode | null; at: Date | string };
const transitionFromRow = (row: TransitionRow): TransitionRecord => ({ from: row.from_status, to: row.to_status, actor: row.actor, reason: row.reason, code: row.code, at: date(row.at) });

export async function readTransitions(db: Queryable, checkoutId: string): Promise<TransitionRecord[]> {
  const rows = await db.query<TransitionRow>('select from_status, to_status, actor, reason, code, at from checkout_transitions where checkout_id = $1 order by id', [checkoutId]);
  return rows.map(transitionFromRow);
}

/** The checkout's latest move, or undefined. */
export async function readLastTransition(db: Queryable, checkoutId: string): Promise<TransitionRecord | undefined> {
  const rows = await db.query<TransitionRow>(
    'select from_status, to_status, actor, reason, code, at from checkout_transitions where checkout_id = $1 order by id desc limit 1',
    [checkoutId],
  );
  return rows[0] ? transitionFromRow(rows[0]) : undefined;
}

/** The checkout of a cart that placed an order (its cart is closed then), or undefined. */
export async function readCompletedCheckoutOfCart(db: Queryable, cartToken: string): Promise<{ id: string; orderId: string } | undefined> {
  const rows = await db.query<{ id: string; order_id: string }>(
    `select id, order_id from checkouts where cart_token = $1 and status = 'completed' and order_id is not null limit 1`,
    [cartToken],
  );
  return rows[0] ? { id: rows[0].id, orderId: rows[0].order_id } : undefined;
}

export interface ApprovalRecord {
  token: string;
  checkoutId: string;
  digest: string;
  summary: ApprovalSummary;
  formSecret: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  voidedAt: Date | null;
  voidReason: string | null;
  /** With a hosted payment page: how and when the buyer proved it was them, before being sent to pay. */
  provenBy: 'passkey' | 'code' | 'link' | null;
  provenAt: Date | null;
  /** The payment session the buyer was sent to (its id, page, end), and how many were begun for this approval. */
  paymentSession: { id: string; url: string; expiresAt: Date } | null;
  paymentAttempts: number;
  /** When the payment session being begun (or last begun) stops taking payment. */
  paymentSessionExpiresAt: Date | null;
}

interface ApprovalRow {
  [column: string]: unknown;
  token: string;
  checkout_id: string;
  digest: string;
  summary: ApprovalSummary | string;
  form_secret: string;
  created_at: Date | string;
  expires_at: Date | string;
  used_at: Date | string | null;
  voided_at: Date | string | null;
  void_reason: string | null;
  proven_by: ApprovalRecord['provenBy'];
  proven_at: Date | string | null;
  payment_session_id: string | null;
  payment_session_url: string | null;
  payment_session_expires_at: Date | string | null;
  payment_attempts: number;
}

function approvalFromRow(row: ApprovalRow): ApprovalRecord {
  return {
    token: row.token,
    checkoutId: row.checkout_id,
    digest: row.digest,
    summary: json(row.summary),
    formSecret: row.form_secret,
    createdAt: date(row.created_at),
    expiresAt: date(row.expires_at),
    usedAt: row.used_at === null ? null : date(row.used_at),
    voidedAt: row.voided_at === null ? null : date(row.voided_at),
    voidReason: row.void_reason,
    provenBy: row.proven_by,
    provenAt: row.proven_at === null ? null : date(row.proven_at),
    paymentSession:
      row.payment_session_id !== null && row.payment_session_url !== null && row.payment_session_expires_at !== null
        ? { id: row.payment_session_id, url: row.payment_session_url, expiresAt: date(row.payment_session_expires_at) }
        : null,
    paymentAttempts: row.payment_attempts,
    paymentSessionExpiresAt: row.payment_session_expires_at === null ? null : date(row.payment_session_expires_at),
  };
}

const APPROVAL_COLUMNS =
  'token, checkout_id, digest, summary, form_secret, created_at, expires_at, used_at, voided_at, void_reason, proven_by, proven_at, ' +
  'payment_session_id, payment_session_url, payment_session_expires_at, payment_attempts';

export async function insertApproval(db: Queryable, approval: Pick<ApprovalRecord, 'token' | 'checkoutId' | 'digest' | 'summary' | 'formSecret' | 'expiresAt'>): Promise<void> {
  await db.query('insert into checkout_approvals (token, checkout_id, digest, summary, form_secret, expires_at) values ($1, $2, $3, $4, $5, $6)', [
    approval.token,
    approval.checkoutId,
    approval.digest,
    JSON.stringify(approval.summary),
    approval.formSecret,
    approval.expiresAt.toISOString(),
  ]);
}

export async function readApproval(db: Queryable, token: string, options: { lock?: boolean } = {}): Promise<ApprovalRecord | undefined> {
  const rows = await db.query<ApprovalRow>(`select ${APPROVAL_COLUMNS} from checkout_approvals where token = $1${options.lock ? ' for update' : ''}`, [token]);
  return rows[0] ? approvalFromRow(rows[0]) : undefined;
}

/** The approval still waiting for the buyer (not used, not voided), newest first. */
export async function readPendingApproval(db: Queryable, checkoutId: string): Promise<ApprovalRecord | undefined> {
  const rows = await db.query<ApprovalRow>(
    `select ${APPROVAL_COLUMNS} from checkout_approvals
      where checkout_id = $1 and used_at is null and voided_at is null order by created_at desc limit 1`,
    [checkoutId],
  );
  return rows[0] ? approvalFromRow(rows[0]) : undefined;
}

/** Voids every approval of a checkout still waiting for the buyer, saying why. */
export async function voidPendingApprovals(db: Queryable, checkoutId: string, reason: string): Promise<void> {
  await db.query('update checkout_approvals set voided_at = now(), void_reason = $2 where checkout_id = $1 and used_at is null and voided_at is null', [
    checkoutId,
    reason,
  ]);
}

/** Voids one approval still waiting (not used, not voided), saying why. */
export async function voidApproval(db: Queryable, token: string, reason: string): Promise<void> {
  await db.query('update checkout_approvals set voided_at = now(), void_reason = $2 where token = $1 and used_at is null and voided_at is null', [token, reason]);
}

/** The approval that sent the buyer to this payment session (the session id is the provider's). */
export async function readApprovalByPaymentSession(db: Queryable, sessionId: string): Promise<ApprovalRecord | undefined> {
  const rows = await db.query<ApprovalRow>(`select ${APPROVAL_COLUMNS} from checkout_approvals where payment_session_id = $1`, [sessionId]);
  return rows[0] ? approvalFromRow(rows[0]) : undefined;
}

/**
 * The buyer proved it was them (before being sent to pay): kept on the approval, with a new payment attempt planned
 * to end at `sessionExpiresAt` (the attempt's number makes its idempotency key). A session begun before is forgotten.
 */
export async function markApprovalProven(db: Queryable, token: string, provenBy: NonNullable<ApprovalRecord['provenBy']>, sessionExpiresAt: Date): Promise<void> {
  await db.query(
    `update checkout_approvals set proven_by = coalesce(proven_by, $2), proven_at = coalesce(proven_at, now()), payment_attempts = payment_attempts + 1,
            payment_session_id = null, payment_session_url = null, payment_session_expires_at = $3
      where token = $1`,
    [token, provenBy, sessionExpiresAt.toISOString()],
  );
}

/** The payment session begun for the approval's current attempt. */
export async function recordPaymentSession(db: Queryable, token: string, session: { id: string; url: string; expiresAt: Date }): Promise<void> {
  await db.query('update checkout_approvals set payment_session_id = $2, payment_session_url = $3, payment_session_expires_at = $4 where token = $1', [
    token,
    session.id,
    session.url,
    session.expiresAt.toISOString(),
  ]);
}

/**
 * The provider says this payment session takes no payment any more (it expired, or was expired): the approval keeps
 * its id (a late event still finds it) but never sends the buyer there again; its next approval begins a new one.
 */
export async function endPaymentSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('update checkout_approvals set payment_session_expires_at = least(payment_session_expires_at, now()) where payment_session_id = $1', [sessionId]);
}

/** The approval placed its order: used now, proven as `provenBy` says (unless it was proven before paying on a hosted page). */
export async function markApprovalUsed(db: Queryable, token: string, provenBy: NonNullable<ApprovalRecord['provenBy']>): Promise<void> {
  await db.query('update checkout_approvals set used_at = now(), proven_by = coalesce(proven_by, $2), proven_at = coalesce(proven_at, now()) where token = $1', [
    token,
    provenBy,
  ]);
}

/** Open checkouts past their expiry, for the sweep that cancels them. */
export async function readExpiredOpenCheckoutIds(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `select id from checkouts where status not in ('completed', 'canceled') and expires_at <= $1 order by expires_at limit $2`,
    [now.toISOString(), limit],
  );
  return rows.map((row) => row.id);
}
