/**
 * A valid call of every MCP tool, as an agent would make it (the agent profile in `meta`, a fresh idempotency key
 * where one is required): what the mutation properties start from. Tools that need a cart or a checkout get a new
 * one per call, so what one case does (cancel, complete) does not leave the next with nothing to work on.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { toolCall, type FuzzStore } from './fuzz-harness.js';

export const TOOLS = [
  'search_catalog',
  'lookup_catalog',
  'get_product',
  'create_cart',
  'get_cart',
  'update_cart',
  'cancel_cart',
  'create_checkout',
  'get_checkout',
  'update_checkout',
  'complete_checkout',
  'cancel_checkout',
  'get_order',
] as const;
export type ToolName = (typeof TOOLS)[number];

export const ADDRESS = {
  first_name: 'Ann',
  last_name: 'Lee',
  street_address: '1 Main St',
  extended_address: 'Apt 2',
  address_locality: 'Springfield',
  address_region: 'IL',
  postal_code: '62701',
  address_country: 'US',
};
// The phone as people write it: the checkout stores it as +12175550100 (E.164), which the fuzz suite checks.
export const BUYER = { email: 'ann@example.com', first_name: 'Ann', last_name: 'Lee', phone_number: '(217) 555-0100' };

/** A published variant's id by SKU (a string, as the UCP tools name variants). */
export function variant(t: FuzzStore, sku: string): string {
  const found = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  assert.ok(found, `no published variant ${sku}`);
  return String(found.id);
}

async function structured(t: FuzzStore, name: string, args: Record<string, unknown>): Promise<any> {
  const answer = await toolCall(t.app, name, args);
  const content = answer.body?.result?.structuredContent;
  assert.ok(content && !answer.body.result.isError, `${name} (setting up a case) failed: HTTP ${answer.status} ${answer.raw.slice(0, 400)}`);
  return content;
}

export const lineItems = (t: FuzzStore) => [
  { item: { id: variant(t, 'ESP-RIS-10') }, quantity: 2 },
  { item: { id: variant(t, 'HYD-LEMONLIME-10') }, quantity: 1 },
];

export const checkoutCreate = (t: FuzzStore) => ({
  line_items: lineItems(t),
  buyer: BUYER,
  fulfillment: { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] },
});

export const checkoutUpdate = (t: FuzzStore) => ({
  line_items: lineItems(t),
  buyer: { ...BUYER, email: 'bo@example.com' },
  fulfillment: {
    methods: [
      {
        id: 'shipping_1',
        type: 'shipping',
        line_item_ids: ['li_1', 'li_2'],
        destinations: [{ id: 'dest_1', ...ADDRESS }],
        selected_destination_id: 'dest_1',
        groups: [{ id: 'group_1', selected_option_id: 'express' }],
      },
    ],
  },
});

export async function newCart(t: FuzzStore): Promise<string> {
  return (await structured(t, 'create_cart', { meta: { 'ucp-agent': t.agent }, cart: { line_items: lineItems(t) } })).id;
}

export async function newCheckout(t: FuzzStore): Promise<any> {
  return structured(t, 'create_checkout', { meta: { 'ucp-agent': t.agent }, checkout: checkoutCreate(t) });
}

/** Valid arguments of `name`, making the cart or checkout it works on. */
export async function validArgs(t: FuzzStore, name: ToolName): Promise<Record<string, unknown>> {
  const meta = { 'ucp-agent': t.agent };
  const keyed = () => ({ 'ucp-agent': t.agent, 'idempotency-key': randomUUID() });
  switch (name) {
    case 'search_catalog':
      return {
        meta,
        catalog: {
          query: 'espresso capsules',
          context: { address_country: 'US', currency: 'USD', language: 'en' },
          filters: { categories: ['capsules'], price: { min: 0, max: 10_000 } },
          pagination: { limit: 5 },
        },
      };
    case 'lookup_catalog':
      return { meta, catalog: { ids: ['decaf-capsules', 'ESP-CLA-10', variant(t, 'ESP-RIS-10')], context: { address_country: 'US' } } };
    case 'get_product':
      return { meta, catalog: { id: 'sleep-capsules', selected: [{ name: 'Size', label: '10' }], preferences: ['Size'] } };
    case 'create_cart':
      return { meta, cart: { line_items: lineItems(t), buyer: BUYER, context: { address_country: 'US' } } };
    case 'get_cart':
      return { meta, id: await newCart(t) };
    case 'update_cart':
      return { meta, id: await newCart(t), cart: { line_items: [{ item: { id: variant(t, 'ESP-CLA-10') }, quantity: 3 }], buyer: BUYER } };
    case 'cancel_cart':
      return { meta: keyed(), id: await newCart(t) };
    case 'create_checkout':
      return { meta, checkout: checkoutCreate(t) };
    case 'get_checkout':
      return { meta, id: (await newCheckout(t)).id };
    case 'update_checkout':
      return { meta, id: (await newCheckout(t)).id, checkout: checkoutUpdate(t) };
    case 'complete_checkout':
      return {
        meta: keyed(),
        id: (await newCheckout(t)).id,
        checkout: { payment: { instruments: [{ id: 'pi_1', handler_id: 'manual_capture', type: 'card', credential: { type: 'token', token: 'tok' } }] } },
      };
    case 'cancel_checkout':
      return { meta: keyed(), id: (await newCheckout(t)).id };
    case 'get_order':
      return { meta, id: 'ord_0000000000000000000000' };
  }
}
