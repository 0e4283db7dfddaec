/** Orders placed in tests the way a buyer places one: an agent's checkout, asked to complete, then the buyer's approval. */
import assert from 'node:assert/strict';
import type { Buyer } from '../../src/checkout/checkout.js';
import type { LineInput } from '../../src/checkout/checkout-service.js';
import type { Order } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';

export const SHIP_TO = { street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };

/**
 * Places one order through the checkout: an agent creates it with everything it needs and asks to complete, and the
 * buyer approves exactly what the approval page shows (through the domain, as the page calls it).
 */
export async function placeOrder(store: Pick<Store, 'db' | 'checkouts'>, lines: LineInput[], buyer: Buyer = { email: 'buyer@example.com' }): Promise<Order> {
  const created = await store.checkouts.create(store.db, { lines, buyer, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
  const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
  assert.ok(asked.approval, `an approval link (status ${asked.view.record.status})`);
  const outcome = await store.checkouts.approve(store.db, asked.approval.token, asked.approval.formSecret, asked.approval.digest, { kind: 'none' });
  assert.equal(outcome.kind, 'placed', outcome.kind === 'refused' ? outcome.reason : outcome.kind);
  if (outcome.kind !== 'placed') throw new Error('not placed');
  return outcome.order;
}
