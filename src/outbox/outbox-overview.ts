/**
 * The outbox as the merchant's admin reads it: how many messages wait (pending) and how many were given up
 * (failed), each list newest first with its order, and one undelivered message by id (what a retry acts on, and
 * the order its audit entry names). Never a message's body or recipient: the kind, the topic and the order say
 * what it is.
 */
import type { Queryable } from '../db/database.js';

export type UndeliveredState = 'pending' | 'failed';

/** A message not delivered, for a person: what it is, its order, how it went so far. */
export interface UndeliveredMessage {
  id: number;
  kind: string;
  topic: string;
  orderId: string | null;
  orderNumber: number | null;
  state: UndeliveredState;
  attempts: number;
  createdAt: Date;
  /** When the next attempt is due (pending ones). */
  nextAttemptAt: Date | null;
  /** When it was given up (failed ones). */
  failedAt: Date | null;
  deadlineAt: Date;
  lastError: string | null;
}

export interface UndeliveredCounts {
  pending: number;
  failed: number;
}

interface MessageRecord {
  [column: string]: unknown;
  id: number | string;
  kind: string;
  topic: string;
  order_id: string | null;
  number: number | string | null;
  failed_at: Date | string | null;
  attempts: number;
  created_at: Date | string;
  next_attempt_at: Date | string;
  deadline_at: Date | string;
  last_error: string | null;
}

const COLUMNS = 'o.id, o.kind, o.topic, o.order_id, ord.number, o.failed_at, o.attempts, o.created_at, o.next_attempt_at, o.deadline_at, o.last_error';

function messageFromRecord(record: MessageRecord): UndeliveredMessage {
  const failed = record.failed_at !== null;
  return {
    id: Number(record.id),
    kind: record.kind,
    topic: record.topic,
    orderId: record.order_id,
    orderNumber: record.number === null ? null : Number(record.number),
    state: failed ? 'failed' : 'pending',
    attempts: record.attempts,
    createdAt: new Date(record.created_at),
    nextAttemptAt: failed ? null : new Date(record.next_attempt_at),
    failedAt: failed ? new Date(record.failed_at!) : null,
    deadlineAt: new Date(record.deadline_at),
    lastError: record.last_error,
  };
}

/** How many messages wait for delivery and how many were given up. */
export async function undeliveredCounts(db: Queryable): Promise<UndeliveredCounts> {
  const [row] = await db.query<{ pending: number; failed: number }>(
    `select count(*) filter (where failed_at is null)::int as pending, count(*) filter (where failed_at is not null)::int as failed
       from outbox where sent_at is null`,
  );
  return { pending: row?.pending ?? 0, failed: row?.failed ?? 0 };
}

/** Pending messages, the next due first; or given-up ones, the latest given up first. At most `limit`. */
export async function undeliveredIn(db: Queryable, state: UndeliveredState, limit = 100): Promise<UndeliveredMessage[]> {
  const records = await db.query<MessageRecord>(
    state === 'pending'
      ? `select ${COLUMNS} from outbox o left join orders ord on ord.id = o.order_id
          where o.sent_at is null and o.failed_at is null order by o.next_attempt_at, o.id limit $1`
      : `select ${COLUMNS} from outbox o left join orders ord on ord.id = o.order_id
          where o.sent_at is null and o.failed_at is not null order by o.failed_at desc, o.id desc limit $1`,
    [limit],
  );
  return records.map(messageFromRecord);
}

/** One message not delivered yet, by its id; undefined when there is none (or it was delivered). */
export async function undeliveredMessage(db: Queryable, id: number): Promise<UndeliveredMessage | undefined> {
  if (!Number.isSafeInteger(id) || id <= 0) return undefined;
  const [record] = await db.query<MessageRecord>(
    `select ${COLUMNS} from outbox o left join orders ord on ord.id = o.order_id where o.id = $1 and o.sent_at is null`,
    [id],
  );
  return record ? messageFromRecord(record) : undefined;
}

/** How much of a delivery's last error the merchant is shown by default. */
const ERROR_KEPT = 200;

/** A delivery's error as the merchant may read it: one line, short, no mail address but its domain. */
export function redactedError(error: string | null, max = ERROR_KEPT): string {
  if (!error) return '';
  const line = error
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .replace(/[^\s<>()[\]"',;:@]+@([A-Za-z0-9.-]+)/g, '…@$1')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
