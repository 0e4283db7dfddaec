/**
 * Delivers the outbox after commit, in every instance: a round claims the rows that are due (FOR UPDATE SKIP
 * LOCKED, so two instances never claim one row, and a lease, renewed while the send runs, so a row whose instance
 * died mid-send is taken over when the lease ends and a slow receiver is never sent to twice), sends each through
 * the sender of its kind, and records the outcome: delivered, or tried again later (exponential backoff with
 * jitter), or given up once its deadline has passed. Sends run side by side, up to a bound: a slow receiver holds
 * up its own message, not the others. At least once: a process that dies between sending and recording sends
 * again after the lease. A row exists only for a committed change (it is written in the change's transaction),
 * so nothing is sent for a rolled-back order.
 */
import type { Database, Queryable } from '../db/database.js';
import { DeliveryError } from './delivery.js';
import type { MailMessage, OutboxKind, WebhookMessage } from './outbox.js';

export interface OutboxRow {
  id: number;
  kind: OutboxKind;
  topic: string;
  eventId: string;
  orderId: string | null;
  payload: MailMessage | WebhookMessage;
  attempts: number;
  createdAt: Date;
  deadlineAt: Date;
}

/** Hands one message to the world; throws (a DeliveryError, ideally) when it was not delivered. */
export type Sender = (row: OutboxRow) => Promise<void>;

export interface DispatcherOptions {
  leaseSeconds: number;
  retryBaseSeconds: number;
  /** The longest wait between two attempts (an hour). */
  retryMaxSeconds?: number;
  /** The most messages this instance sends at once. */
  batch?: number;
  /** How often an idle dispatcher looks for due rows (the safety net under NOTIFY). */
  pollMs?: number;
  /** Failures of the dispatcher itself (the database unreachable), for the operator's log. */
  onError: (what: string, error: unknown) => void;
  /** One line per failed attempt: kind, topic, attempt and the sender's log reason (no address, no URL). */
  onAttemptFailed?: (failure: { kind: OutboxKind; topic: string; attempt: number; reason: string; givenUp: boolean }) => void;
  random?: () => number;
}

export type DeliveryOutcome = { delivered: true } | { delivered: false; error: string; givenUp: boolean };

interface RowRecord {
  [column: string]: unknown;
  id: number | string;
  kind: OutboxKind;
  topic: string;
  event_id: string;
  order_id: string | null;
  payload: OutboxRow['payload'] | string;
  attempts: number;
  created_at: Date | string;
  deadline_at: Date | string;
}

const ROW_COLUMNS = 'o.id, o.kind, o.topic, o.event_id, o.order_id, o.payload, o.attempts, o.created_at, o.deadline_at';

function fromRecord(record: RowRecord): OutboxRow {
  return {
    id: Number(record.id),
    kind: record.kind,
    topic: record.topic,
    eventId: record.event_id,
    orderId: record.order_id,
    payload: typeof record.payload === 'string' ? (JSON.parse(record.payload) as OutboxRow['payload']) : record.payload,
    attempts: record.attempts,
    createdAt: new Date(record.created_at),
    deadlineAt: new Date(record.deadline_at),
  };
}

