/** Orders placed in tests the way a buyer places one: an agent's checkout, asked to complete, then the buyer's approval. */
import assert from 'node:assert/strict';
import type { Buyer } from '../../src/checkout/checkout.js';
import type { LineInput } from '../../src/checkout/checkout-service.js';
import type { Order, OrderLine } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';
import { Shopper, variantId } from '../cart/shopper.js';
import type { TestStore } from './store.js';

/** A deliverable address with its recipient, in the domain's names. */
export const SHIP_TO = { firstName: 'Sam', lastName: 'Reed', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };
/** A deliverable address with a name, in the domain's names (a checkout's destination). */
export const ANA_AT_MARKET_ST = {
  firstName: 'Ana',
  lastName: 'Lima',
  streetAddress: '1 Market St',
  locality: 'San Francisco',
  region: 'CA',
  postalCode: '94103',
  country: 'US',
};

/**
 * Places one order through the checkout: an agent creates it with everything it needs and asks to complete, and the
 * buyer approves exactly what the approval page shows (through the domain, as the page calls it).
 */
export async function placeOrder(store: Pick<Store, 'db' | 'checkouts'>, lines: LineInput[], buyer: Buyer = { email: 'buyer@example.com' }): Promise<Order> {
  const created = await store.checkouts.create(store.db, { lines, buyer, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
  const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
  assert.ok(asked.approval, `an approval link (status ${asked.view.record.status})`);
  const { token } = asked.approval;
  let outcome: { kind: string; order?: Order; reason?: string } = await store.checkouts.approve(store.db, token, asked.approval.formSecret, asked.approval.digest, { kind: 'none' });
  if (outcome.kind === 'paying') {
    // A provider holding the buyer's money (its page paid at once, as the test's provider does): the buyer comes back.
    const [session] = await store.db.query<{ payment_session_id: string }>('select payment_session_id from checkout_approvals where token = $1', [token]);
    outcome = await store.checkouts.approvals.completePayment(store.db, session!.payment_session_id, token);
  }
  assert.equal(outcome.kind, 'placed', outcome.kind === 'refused' ? outcome.reason : outcome.kind);
  if (outcome.kind !== 'placed' || !outcome.order) throw new Error('not placed');
  return outcome.order;
}

/** An order line as the database gives it back (2 × Drink stick - Mango at $12.50), for tests of renderings. */
export function orderLine(overrides: Partial<OrderLine> = {}): OrderLine {
  return {
    id: 'line_1',
    position: 0,
    variantId: 1,
    productId: 1,
    sku: 'STICK-MANGO',
    productTitle: 'Drink stick',
    variantTitle: 'Mango',
    title: 'Drink stick - Mango',
    quantity: 2,
    unitPrice: 1250,
    lineTotal: 2500,
    sellingPlanId: null,
    properties: {},
    fulfilled: 0,
    canceled: 0,
    backordered: 0,
    ...overrides,
  };
}

/** A placed order of that one line, shipped standard to Ada in San Francisco, for tests of what is rendered from an order. */
export function orderFixture(overrides: Partial<Order> = {}): Order {
  return {
    id: 'ord_abc123',
    number: 1001,
    checkoutId: 'chk_1',
    status: 'placed',
    channel: 'agent',
    currency: 'USD',
    buyerEmail: 'ada@example.com',
    buyer: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    shippingAddress: { firstName: 'Ada', lastName: 'Lovelace', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' },
    shippingOption: { id: 'standard', title: 'Standard shipping', amount: 500 },
    subtotal: 2500,
    shipping: 500,
    tax: 0,
    total: 3000,
    paymentState: 'authorized',
    paymentHandler: 'manual',
    paymentSummary: 'Payment authorized.',
    captured: 0,
    refunded: 0,
    payment: {
      provider: 'stripe',
      state: 'authorized',
      amount: 3000,
      authorized: 3000,
      authorizedUntil: new Date('2026-04-15T12:00:00Z'),
      dueAt: null,
      instructions: null,
      captured: 0,
      refunded: 0,
      disputed: false,
    },
    canceledAt: null,
    cancelReason: null,
    webhookUrl: null,
    createdAt: new Date('2026-04-08T12:00:00Z'),
    lines: [orderLine()],
    fulfillments: [],
    adjustments: [],
    ...overrides,
  };
}

/** The browser checkout form (POST /checkout) as a buyer fills it, by the names it posts. */
export const CHECKOUT_FORM: Record<string, string> = {
  email: 'ana@example.com',
  first_name: 'Ana',
  last_name: 'Lima',
  street_address: '1 Market St',
  extended_address: 'Apt 4',
  city: 'San Francisco',
  state: 'CA',
  zip: '94103',
  phone: '',
  shipping_option: 'standard',
};

/** The headers of a checkout form post from the store's own page (a browser's navigation). */
export const FORM_POST = { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'same-origin', origin: 'http://store.test' };

/** A browser whose cart holds one `sku`, ready to post the checkout form. */
export async function shopperWithCart(t: TestStore, sku = 'ESP-RIS-10'): Promise<Shopper> {
  const shopper = new Shopper(t.app);
  await shopper.send('POST', '/cart/add', { form: `id=${variantId(t, sku)}&quantity=1`, headers: FORM_POST });
  return shopper;
}
