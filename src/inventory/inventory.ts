/**
 * The inventory: the one writer of stock, and an in-memory copy of every variant's units on hand that the
 * doors read (availability in product JSON, the cart's stock limits, the MCP door). A stock change never
 * reloads the catalog: this copy follows the inventory table by change number, at once after a write here,
 * when told of a write elsewhere (another instance: NOTIFY on STOCK_CHANNEL), and by a poll as a safety net.
 */
import type { Database, Queryable } from '../db/database.js';
import { lockOnHand, readStock, readStockChangedSince, returnStock, setOnHandBySku, setOnHandOfVariants, takeStock } from './inventory-store.js';
import type { StockLevels } from './stock.js';

export { demandByVariant, isProductAvailable, isVariantAvailable, sellableQuantity, availabilityStatus, type StockLevels } from './stock.js';

/** Some variants lack the units asked for; nothing was taken. */
export class InsufficientStock extends Error {
  constructor(readonly variantIds: readonly number[]) {
    super(`not enough stock for variant${variantIds.length === 1 ? '' : 's'} ${variantIds.join(', ')}`);
    this.name = 'InsufficientStock';
  }
}

/** Levels moved since the merchant read them (a sale, another person's edit); nothing was set. */
export class StockChangedMeanwhile extends Error {
  constructor(readonly levels: ReadonlyMap<number, number>) {
    super(`stock changed meanwhile for variant${levels.size === 1 ? '' : 's'} ${[...levels.keys()].join(', ')}`);
    this.name = 'StockChangedMeanwhile';
  }
}

export class UnknownSku extends Error {
  constructor(readonly sku: string) {
    super(`no variant has the SKU "${sku}"`);
    this.name = 'UnknownSku';
  }
}

/** Every write to inventory_levels is announced on this channel (a trigger, migration 006), with its change number. */
export const STOCK_CHANNEL = 'storefront_stock';

/** Change numbers each read looks at again (writers that can be in flight at once on a server are far fewer). */
const REREAD_WINDOW = 200;

/** The variants whose units on hand changed, with their new levels. */
export type StockChange = ReadonlyMap<number, number>;
type StockListener = (change: StockChange) => void;

export class Inventory implements StockLevels {
  private readonly listeners: StockListener[] = [];
  private reads: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly levels: Map<number, number>,
    private seq: number,
  ) {}

  static async load(db: Queryable): Promise<Inventory> {
    const { levels, seq } = await readStock(db);
    return new Inventory(levels, seq);
  }

  onHand(variantId: number): number {
    return this.levels.get(variantId) ?? 0;
  }

  /** Called after each batch of stock changes this copy takes in. */
  onChange(listener: StockListener): void {
    this.listeners.push(listener);
  }

  /**
   * Takes in the stock changes written since the last read. Reads run one after another, each answering the
   * calls made before it starts: a burst of calls (notifications) costs one running read and one queued.
   */
  refresh(db: Queryable): Promise<void> {
    if (this.queued) return this.queued;
    const read = this.reads
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        return this.readChanges(db);
      });
    this.queued = read;
    this.reads = read;
    return read;
  }

  /**
   * Change numbers are taken when a row is written, not when its transaction commits: on a PostgreSQL server two
   * writers may commit out of order (10 after 11), and a read between them moves past 10 before 10 is visible.
   * Each read therefore also looks again at the last REREAD_WINDOW numbers (more than the writers that can be in
   * flight at once), and the safety poll on a server reads every level (`full`), which bounds what a longer
   * straggler could leave stale. An embedded database runs one transaction at a time, so it has no such gap.
   */
  private async readChanges(db: Queryable, full = false): Promise<void> {
    // A read asked for before the store closed (a notification, a poll) reads nothing once it has.
    if (this.closed) return;
    const since = full ? 0 : Math.max(0, this.seq - REREAD_WINDOW);
    const { levels, seq } = await readStockChangedSince(db, since);
    this.seq = Math.max(this.seq, seq);
    this.takeIn(levels);
  }

  /** Applies levels read or written; listeners hear of those that differ from the copy. */
  private takeIn(levels: ReadonlyMap<number, number>): void {
    const changed = new Map<number, number>();
    for (const [variantId, onHand] of levels) {
      if (this.levels.get(variantId) === onHand) continue;
      this.levels.set(variantId, onHand);
      changed.set(variantId, onHand);
    }
    if (changed.size > 0) for (const listener of this.listeners) listener(changed);
  }

  /**
   * Polls for stock changes made elsewhere (other processes, other instances), in case a notification was missed;
   * with `full`, each poll reads every level (the safety net on a PostgreSQL server, see readChanges).
   */
  watch(db: Queryable, intervalMs: number, onError: (error: unknown) => void, options: { full?: boolean } = {}): void {
    const poll = options.full ? () => (this.reads = this.reads.catch(() => {}).then(() => this.readChanges(db, true))) : () => this.refresh(db);
    this.timer = setInterval(() => void poll().catch(onError), intervalMs);
    this.timer.unref();
  }

  /** Stops the polling; reads still queued then read nothing. */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Takes units out of stock inside the caller's transaction: every variant has them, or InsufficientStock
   * is thrown and the caller's transaction must roll back. Answers the units sold beyond stock by variant
   * (back-orderable variants). The copy here follows after commit (refresh).
   */
  async take(tx: Queryable, demand: ReadonlyMap<number, number>, options: { backorder?: boolean } = {}): Promise<ReadonlyMap<number, number>> {
    const { short, backordered } = await takeStock(tx, demand, options);
    if (short.length > 0) throw new InsufficientStock(short);
    return backordered;
  }

  /** Puts units back (a canceled order's units that never shipped), inside the caller's transaction. */
  async giveBack(tx: Queryable, units: ReadonlyMap<number, number>): Promise<void> {
    await returnStock(tx, units);
  }

  /**
   * Sets variants' units on hand (variant id -> units, from 0) inside the caller's transaction: an edit in the admin.
   * With `expected`, a level that is no longer what the merchant saw (a sale since the form was shown) throws
   * StockChangedMeanwhile and the caller's transaction must roll back. Answers the levels before. The copy here follows
   * after commit (refresh).
   */
  async setLevels(tx: Queryable, levels: ReadonlyMap<number, number>, expected?: ReadonlyMap<number, number>): Promise<Map<number, number | null>> {
    for (const [variantId, onHand] of levels) {
      if (!Number.isInteger(onHand) || onHand < 0) throw new RangeError(`units on hand of variant ${variantId} must be a whole number from 0`);
    }
    if (expected && expected.size > 0) {
      const now = await lockOnHand(tx, [...expected.keys()]);
      const moved = [...expected].filter(([variantId, was]) => (now.get(variantId) ?? 0) !== was);
      if (moved.length > 0) throw new StockChangedMeanwhile(new Map(moved.map(([variantId]) => [variantId, now.get(variantId) ?? 0])));
    }
    return setOnHandOfVariants(tx, levels);
  }

  /**
   * Sets a variant's units on hand by SKU (the merchant's stock command), committed on its own; other instances
   * are notified on commit. This copy reads it back through its queue of reads: taken in directly, a read begun
   * before the write (on an earlier notification) could land after it and put the older level back.
   */
  async setOnHand(db: Database, sku: string, onHand: number): Promise<{ variantId: number; previous: number }> {
    const result = await setOnHandBySku(db, sku, onHand);
    if (!result) throw new UnknownSku(sku);
    // The write is committed: if the database cannot be read just now, the level is taken in as written.
    await this.refresh(db).catch(() => this.takeIn(new Map([[result.variantId, onHand]])));
    return result;
  }
}