/** The wait before attempt `attempt + 1`: base × 2^(attempt − 1), at most `max`, then between half and all of it. */
export function retryDelaySeconds(attempt: number, baseSeconds: number, maxSeconds: number, random: () => number = Math.random): number {
  const full = Math.min(maxSeconds, baseSeconds * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return full * (0.5 + random() / 2);
}

export class OutboxDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Rows this instance is sending: their leases are renewed until each outcome is recorded. */
  private readonly sending = new Set<number>();
  private renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly senders: Partial<Record<OutboxKind, Sender>>,
    private readonly options: DispatcherOptions,
  ) {}

  /**
   * Starts delivering: at once and every poll. The store's listening connection calls `wake` when an outbox row is
   * committed anywhere (NOTIFY on OUTBOX_CHANNEL), so a message goes out without waiting for the poll.
   */
  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 1000);
    this.timer.unref();
    this.renewal = setInterval(() => void this.renewLeases(), (this.options.leaseSeconds * 1000) / 3);
    this.renewal.unref();
    this.wake();
  }

  /** Extends the lease of every row under way here, so no other instance takes over a send that is only slow. */
  private async renewLeases(): Promise<void> {
    if (this.sending.size === 0) return;
    await this.db
      .query('update outbox set claimed_until = now() + make_interval(secs => $2) where id = any($1::bigint[]) and sent_at is null', [
        [...this.sending],
        this.options.leaseSeconds,
      ])
      .catch((error: unknown) => this.options.onError('renewing the leases of outbox messages under way failed', error));
  }

  /** Runs a round now, or right after the one under way. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.rounds()
      .catch((error: unknown) => this.options.onError('outbox delivery round failed', error))
      .finally(() => {
        this.running = undefined;
      });
  }

  private async rounds(): Promise<void> {
    do {
      this.again = false;
      const room = (this.options.batch ?? 16) - this.sending.size;
      if (room <= 0) return; // a send that ends wakes the next round
      const claimed = await this.claimDue(room);
      if (this.closed) {
        // Claimed as the store began to close: handed back untried, for the next instance (or start) at once.
        await releaseClaims(this.db, claimed.map((row) => row.id)).catch(() => {});
        return;
      }
      for (const row of claimed) {
        void this.track(this.deliver(row)).finally(() => this.wake());
      }
      // As many as there was room for: more may be due, go on without waiting for the poll.
      if (claimed.length >= room) this.again = true;
    } while (this.again && !this.closed);
  }

  /** Claims up to `limit` rows that are due, for this instance, for one lease. */
  private async claimDue(limit: number): Promise<OutboxRow[]> {
    const kinds = Object.keys(this.senders);
    const records = await this.db.query<RowRecord>(
      `update outbox o set claimed_until = now() + make_interval(secs => $2), attempts = o.attempts + 1
        where o.id in (select id from outbox
                        where sent_at is null and failed_at is null and kind = any($3::text[]) and next_attempt_at <= now()
                          and (claimed_until is null or claimed_until < now())
                          -- A platform hears an order's events in order: a webhook waits for the earlier ones of its order.
                          and not (kind = 'webhook' and exists (
                                select from outbox earlier
                                 where earlier.kind = 'webhook' and earlier.order_id = outbox.order_id and earlier.id < outbox.id
                                   and earlier.sent_at is null and earlier.failed_at is null))
                        order by next_attempt_at, id
                        limit $1
                        for update skip locked)
       returning ${ROW_COLUMNS}`,
      [limit, this.options.leaseSeconds, kinds],
    );
    return records.map(fromRecord);
  }

  /**
   * Delivers one row now, whatever its schedule (the merchant's `storefront outbox retry ID`): a given-up row gets
   * one more attempt. Undefined when there is no such row; refused when it was delivered or another instance holds it.
   */
  async retryNow(id: number): Promise<DeliveryOutcome | { refused: string } | undefined> {
    const [existing] = await this.db.query<{ kind: OutboxKind; sent_at: Date | null; held: boolean }>(
      'select kind, sent_at, claimed_until is not null and claimed_until > now() as held from outbox where id = $1',
      [id],
    );
    if (!existing) return undefined;
    if (existing.sent_at !== null) return { refused: `message ${id} was already delivered` };
    if (existing.held) return { refused: `message ${id} is being delivered right now` };
    // Refused before anything is written: a refusal changes nothing.
    if (!this.senders[existing.kind]) return { refused: `this store cannot deliver ${existing.kind} messages` };
    const [record] = await this.db.query<RowRecord>(
      `update outbox o set claimed_until = now() + make_interval(secs => $2), attempts = o.attempts + 1, failed_at = null,
              deadline_at = greatest(o.deadline_at, now())
        where o.id = $1 and o.sent_at is null and (o.claimed_until is null or o.claimed_until < now())
       returning ${ROW_COLUMNS}`,
      [id, this.options.leaseSeconds],
    );
    if (!record) return { refused: `message ${id} is being delivered right now` };
    return this.track(this.deliver(fromRecord(record)));
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => {});
    return work;
  }

  private async deliver(row: OutboxRow): Promise<DeliveryOutcome> {
    this.sending.add(row.id);
    try {
      try {
        await this.senders[row.kind]!(row);
      } catch (error) {
        return await this.failed(row, error);
      }
      await recordDelivered(this.db, row.id).catch((error: unknown) => this.options.onError('recording a delivered outbox message failed (it will be sent again)', error));
      return { delivered: true };
    } finally {
      this.sending.delete(row.id);
    }
  }

  private async failed(row: OutboxRow, error: unknown): Promise<DeliveryOutcome> {
    const delivery = error instanceof DeliveryError ? error : undefined;
    const message = (delivery?.message ?? (error as Error)?.message ?? String(error)).slice(0, 1000);
    const retryDelay = retryDelaySeconds(row.attempts, this.options.retryBaseSeconds, this.options.retryMaxSeconds ?? 3600, this.options.random);
    const [recorded] = await this.db
      .query<{ given_up: boolean }>(
        `update outbox set claimed_until = null, last_error = $2,
                failed_at = case when $3::boolean or now() >= deadline_at then now() end,
                next_attempt_at = least(deadline_at, now() + make_interval(secs => $4))
          where id = $1 and sent_at is null
         returning failed_at is not null as given_up`,
        [row.id, message, delivery?.retryable === false, retryDelay],
      )
      .catch((recordError: unknown) => {
        this.options.onError('recording a failed outbox delivery failed (its lease will end and it will be tried again)', recordError);
        return [];
      });
    const givenUp = recorded?.given_up ?? false;
    this.options.onAttemptFailed?.({ kind: row.kind, topic: row.topic, attempt: row.attempts, reason: delivery?.logReason ?? 'error', givenUp });
    return { delivered: false, error: message, givenUp };
  }

  /** Stops claiming; waits (up to `waitMs`) for the sends under way to be recorded. */
  async close(waitMs = 5000): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const settled = Promise.allSettled([this.running, ...this.inFlight]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    if (this.renewal) clearInterval(this.renewal);
  }
}

