/**
 * What happens to an order, announced inside the transaction that made it happen. Subscribers (the buyer's and
 * merchant's mail, the agent platform's webhook) turn an event into outbox rows in that same transaction, so a
 * message exists exactly when what it announces was committed, and is delivered after commit.
 *
 * Beside the sale's own moves, the payment's news: the buyer's bank disputed it, it failed (the provider said so, or
 * the hold lapsed uncaptured), the hold was released at the provider (not by the store's cancel, which is
 * `canceled`), or the hold lapses within a day and is still uncaptured (announced once per order).
 */
import type { Queryable } from '../db/database.js';
import type { Adjustment, Fulfillment, Order } from './orders.js';

export type OrderEvent =
  | { type: 'placed'; order: Order }
  | { type: 'captured'; order: Order }
  | { type: 'fulfilled'; order: Order; fulfillment: Fulfillment }
  | { type: 'canceled'; order: Order; adjustment: Adjustment }
  | { type: 'refunded'; order: Order; adjustment: Adjustment }
  /** `amount`: cents the bank disputes; `reason`: the provider's word for why (`fraudulent`, `product_not_received`…). */
  | { type: 'disputed'; order: Order; dispute: { amount: number; reason: string } }
  /** `reason`: what the provider said, or that the hold lapsed before it was captured. */
  | { type: 'payment_failed'; order: Order; reason: string }
  | { type: 'payment_voided'; order: Order }
  | { type: 'payment_expiring'; order: Order };

export type OrderEventType = OrderEvent['type'];

/** Writes what an event means for one audience into the outbox, in the caller's transaction. */
export type OrderEventSubscriber = (tx: Queryable, event: OrderEvent) => Promise<void>;

/** Runs every subscriber, one after another, in the transaction (a failure rolls the change back). */
export async function announce(tx: Queryable, subscribers: readonly OrderEventSubscriber[], event: OrderEvent): Promise<void> {
  for (const subscriber of subscribers) await subscriber(tx, event);
}
