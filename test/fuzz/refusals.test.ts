/**
 * Fuzz, property 4: a refused request changes nothing.
 * - Cart writes: a shopper holding a cart with two lines, a note and an attribute sends a random write (property
 *   3's bodies); when it is refused (4xx), GET /cart.js with the same cookie answers the same cart as before.
 * - Checkout tools: a new checkout gets a random update_checkout, complete_checkout or cancel_checkout (property 1's
 *   mutations of a valid call naming it); when the call is refused (a JSON-RPC error or an isError result),
 *   get_checkout answers the same checkout (status, lines, buyer, fulfillment) and no order exists.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { dropTestDatabases } from '../helpers/store.js';
import { assertRpcAnswer, backends, excerpt, fuzz, mutate, mutation, startFuzzStore, toolCall, withRequest, type FuzzStore } from './fuzz-harness.js';
import { CART_WRITES, cartBody, queryString, send, validCartBodies, type CartWrite } from './storefront-requests.js';
import { newCheckout, validArgs, variant } from './valid-calls.js';

after(dropTestDatabases);

const REFUSABLE_CHECKOUT_TOOLS = ['update_checkout', 'complete_checkout', 'cancel_checkout'] as const;

/** What a refusal must leave as it was. */
function checkoutState(checkout: any) {
  return { status: checkout.status, line_items: checkout.line_items, buyer: checkout.buyer, fulfillment: checkout.fulfillment, order: checkout.order, totals: checkout.totals };
}

for (const backend of backends) {
  describe(`fuzz: refused requests change nothing (${backend.name})`, () => {
    let t: FuzzStore;
    let variantIds: number[];
    before(async () => {
      t = await startFuzzStore(backend);
      variantIds = ['ESP-RIS-10', 'HYD-LEMONLIME-10'].map((sku) => Number(variant(t, sku)));
    });
    after(() => t.close());

    const orderCount = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from orders'))[0]!.n;

    /** A new cart with two lines, a note and an attribute: its cookie and its first line's key. */
    async function newShopperCart(): Promise<{ cookie: string; lineKey: string }> {
      const json = (payload: unknown) => ({ contentType: 'application/json', payload: JSON.stringify(payload), kind: 'setup' });
      const added = await send(t.app, 'POST', '/cart/add.js', { body: json({ items: [{ id: variantIds[0], quantity: 1, properties: { Engraving: 'Hi' } }, { id: variantIds[1], quantity: 2 }] }) });
      assert.equal(added.status, 200, added.raw);
      const cookie = `cart=${added.setCookie}`;
      const updated = await send(t.app, 'POST', '/cart/update.js', { cookie, body: json({ note: 'Leave at the door', attributes: { gift: 'yes' } }) });
      assert.equal(updated.status, 200, updated.raw);
      return { cookie, lineKey: JSON.parse(added.raw).items[0].key };
    }

    it('a refused cart write leaves the cart as it was', async (c) => {
      // The bodies are made against a cart's line key; every case's cart has the same lines, so one key shape serves.
      const sample = await newShopperCart();
      const request = fc.record({
        route: fc.constantFrom(...CART_WRITES),
        body: fc.constantFrom(...CART_WRITES).chain((route) => cartBody(route, validCartBodies(variantIds, sample.lineKey)[route as CartWrite], variantIds)),
        query: fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString }),
      });
      await fuzz(
        c,
        backend,
        request,
        async ({ route, body, query }) => {
          const { cookie, lineKey } = await newShopperCart();
          const payload = body.payload?.split(sample.lineKey).join(lineKey);
          const before = await send(t.app, 'GET', '/cart.js', { cookie });
          const url = `${route}${query ? `?${query}` : ''}`;
          const answer = await send(t.app, 'POST', url, { cookie, body: { ...body, payload }, accept: 'application/json' });
          const described = `POST ${url} (${body.kind}) content-type ${body.contentType} body ${payload}`;
          try {
            assert.ok(answer.status < 500, `POST ${route}: HTTP ${answer.status} ${excerpt(answer.raw)}`);
            if (answer.status < 400) return; // accepted: it may change the cart
            const after = await send(t.app, 'GET', '/cart.js', { cookie });
            assert.deepEqual(JSON.parse(after.raw), JSON.parse(before.raw), `POST ${route} (${body.kind}) was refused (HTTP ${answer.status}) yet changed the cart: ${excerpt(answer.raw)}`);
          } catch (error) {
            throw withRequest(error, described);
          }
        },
        { weight: 1 },
      );
    });

    for (const tool of REFUSABLE_CHECKOUT_TOOLS) {
      it(`a refused ${tool} leaves the checkout as it was, and places no order`, async (c) => {
        await fuzz(
          c,
          backend,
          mutation,
          async (change) => {
            const valid = await validArgs(t, tool);
            const id = valid.id as string;
            const { value, path } = mutate(valid, change);
            const meta = { 'ucp-agent': t.agent };
            const before = (await toolCall(t.app, 'get_checkout', { meta, id })).body.result.structuredContent;
            const orders = await orderCount();
            const answer = await toolCall(t.app, tool, value);
            const body = assertRpcAnswer(answer.status, answer.raw, `${tool} with ${path}`, { toolCall: true, echoed: answer.payload, request: answer.payload });
            const refused = body.error !== undefined || body.result.isError === true;
            if (!refused) return;
            try {
              const after = (await toolCall(t.app, 'get_checkout', { meta, id })).body.result.structuredContent;
              assert.deepEqual(checkoutState(after), checkoutState(before), `${tool} with ${path} was refused yet changed the checkout: ${excerpt(answer.raw)}`);
              assert.equal(await orderCount(), orders, `${tool} with ${path} was refused yet an order was placed`);
            } catch (error) {
              throw withRequest(error, answer.payload);
            }
          },
          { examples: [{ pick: 0, action: 'replace-text', key: 'x', value: null, text: '\u0000' }] },
        );
      });
    }

    it('the checkout the properties start from is open and ready', async () => {
      const checkout = await newCheckout(t);
      assert.equal(checkout.status, 'ready_for_complete', JSON.stringify(checkout.messages));
    });
  });
}
