/**
 * Delivers the outbox after commit, in every instance: a round claims the rows that are due (FOR UPDATE SKIP
 * LOCKED, so two instances never claim one row, and a lease, so a row whose instance died mid-send is taken over
 * when the lease ends), sends each through the sender of its kind, and records the outcome: delivered, or tried
 * again later (exponential backoff with jitter), or given up once its deadline has passed. At least once: a
 * process that dies between sending and recording sends again after the lease. A row exists only for a committed
 * change (it is written in the change's transaction), so nothing is sent for a rolled-back order.
 */
import type { Database, Listening, Queryable } from '../db/database.js';
import { DeliveryError } from './delivery.js';
import { OUTBOX_CHANNEL, type MailMessage, type OutboxKind, type WebhookMessage } from './outbox.js';

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
  /** Rows claimed per round, and sent at once. */
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
  private listening: Listening | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Database,
    private readonly senders: Partial<Record<OutboxKind, Sender>>,
    private readonly options: DispatcherOptions,
  ) {}

  /** Starts delivering: at once, on every outbox insert committed anywhere (NOTIFY), and every poll. */
  async start(): Promise<void> {
    this.listening = await this.db.listen([OUTBOX_CHANNEL], () => this.wake(), {
      onReconnect: () => this.wake(),
      onError: (error) => this.options.onError('the connection listening for outbox messages was lost; reconnecting', error),
    });
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 1000);
    this.timer.unref();
    this.wake();
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
      const claimed = await this.deliverDue();
      // A full batch means more may be due: go on without waiting for the poll.
      if (claimed >= (this.options.batch ?? 16)) this.again = true;
    } while (this.again && !this.closed);
  }

  /** One round: claims the rows due and delivers them; answers how many were claimed. */
  async deliverDue(): Promise<number> {
    const kinds = Object.keys(this.senders);
    const records = await this.db.query<RowRecord>(
      `update outbox o set claimed_until = now() + make_interval(secs => $2), attempts = o.attempts + 1
        where o.id in (select id from outbox
                        where sent_at is null and failed_at is null and kind = any($3::text[]) and next_attempt_at <= now()
                          and (claimed_until is null or claimed_until < now())
                        order by next_attempt_at, id
                        limit $1
                        for update skip locked)
       returning ${ROW_COLUMNS}`,
      [this.options.batch ?? 16, this.options.leaseSeconds, kinds],
    );
    await Promise.all(records.map((record) => this.track(this.deliver(fromRecord(record)))));
    return records.length;
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
    try {
      await this.senders[row.kind]!(row);
    } catch (error) {
      return this.failed(row, error);
    }
    await recordDelivered(this.db, row.id).catch((error: unknown) => this.options.onError('recording a delivered outbox message failed (it will be sent again)', error));
    return { delivered: true };
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
    await this.listening?.close().catch(() => {});
    const settled = Promise.allSettled([this.running, ...this.inFlight]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }
}

async function recordDelivered(db: Queryable, id: number): Promise<void> {
  await db.query('update outbox set sent_at = coalesce(sent_at, now()), claimed_until = null, last_error = null where id = $1', [id]);
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

/** Figures for /metrics: messages pending, delivered and given up, by kind. */
export async function outboxFigures(db: Queryable): Promise<{ kind: string; pending: number; delivered: number; failed: number }[]> {
  const rows = await db.query<{ kind: string; pending: number | string; delivered: number | string; failed: number | string }>(
    `select kind,
            count(*) filter (where sent_at is null and failed_at is null) as pending,
            count(*) filter (where sent_at is not null) as delivered,
            count(*) filter (where failed_at is not null and sent_at is null) as failed
       from outbox where kind in ('mail', 'webhook') group by kind`,
  );
  return rows.map((row) => ({ kind: row.kind, pending: Number(row.pending), delivered: Number(row.delivered), failed: Number(row.failed) }));
}

/** Delivered messages are kept 30 days (what was sent, for the merchant's questions), then deleted. */
export async function purgeDelivered(db: Queryable): Promise<number> {
  const [row] = await db.query<{ purged: number }>(
    `with purged as (delete from outbox where sent_at < now() - interval '30 days' returning 1) select count(*)::int as purged from purged`,
  );
  return row?.purged ?? 0;
}
