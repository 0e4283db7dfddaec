/**
 * Idempotency keys for the operations UCP makes carry one (`meta["idempotency-key"]`: cancel_cart now,
 * complete/cancel_checkout later): the first answer is kept for 24 hours and replayed for a retry with the
 * same key and the same arguments; the same key with other arguments is a conflict (HTTP 409, -32000).
 * The payload identity is the tool and its arguments without `meta`, not the JSON-RPC envelope, whose id
 * changes on every retry (UCP issue #664). Kept in this instance's memory, bounded in size.
 */
import { createHash } from 'node:crypto';
import { idempotencyConflict } from '../jsonrpc-errors.js';
import type { ToolOutcome } from './tool.js';

const KEEP_MS = 24 * 60 * 60 * 1000;
const MAX_KEYS = 10_000;

interface Remembered {
  payload: string;
  expiresAt: number;
  outcome: Promise<ToolOutcome>;
}

function payloadIdentity(tool: string, args: Record<string, unknown>): string {
  const { meta: _meta, ...rest } = args;
  return createHash('sha256').update(JSON.stringify([tool, rest])).digest('hex');
}

export class IdempotentOutcomes {
  private readonly entries = new Map<string, Remembered>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs the operation once per key; a retry gets the first outcome (a failed run is not remembered). */
  run(key: string, tool: string, args: Record<string, unknown>, operation: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
    const payload = payloadIdentity(tool, args);
    const known = this.entries.get(key);
    if (known && known.expiresAt > this.now()) {
      if (known.payload !== payload) {
        throw idempotencyConflict();
      }
      return known.outcome;
    }
    const outcome = operation();
    const entry: Remembered = { payload, expiresAt: this.now() + KEEP_MS, outcome };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value as string);
    outcome.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return outcome;
  }
}
