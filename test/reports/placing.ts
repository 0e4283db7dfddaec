/**
 * Orders placed for the reports' tests through the real domain, as test/helpers/orders.ts places them, but prepared
 * by a browser or by an agent of a named platform (the host the commerce door passes in), and moved to a chosen
 * moment afterwards (the reports read days and periods).
 */
import assert from 'node:assert/strict';
import type { LineInput } from '../../src/checkout/checkout-service.js';
import type { Order } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';
import { SHIP_TO } from '../helpers/orders.js';

export type Prepared = { by: 'browser' } | { by: 'agent'; platform: string };

export async function placeOrderBy(store: Store, prepared: Prepared, lines: LineInput[], email = 'buyer@example.com'): Promise<Order> {
  const input = { lines, buyer: { email }, destination: SHIP_TO, shippingOption: 'standard', ...(prepared.by === 'agent' ? { agentPlatform: prepared.platform } : {}) };
  const actor = prepared.by === 'agent' ? 'agent' : 'buyer';
  const created = await store.checkouts.create(store.db, input, prepared.by, actor);
  const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, actor);
  assert.ok(asked.approval, `an approval link (status ${asked.view.record.status})`);
  const outcome = await store.checkouts.approve(store.db, asked.approval.token, asked.approval.formSecret, asked.approval.digest, { kind: 'none' });
  assert.equal(outcome.kind, 'placed', outcome.kind === 'refused' ? outcome.reason : outcome.kind);
  if (outcome.kind !== 'placed') throw new Error('not placed');
  return outcome.order;
}

/** The variant id of a demo catalog SKU. */
export function variantOf(store: Store, sku: string): number {
  const found = store.catalog.snapshot.products.flatMap((product) => product.variants).find((variant) => variant.sku === sku);
  if (!found) throw new Error(`no variant ${sku}`);
  return found.id;
}

/** Moves an order (and its checkout's moves and approval) to `at`, as if it had been placed then. */
export async function placedAt(store: Store, order: Order, at: Date): Promise<void> {
  await store.db.query('update orders set created_at = $2 where id = $1', [order.id, at.toISOString()]);
}
