/**
 * Group commit for cart changes: changes that arrive while a write is in flight wait and go together in the
 * next statement. On a quiet store a change is written at once, alone; under load many changes share one
 * statement (and on PostgreSQL one commit), which is what lets one instance keep up with many shoppers.
 * Each change is still answered only after its own write is stored.
 */
import { setImmediate as afterPendingIo } from 'node:timers/promises';
import type { Queryable } from '../db/database.js';
import { MAX_STATEMENT_PARAMETERS, parameterCount, writeCarts, type CartWrite } from './cart-store.js';

/** SQLSTATEs of a statement PostgreSQL rolled back whole: deadlock detected, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);

/** Changes per statement; the per-cart queue in the service makes each cart appear at most once. */
const MAX_BATCH = 100;

interface WaitingWrite {
  write: CartWrite;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

export class CartWriteBatcher {
  private waiting: WaitingWrite[] = [];
  private inFlight = 0;

  /** `maxInFlight`: statements running at once (PGlite runs one at a time anyway; a server can use more). */
  constructor(
    private readonly db: Queryable,
    private readonly maxInFlight: number,
  ) {}

  /** Resolves true once the change is stored, false when the cart's version had moved on (nothing written). */
  write(write: CartWrite): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ write, resolve, reject });
      if (this.inFlight < this.maxInFlight) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.inFlight++;
    try {
      // Let the requests already received reach their write first: PGlite runs a statement without yielding,
      // so without this turn each batch would hold only the changes queued before it started.
      for (await afterPendingIo(); this.waiting.length > 0; await afterPendingIo()) {
        await this.writeBatch(this.nextBatch());
      }
    } finally {
      this.inFlight--;
    }
  }

  /** The oldest waiting changes that fit in one statement. */
  private nextBatch(): WaitingWrite[] {
    let parameters = 0;
    let size = 0;
    while (size < this.waiting.length && size < MAX_BATCH) {
      parameters += parameterCount(this.waiting[size]!.write);
      if (size > 0 && parameters > MAX_STATEMENT_PARAMETERS) break;
      size++;
    }
    return this.waiting.splice(0, size);
  }

  private async writeBatch(batch: WaitingWrite[]): Promise<void> {
    try {
      const written = await writeCarts(
        this.db,
        batch.map((waiting) => waiting.write),
      );
      for (const waiting of batch) waiting.resolve(written.has(waiting.write.id));
    } catch (error) {
      // Only a statement PostgreSQL rolled back for certain (a deadlock with the purge, a serialization failure)
      // is tried again, each change alone. After any other failure (a lost connection) the statement may have
      // been applied: trying again could apply an acknowledged change twice, so each change fails instead.
      if (batch.length === 1 || !RETRYABLE.has((error as { code?: string } | null)?.code ?? '')) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      for (const waiting of batch) await this.writeBatch([waiting]);
    }
  }
}
