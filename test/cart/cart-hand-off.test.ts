/**
 * A hand-off hands the cart over (issue 35, finding 7): opening an agent's continue_url (/cart/c/{token}) only shows
 * the cart and a button (a link preview in a chat app fetches it before the buyer clicks, and must take nothing);
 * pressing the button (a form post from the store's page) moves the cart to a new token bound to that browser's
 * cookie, and the token the agent holds names no cart on any door: /cart.js with it as cookie is a fresh empty cart, the link answers a page saying the
 * cart was handed over (404 JSON to a script), the cart tools and create_checkout answer not_found, and the
 * storefront checkout with the old cookie goes back to the (empty) cart. The checkout the agent made of the cart
 * before stays what the agent wrote: the buyer's checkout is a new one, so nothing the buyer types is readable or
 * changeable through anything the agent holds. It holds across instances. Both backends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startSecondInstance, startTestStore, type TestStore } from '../helpers/store.js';
import { CHECKOUT_FORM } from '../helpers/orders.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta, injectToolCall } from '../ucp/mcp-harness.js';
import { Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

const NAVIGATE = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' };
const FORM_POST = { ...NAVIGATE, 'sec-fetch-site': 'same-origin', origin: 'http://store.test' };
/** What the buyer types at the checkout: none of it may reach whoever held the link. */
const BUYER_TEXT = [CHECKOUT_FORM.email!, CHECKOUT_FORM.last_name!, CHECKOUT_FORM.street_address!, CHECKOUT_FORM.extended_address!, CHECKOUT_FORM.city!];
const HANDED_OVER = /This cart link was already opened in another browser/;
/** A chat app's link preview: it asks for HTML and says nothing of how it fetches (no Sec-Fetch-*). */
const LINK_PREVIEW = { accept: 'text/html,application/xhtml+xml', 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' };
const CROSS_SITE_FORM = { ...NAVIGATE, 'sec-fetch-site': 'cross-site', origin: 'https://elsewhere.example' };

for (const backend of backends) {
  describe(`a hand-off hands the cart over (${backend.name})`, () => {
    let t: TestStore;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles(['2026-08-25']);
      t = await startTestStore(backend, { config: { allowInsecureProfiles: true } });
    });
    after(async () => {
      await t?.close();
      await profiles?.close();
    });

    const call = (name: string, args: Record<string, unknown>, app = t.app) =>
      injectToolCall(app, name, { ...args, meta: { ...(args.meta as object | undefined), ...agentMeta(profiles.profileUrl('2026-08-25')) } });
    const item = (sku: string) => String(variantId(t, sku));
    const linkPath = (cart: { continue_url: string }) => new URL(cart.continue_url).pathname;

    /** The agent's cart, and the checkout the agent made of it before handing it off. */
    async function agentCart(): Promise<{ cart: any; checkout: any }> {
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: item('ESP-DEC-10') }, quantity: 2 }] } });
      const checkout = await call('create_checkout', { checkout: { cart_id: cart.id } });
      assert.equal(checkout.ucp.status, 'success', JSON.stringify(checkout));
      return { cart, checkout };
    }

    /** The button on the link's page: a form post back to the link, from this store's page. */
    const pressOpenHere = (browser: Shopper, cart: { continue_url: string }) => browser.send('POST', linkPath(cart), { form: '', headers: FORM_POST });

    /** A buyer's browser opens the link and presses the button: it is sent to /cart holding the cart under a new token. */
    async function openInBrowser(cart: { id: string; continue_url: string }): Promise<Shopper> {
      const browser = new Shopper(t.app);
      const page = await browser.send('GET', linkPath(cart), { headers: NAVIGATE });
      assert.equal(page.status, 200, page.raw);
      assert.match(page.raw, /<form method="post"[^>]*>\s*<button type="submit" class="primary">Open this cart here<\/button>/);
      assert.equal(browser.token, undefined, 'opening the link sets no cookie');
      const taken = await pressOpenHere(browser, cart);
      assert.equal(taken.status, 303, taken.raw);
      assert.equal(taken.headers.location, '/cart');
      assert.ok(browser.token, 'the browser got a cart cookie');
      assert.notEqual(browser.token, cart.id, 'the cart moved to a new token');
      return browser;
    }

    /** The agent's cart is as it was: its id answers get_cart with its lines, no token was closed, its version did not move. */
    async function stillTheAgents(cart: { id: string }, version: number, what: string) {
      const read = await call('get_cart', { id: cart.id });
      assert.equal(read.ucp.status, 'success', `${what}: ${JSON.stringify(read)}`);
      assert.equal(read.id, cart.id, what);
      assert.deepEqual(read.line_items.map((line: any) => [line.item.id, line.quantity]), [[item('ESP-DEC-10'), 2]], what);
      assert.equal(await cartVersion(cart.id), version, `${what}: the cart's version`);
      assert.deepEqual(await t.store.db.query('select token from closed_cart_tokens where token = $1', [cart.id]), [], `${what}: no token closed`);
    }

    const cartVersion = async (token: string) =>
      (await t.store.db.query<{ version: number }>('select version from carts where token = $1', [token]))[0]?.version;

    const notFound = (answer: any, tool: string) => {
      assert.equal(answer.ucp.status, 'error', `${tool}: ${JSON.stringify(answer)}`);
      assert.equal(answer.messages[0].code, 'not_found', tool);
      assert.equal(answer.id, undefined, `${tool} answered something`);
    };

    const saysNothingOfTheBuyer = (text: string, where: string, newToken: string) => {
      for (const typed of [...BUYER_TEXT, newToken]) assert.ok(!text.includes(typed), `${where} shows ${typed}: ${text.slice(0, 300)}`);
    };

    it("after a browser takes the agent's cart (the link's page, then its button) and checks out, the agent's token answers not found on every door and sees none of the buyer's details", async () => {
      const { cart, checkout: agentCheckout } = await agentCart();
      const browser = await openInBrowser(cart);
      const newToken = browser.token!;
      const lines = (await browser.cart()).body;
      assert.equal(lines.item_count, 2, "the browser holds the agent's lines");

      // The buyer checks out in the browser: email, name, address; the store sends them to the approval page.
      const checkedOut = await browser.send('POST', '/checkout', { form: new URLSearchParams(CHECKOUT_FORM).toString(), headers: FORM_POST });
      assert.equal(checkedOut.status, 303, checkedOut.raw);
      assert.match(String(checkedOut.headers.location), /^\/checkout\/approve\//);
      const [buyerCheckout] = await t.store.db.query<{ id: string; buyer: { email: string } }>('select id, buyer from checkouts where cart_token = $1', [newToken]);
      assert.equal(buyerCheckout!.buyer.email, CHECKOUT_FORM.email);
      assert.notEqual(buyerCheckout!.id, agentCheckout.id, "the buyer's checkout is not the one the agent holds");

      // The agent's link: a page saying the cart was handed over (nothing of it shown), 404 JSON to a script.
      const page = await new Shopper(t.app).send('GET', linkPath(cart), { headers: NAVIGATE });
      assert.equal(page.status, 404);
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(page.raw, HANDED_OVER);
      assert.equal(page.setCookie, undefined);
      saysNothingOfTheBuyer(page.raw, 'the link page', newToken);
      const ownBrowser = await Shopper.holding(t.app, cart.id).send('GET', linkPath(cart), { headers: NAVIGATE });
      assert.equal(ownBrowser.status, 404, 'the link opened where the cookie still holds the old token');
      assert.match(ownBrowser.raw, HANDED_OVER);
      const script = await new Shopper(t.app).send('GET', linkPath(cart));
      assert.equal(script.status, 404);
      assert.deepEqual(Object.keys(script.body).sort(), ['description', 'message', 'status']);
      assert.equal(script.setCookie, undefined);

      // The storefront with the agent's token as cookie: a fresh empty cart, and the checkout leads back to it.
      const holder = Shopper.holding(t.app, cart.id);
      const read = await holder.cart();
      assert.equal(read.status, 200);
      assert.equal(read.body.item_count, 0);
      assert.ok(![cart.id, newToken].includes(read.body.token), 'a token of its own');
      saysNothingOfTheBuyer(read.raw, '/cart.js', newToken);
      for (const [method, form] of [['GET', undefined], ['POST', new URLSearchParams({ ...CHECKOUT_FORM, email: 'holder@example.com' }).toString()]] as const) {
        const answer = await Shopper.holding(t.app, cart.id).send(method, '/checkout', { headers: method === 'GET' ? NAVIGATE : FORM_POST, ...(form ? { form } : {}) });
        assert.equal(answer.status, 303, `${method} /checkout: ${answer.raw}`);
        assert.equal(answer.headers.location, '/cart');
      }
      const cartPage = await Shopper.holding(t.app, cart.id).send('GET', '/cart', { headers: NAVIGATE });
      saysNothingOfTheBuyer(cartPage.raw, 'the cart page', newToken);

      // The cart tools and create_checkout with the agent's cart id: not found, as for an unknown cart.
      notFound(await call('get_cart', { id: cart.id }), 'get_cart');
      notFound(await call('update_cart', { id: cart.id, cart: { line_items: [{ item: { id: item('ESP-RIS-10') }, quantity: 1 }] } }), 'update_cart');
      notFound(await call('cancel_cart', { id: cart.id, meta: { 'idempotency-key': randomUUID() } }), 'cancel_cart');
      notFound(await call('create_checkout', { checkout: { cart_id: cart.id } }), 'create_checkout');

      // The checkout the agent made before: still only what the agent wrote; changing it touches nothing of the buyer's.
      const held = await call('get_checkout', { id: agentCheckout.id });
      saysNothingOfTheBuyer(JSON.stringify(held), 'get_checkout', newToken);
      const changed = await call('update_checkout', {
        id: agentCheckout.id,
        meta: { 'idempotency-key': randomUUID() },
        checkout: { line_items: [{ item: { id: item('ESP-DEC-10') }, quantity: 1 }], buyer: { email: 'holder@example.com' } },
      });
      saysNothingOfTheBuyer(JSON.stringify(changed), 'update_checkout', newToken);
      const [still] = await t.store.db.query<{ buyer: { email: string } }>('select buyer from checkouts where id = $1', [buyerCheckout!.id]);
      assert.equal(still!.buyer.email, CHECKOUT_FORM.email, "the buyer's checkout is unchanged");

      // The buyer's cart is untouched by all of it.
      const after = (await browser.cart()).body;
      assert.equal(after.token, newToken);
      assert.deepEqual(after.items.map((i: any) => [i.id, i.quantity]), lines.items.map((i: any) => [i.id, i.quantity]));
      assert.equal(await t.store.carts.findCart(t.store.db, cart.id), undefined);
    });

    it('opening the link takes nothing: a browser, a link preview and a script see the cart, no cookie is set, and the agent still holds it', async () => {
      const { cart } = await agentCart();
      const version = (await cartVersion(cart.id))!;
      const productTitle = t.store.catalog.snapshot.products.find((p) => p.variants.some((v) => v.sku === 'ESP-DEC-10'))!.title;
      for (const headers of [NAVIGATE, LINK_PREVIEW]) {
        const page = await new Shopper(t.app).send('GET', linkPath(cart), { headers });
        assert.equal(page.status, 200, page.raw);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(page.headers['cache-control'], 'no-store');
        assert.equal(page.headers['referrer-policy'], 'no-referrer');
        assert.match(String(page.headers['content-security-policy']), /form-action 'self'/);
        assert.match(page.raw, /<meta name="robots" content="noindex, nofollow">/);
        assert.equal(page.setCookie, undefined, 'no cookie');
        // What the cart holds: the item, its quantity, the total; and one button, a form posting back to the link.
        assert.ok(page.raw.includes(`>${productTitle}<`), `the item is shown: ${productTitle}`);
        assert.match(page.raw, /<td class="n">2<\/td>/, 'its quantity');
        assert.match(page.raw, /<dt class="grand">Total<\/dt><dd class="grand">\$[\d.]+<\/dd>/);
        assert.equal(page.raw.match(/<form method="post"/g)?.length, 1, 'one form that posts');
        assert.doesNotMatch(page.raw, /<form method="post" action=/, 'it posts back to the link');
        await stillTheAgents(cart, version, `after a ${headers === NAVIGATE ? 'browser' : 'link preview'} opened the link`);
      }
      const script = new Shopper(t.app);
      const read = await script.send('GET', linkPath(cart));
      assert.equal(read.status, 200, read.raw);
      assert.equal(read.body.token, cart.id, 'the Cart under the token of the link');
      assert.equal(read.body.item_count, 2);
      assert.equal(read.setCookie, undefined, 'no cookie');
      const head = await t.app.inject({ method: 'HEAD', url: linkPath(cart), headers: NAVIGATE });
      assert.equal(head.statusCode, 200);
      await stillTheAgents(cart, version, 'after a script and a HEAD read the link');
      // The agent goes on changing its cart meanwhile.
      const updated = await call('update_cart', { id: cart.id, cart: { line_items: [{ item: { id: item('ESP-DEC-10') }, quantity: 3 }] } });
      assert.equal(updated.ucp.status, 'success', JSON.stringify(updated));
    });

    it('a form posted from another site, or a script on another site, takes nothing: 403, and the agent still holds the cart', async () => {
      const { cart } = await agentCart();
      const version = (await cartVersion(cart.id))!;
      const browser = new Shopper(t.app);
      const refused = await browser.send('POST', linkPath(cart), { form: '', headers: CROSS_SITE_FORM });
      assert.equal(refused.status, 403, refused.raw);
      assert.equal(refused.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(refused.raw, /<h1>Nothing was done<\/h1>/);
      assert.equal(refused.setCookie, undefined);
      const fetched = await browser.send('POST', linkPath(cart), { headers: { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors', accept: 'application/json' } });
      assert.equal(fetched.status, 403, fetched.raw);
      assert.deepEqual(Object.keys(fetched.body).sort(), ['description', 'message', 'status']);
      assert.equal(fetched.body.status, 403);
      assert.equal(fetched.setCookie, undefined);
      assert.equal(browser.token, undefined);
      await stillTheAgents(cart, version, 'after cross-site posts');
    });

    it('the browser that took the cart, opening the link again, lands on its cart; a cookie that already holds the cart keeps it', async () => {
      const { cart } = await agentCart();
      const browser = await openInBrowser(cart);
      const taken = browser.token;
      const again = await browser.send('GET', linkPath(cart), { headers: NAVIGATE });
      assert.equal(again.status, 303, again.raw);
      assert.equal(again.headers.location, '/cart');
      assert.equal(again.setCookie, undefined);
      const pressedAgain = await pressOpenHere(browser, cart);
      assert.equal(pressedAgain.status, 303, pressedAgain.raw);
      assert.equal(browser.token, taken, 'the same cart, no new token');
      const own = await browser.send('GET', `/cart/c/${taken}`);
      assert.equal(own.status, 200, own.raw);
      assert.equal(own.body.token, taken);
      const ownPost = await browser.send('POST', `/cart/c/${taken}`);
      assert.equal(ownPost.status, 200, ownPost.raw);
      assert.equal(ownPost.body.token, taken);
      assert.equal(browser.token, taken);
    });

    it('a script posting to the link takes the cart: the Cart it answers carries the new token, set as its cookie', async () => {
      for (const body of [{}, { json: {} }]) {
        const { cart } = await agentCart();
        const script = new Shopper(t.app);
        const taken = await script.send('POST', linkPath(cart), body);
        assert.equal(taken.status, 200, taken.raw);
        assert.notEqual(taken.body.token, cart.id);
        assert.equal(script.token, taken.body.token);
        assert.equal(taken.body.item_count, 2);
        assert.equal(taken.headers['referrer-policy'], 'no-referrer');
        notFound(await call('get_cart', { id: cart.id }), 'get_cart');
        const again = await new Shopper(t.app).send('POST', linkPath(cart));
        assert.equal(again.status, 404, again.raw);
        assert.equal(again.body.status, 404);
        assert.equal(again.setCookie, undefined);
      }
    });

    it('across two instances: of two browsers pressing the link page\'s button at once, exactly one takes the cart, and the agent’s change through the other instance finds no cart', async () => {
      const second = await startSecondInstance(backend, t, { allowInsecureProfiles: true });
      try {
        const { cart } = await agentCart();
        // The other instance has just written the cart (and so remembers it as written).
        const updated = await call('update_cart', { id: cart.id, cart: { line_items: [{ item: { id: item('ESP-DEC-10') }, quantity: 3 }] } }, second.app);
        assert.equal(updated.ucp.status, 'success', JSON.stringify(updated));
        const browsers = [new Shopper(t.app), new Shopper(second.app)];
        const answers = await Promise.all(browsers.map((b) => pressOpenHere(b, cart)));
        assert.deepEqual(answers.map((a) => a.status).sort(), [303, 404], answers.map((a) => a.raw).join('\n'));
        const loser = answers.find((a) => a.status === 404)!;
        assert.match(loser.raw, HANDED_OVER);
        const winner = browsers[answers.findIndex((a) => a.status === 303)]!;
        assert.equal((await winner.cart()).body.item_count, 3);

        for (const app of [second.app, t.app]) {
          notFound(await call('update_cart', { id: cart.id, cart: { line_items: [{ item: { id: item('ESP-RIS-10') }, quantity: 1 }] } }, app), 'update_cart');
          notFound(await call('get_cart', { id: cart.id }, app), 'get_cart');
        }
        const kept = (await winner.cart()).body;
        assert.deepEqual(kept.items.map((i: any) => [i.sku, i.quantity]), [['ESP-DEC-10', 3]]);
      } finally {
        await second.close();
      }
    });
  });
}
