/**
 * Durable idempotency keys. The first request with a key claims it in the database and runs the operation;
 * its answer is stored and replayed, for 24 hours, to every retry with the same key, tool, resource and
 * payload, on any instance. A request that finds the key claimed but not yet answered waits for the answer
 * (so two concurrent requests run the operation once); the same key with anything else is a conflict. An
 * operation that fails (throws) frees its key, so a retry runs it again; a claim left by a process that died
 * is taken over after a while.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../db/database.js';

const KEEP_HOURS = 24;
/** A claim older than this, still unanswered, belongs to a process that died: another request takes it over. */
const ABANDONED_AFTER_SECONDS = 60;
/** How long a request waits for another's answer before it gives up (the operation is then still running). */
const WAIT_MS = 30_000;

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

/** JSON with object keys sorted at every level, so `{a, b}` and `{b, a}` read the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
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

export class IdempotencyStore {
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
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      if (await this.claim(db, request, hash)) return this.runClaimed(db, request.key, operation, codec);
      const row = await this.read(db, request.key);
      if (row) {
        if (row.tool !== request.tool || row.resource !== request.resource || row.payload_hash !== hash) throw new IdempotencyConflict();
        if (row.state === 'done') return codec.decode(row.answer!);
        if (row.abandoned && (await this.takeOver(db, request.key))) return this.runClaimed(db, request.key, operation, codec);
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

  private async runClaimed<T>(db: Queryable, key: string, operation: () => Promise<T>, codec: { encode: (answer: T) => string }): Promise<T> {
    let answer: T;
    try {
      answer = await operation();
    } catch (error) {
      await db.query(`delete from idempotency_keys where key = $1 and state = 'running'`, [key]).catch(() => {});
      throw error;
    }
    await db.query(`update idempotency_keys set state = 'done', answer = $2 where key = $1`, [key, codec.encode(answer)]);
    return answer;
  }

  /** Claims the key for this request; an expired key (past its 24 hours, not yet purged) is claimed anew. */
  private async claim(db: Queryable, request: IdempotentRequest, hash: string): Promise<boolean> {
    const rows = await db.query(
      `insert into idempotency_keys (key, tool, resource, payload_hash, state, expires_at)
       values ($1, $2, $3, $4, 'running', now() + make_interval(hours => ${KEEP_HOURS}))
       on conflict (key) do update set tool = excluded.tool, resource = excluded.resource, payload_hash = excluded.payload_hash,
         state = 'running', answer = null, claimed_at = now(), expires_at = excluded.expires_at
       where idempotency_keys.expires_at < now()
       returning key`,
      [request.key, request.tool, request.resource, hash],
    );
    return rows.length > 0;
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

  private async takeOver(db: Queryable, key: string): Promise<boolean> {
    const rows = await db.query(
      `update idempotency_keys set claimed_at = now()
        where key = $1 and state = 'running' and claimed_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS})
        returning key`,
      [key],
    );
    return rows.length > 0;
  }
}
