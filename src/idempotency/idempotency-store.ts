/**
 * Durable idempotency keys. The first request with a key claims it in the database and runs the operation;
 * its answer is stored and replayed, for 24 hours, to every retry with the same key, tool, resource and
 * payload, on any instance. A request that finds the key claimed but not yet answered waits for the answer
 * (so two concurrent requests run the operation once); the same key with anything else is a conflict. An
 * operation that fails (throws) frees its key, so a retry runs it again; a claim left by a process that died
 * is taken over after a while.
 *
 * When the database cannot be told how a claim ended (it went away during the operation), this instance keeps
 * the outcome, freeing the key or storing its answer, and tells the database as soon as it answers again: at
 * once for a retry that reaches this instance, else on its next try (every RELEASE_RETRY_MS while it is away).
 * Without that, every retry would find the key running until the claim counts as abandoned. What is still
 * unsettled when the process ends is lost: those keys are taken over after ABANDONED_AFTER_SECONDS.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable, type Queryable } from '../db/database.js';

const KEEP_HOURS = 24;
/** A claim older than this, still unanswered, belongs to a process that died: another request takes it over. */
const ABANDONED_AFTER_SECONDS = 60;
/** How long a request waits for another's answer before it gives up (the operation is then still running). */
const WAIT_MS = 30_000;
/** How often this instance tries again to tell the database how its claims ended, while it cannot. */
const RELEASE_RETRY_MS = 1_000;

/** The same idempotency key was used for another request (other tool, resource or payload). */
export class IdempotencyConflict extends Error {
  constructor() {
    super('idempotency key reused with a different request');
    this.name = 'IdempotencyConflict';
  }
}

/** Another request with this key is still running after the wait. */
export class IdempotencyInProgress extends Error {
  constructor() {
    super('a request with this idempotency key is still running');
    this.name = 'IdempotencyInProgress';
  }
}

export interface IdempotentRequest {
  key: string;
  /** The operation (a tool name). */
  tool: string;
  /** What it acts on (a cart id, a checkout id). */
  resource: string;
  /** The request's arguments; key order does not matter. */
  payload: unknown;
}

/** Text canonicalJson writes as it is, between the values it serialises. */
class Written {
  constructor(readonly text: string) {}
}
const CLOSE_ARRAY = new Written(']');
const CLOSE_OBJECT = new Written('}');
const COMMA = new Written(',');

/**
 * JSON with object keys sorted at every level, so `{a, b}` and `{b, a}` read the same (members whose value is
 * undefined left out, an undefined or a function elsewhere written null). It walks the value with a stack of its
 * own, not by recursion: a client's arguments nested thousands of levels deep cannot overflow the call stack. The
 * text of a JSON value is the same, byte for byte, as the recursive version's was: stored hashes still match retries.
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  // What is still to write, the next on top: a value to serialise, or text to write as it is.
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const next = todo.pop();
    if (next instanceof Written) {
      parts.push(next.text);
    } else if (Array.isArray(next)) {
      parts.push('[');
      todo.push(CLOSE_ARRAY);
      for (let i = next.length - 1; i >= 0; i--) {
        todo.push(next[i]);
        if (i > 0) todo.push(COMMA);
      }
    } else if (next !== null && typeof next === 'object') {
      const record = next as Record<string, unknown>;
      const keys = Object.keys(record)
        .sort()
        .filter((key) => record[key] !== undefined);
      parts.push('{');
      todo.push(CLOSE_OBJECT);
      for (let i = keys.length - 1; i >= 0; i--) {
        todo.push(record[keys[i]!]);
        todo.push(new Written(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`));
      }
    } else {
      parts.push(JSON.stringify(next) ?? 'null');
    }
  }
  return parts.join('');
}

export const payloadHash = (payload: unknown) => createHash('sha256').update(canonicalJson(payload)).digest('hex');

interface KeyRow {
  tool: string;
  resource: string;
  payload_hash: string;
  state: 'running' | 'done';
  answer: string | null;
  abandoned: boolean;
}

/** A claim this instance made and ended, that the database has not yet been told of. */
interface Unsettled {
  db: Queryable;
  /** The claim's claimed_at in microseconds since the epoch, as the database wrote it: a newer claim is never touched. */
  claimedAt: string;
  /** The answer to store; undefined when the operation failed and the key is to be freed. */
  answer: string | undefined;
  /** Set once the database has been told (so an attempt that fails late cannot put it back). */
  settled?: boolean;
}