async function releaseClaims(db: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query('update outbox set claimed_until = null, attempts = attempts - 1 where id = any($1::bigint[]) and sent_at is null', [ids]);
}

async function recordDelivered(db: Queryable, id: number): Promise<void> {
  await db.query('update outbox set sent_at = coalesce(sent_at, now()), claimed_until = null, last_error = null where id = $1', [id]);
}

/**
 * Makes one undelivered message due now (a given-up one gets another attempt) for the running stores to deliver, and
 * waits up to `waitMs` for the outcome: the merchant's `storefront outbox retry ID` when the command reaches the
 * database itself (PostgreSQL, or an embedded database no store holds), so messages are only ever sent by stores,
 * with the store's own mail server and signing key. Undefined when there is no such message.
 */
export async function retryWhenDue(
  db: Queryable,
  id: number,
  waitMs: number,
): Promise<DeliveryOutcome | { refused: string } | { waiting: true } | undefined> {
  const [row] = await db.query<{ kind: string; sent_at: Date | null; attempts: number }>('select kind, sent_at, attempts from outbox where id = $1', [id]);
  if (!row) return undefined;
  if (row.sent_at !== null) return { refused: `message ${id} was already delivered` };
  if (row.kind !== 'mail' && row.kind !== 'webhook') return { refused: `no store delivers ${row.kind} messages` };
  await db.query(
    `update outbox set failed_at = null, next_attempt_at = now(), deadline_at = greatest(deadline_at, now() + interval '1 minute')
      where id = $1 and sent_at is null`,
    [id],
  );
  await db.query(`select pg_notify('storefront_outbox', '')`);
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const [now] = await db.query<{ sent_at: Date | null; attempts: number; claimed: boolean; failed_at: Date | null; last_error: string | null }>(
      'select sent_at, attempts, claimed_until is not null as claimed, failed_at, last_error from outbox where id = $1',
      [id],
    );
    if (!now) return undefined;
    if (now.sent_at !== null) return { delivered: true };
    if (now.attempts > row.attempts && !now.claimed) return { delivered: false, error: now.last_error ?? 'the attempt failed', givenUp: now.failed_at !== null };
  }
  return { waiting: true };
}

/** One row of `storefront outbox`: a message not delivered (pending or given up), oldest first. */
export interface OutboxListing {
  id: number;
  kind: string;
  topic: string;
  orderNumber: number | null;
  state: 'pending' | 'failed';
  attempts: number;
  createdAt: string;
  nextAttemptAt: string | null;
  deadlineAt: string;
  lastError: string | null;
}

/** Messages not delivered: pending and given up (the legacy rows of older versions included), oldest first. */
export async function listUndelivered(db: Queryable, limit = 100): Promise<OutboxListing[]> {
  const rows = await db.query<{
    id: number | string;
    kind: string;
    topic: string;
    number: number | string | null;
    failed_at: Date | string | null;
    attempts: number;
    created_at: Date | string;
    next_attempt_at: Date | string;
    deadline_at: Date | string;
    last_error: string | null;
  }>(
    `select o.id, o.kind, o.topic, ord.number, o.failed_at, o.attempts, o.created_at, o.next_attempt_at, o.deadline_at, o.last_error
       from outbox o left join orders ord on ord.id = o.order_id
      where o.sent_at is null
      order by o.id
      limit $1`,
    [limit],
  );
  const iso = (value: Date | string) => new Date(value).toISOString();
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    topic: row.topic,
    orderNumber: row.number === null ? null : Number(row.number),
    state: row.failed_at === null ? 'pending' : 'failed',
    attempts: row.attempts,
    createdAt: iso(row.created_at),
    nextAttemptAt: row.failed_at === null ? iso(row.next_attempt_at) : null,
    deadlineAt: iso(row.deadline_at),
    lastError: row.last_error,
  }));
}

/** Delivered messages are kept 30 days (what was sent, for the merchant's questions), then deleted. */
export async function purgeDelivered(db: Queryable): Promise<number> {
  const [row] = await db.query<{ purged: number }>(
    `with purged as (delete from outbox where sent_at < now() - interval '30 days' returning 1) select count(*)::int as purged from purged`,
  );
  return row?.purged ?? 0;
}