/** claimed_at as text the driver passes through unchanged, whatever the session's DateStyle and TimeZone. */
const CLAIMED_AT = `(extract(epoch from claimed_at) * 1000000)::bigint`;
/** The claim an outcome ends ($1 its key, $2 its claimed_at), still running. */
const THE_CLAIM = `key = $1 and state = 'running' and ${CLAIMED_AT} = $2::bigint`;
/** How long closing waits to tell the database of the claims it could not be told of. */
const CLOSE_SETTLE_MS = 2_000;

export class IdempotencyStore {
  private readonly unsettled = new Map<string, Unsettled>();
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  /** `onError` hears an outcome that could not be kept for later (not an outage) or was dropped on close. */
  constructor(private readonly onError: (what: string, error: unknown) => void = () => {}) {}

  /**
   * Runs `operation` once for the key and answers what it answered, stored as text (`encode`/`decode`): a
   * retry gets the stored answer. Throws IdempotencyConflict for the same key with another request.
   */
  async run<T>(
    db: Queryable,
    request: IdempotentRequest,
    operation: () => Promise<T>,
    codec: { encode: (answer: T) => string; decode: (text: string) => T },
  ): Promise<T> {
    const hash = payloadHash(request.payload);
    const deadline = Date.now() + WAIT_MS;
    // A claim of this instance the database was not told the end of: told first (if it still cannot be, the
    // claim below most likely fails too, as the request should; else the wait below covers it).
    const mine = this.unsettled.get(request.key);
    if (mine) await this.settle(request.key, mine);
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const claimedAt = await this.claim(db, request, hash);
      if (claimedAt !== undefined) return this.runClaimed(db, request.key, claimedAt, operation, codec);
      const row = await this.read(db, request.key);
      if (row) {
        if (row.tool !== request.tool || row.resource !== request.resource || row.payload_hash !== hash) throw new IdempotencyConflict();
        if (row.state === 'done') return codec.decode(row.answer!);
        if (row.abandoned) {
          const takenAt = await this.takeOver(db, request.key);
          if (takenAt !== undefined) return this.runClaimed(db, request.key, takenAt, operation, codec);
        }
      }
      if (Date.now() > deadline) throw new IdempotencyInProgress();
      await sleep(pause);
    }
  }

  /** Deletes keys past their 24 hours; returns how many. */
  async purgeExpired(db: Queryable): Promise<number> {
    const rows = await db.query('delete from idempotency_keys where expires_at < now() returning 1');
    return rows.length;
  }

  /**
   * The store is closing: tells the database, for up to CLOSE_SETTLE_MS, of the claims it could not be told of,
   * then stops trying. What is still unsettled is reported (those keys read as running until taken over).
   */
  async close(): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    if (this.unsettled.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.settleAll(), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_SETTLE_MS)))]);
      clearTimeout(timer);
    }
    this.closed = true;
    clearTimeout(this.retry); // a try the settling above scheduled
    this.retry = undefined;
    if (this.unsettled.size > 0) {
      this.onError('idempotency keys left running on close', new Error(`${this.unsettled.size} key(s) whose end the database could not be told`));
      this.unsettled.clear();
    }
  }

  /** How many claims this instance ended that the database has not been told of yet. */
  get unsettledCount(): number {
    return this.unsettled.size;
  }

  private async runClaimed<T>(db: Queryable, key: string, claimedAt: string, operation: () => Promise<T>, codec: { encode: (answer: T) => string }): Promise<T> {
    let answer: T;
    try {
      answer = await operation();
    } catch (error) {
      await this.settle(key, { db, claimedAt, answer: undefined });
      throw error;
    }
    // The operation happened and this is its answer: if the database cannot store it now, it is stored when the
    // database answers again; a retry finds the key running until then, and then replays it.
    await this.settle(key, { db, claimedAt, answer: codec.encode(answer) });
    return answer;
  }

  /**
   * Tells the database how a claim ended. When it cannot because it is unavailable, keeps the outcome and tries
   * again every RELEASE_RETRY_MS; any other failure is reported, and the key is left to be taken over.
   */
  private async settle(key: string, outcome: Unsettled): Promise<boolean> {
    try {
      if (outcome.answer === undefined) await outcome.db.query(`delete from idempotency_keys where ${THE_CLAIM}`, [key, outcome.claimedAt]);
      else await outcome.db.query(`update idempotency_keys set state = 'done', answer = $3 where ${THE_CLAIM}`, [key, outcome.claimedAt, outcome.answer]);
      outcome.settled = true;
      if (this.unsettled.get(key) === outcome) this.unsettled.delete(key);
      return true;
    } catch (error) {
      if (outcome.settled) return true; // told by another attempt meanwhile
      // A newer outcome of the key (a retry on this instance claimed and ended it meanwhile) is not overwritten.
      const kept = this.unsettled.get(key);
      if (kept !== undefined && kept !== outcome) return false;
      if (this.closed || !isDatabaseUnavailable(error)) {
        this.unsettled.delete(key);
        this.onError('an idempotency key could not be settled; it reads as running until taken over', error);
        return false;
      }
      this.unsettled.set(key, outcome);
      this.retry ??= setTimeout(() => void this.settleAll(), RELEASE_RETRY_MS).unref();
      return false;
    }
  }

  private async settleAll(): Promise<void> {
    this.retry = undefined;
    for (const [key, outcome] of [...this.unsettled]) {
      // The database still unavailable: the rest wait for the next try.
      if (!(await this.settle(key, outcome)) && this.unsettled.get(key) === outcome) return;
    }
  }

  /**
   * Claims the key for this request; an expired key (past its 24 hours, not yet purged) is claimed anew. Answers
   * the claim's claimed_at, or undefined when another request holds the key.
   */
  private async claim(db: Queryable, request: IdempotentRequest, hash: string): Promise<string | undefined> {
    const rows = await db.query<{ claimed_at: string }>(
      `insert into idempotency_keys (key, tool, resource, payload_hash, state, expires_at)
       values ($1, $2, $3, $4, 'running', now() + make_interval(hours => ${KEEP_HOURS}))
       on conflict (key) do update set tool = excluded.tool, resource = excluded.resource, payload_hash = excluded.payload_hash,
         state = 'running', answer = null, claimed_at = now(), expires_at = excluded.expires_at
       where idempotency_keys.expires_at < now()
       returning ${CLAIMED_AT}::text as claimed_at`,
      [request.key, request.tool, request.resource, hash],
    );
    return rows[0]?.claimed_at;
  }

  private async read(db: Queryable, key: string): Promise<KeyRow | undefined> {
    const rows = await db.query<KeyRow & Record<string, unknown>>(
      `select tool, resource, payload_hash, state, answer,
              (state = 'running' and claimed_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS})) as abandoned
         from idempotency_keys where key = $1 and expires_at >= now()`,
      [key],
    );
    return rows[0];
  }

  private async takeOver(db: Queryable, key: string): Promise<string | undefined> {
    const rows = await db.query<{ claimed_at: string }>(
      `update idempotency_keys set claimed_at = now()
        where key = $1 and state = 'running' and claimed_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS})
        returning ${CLAIMED_AT}::text as claimed_at`,
      [key],
    );
    return rows[0]?.claimed_at;
  }
}
