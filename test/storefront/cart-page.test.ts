/**
 * The cart page (issue [pages]): GET /cart shows the browser's cart without making one, the cart's plain HTML form
 * posts land back on it (a refused one shows why, on the page, with the cart unchanged), the JSON callers are answered
 * as before, and the agent's hand-off /cart/c/{token} shows a cart that its button takes into the browser. Both
 * backends, through app.inject.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { contentSecurityPolicy } from '../../src/storefront/page-policy.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { assertCartError, countRows, Shopper, variantId, type Answer } from '../cart/shopper.js';

after(dropTestDatabases);

/** What a browser sends opening a page, and submitting one of the store's forms. */
const NAVIGATE = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' };
const FORM_POST = { ...NAVIGATE, 'sec-fetch-site': 'same-origin', origin: 'http://store.test' };

const open = (shopper: Shopper, url: string) => shopper.send('GET', url, { headers: NAVIGATE });
const submit = (shopper: Shopper, url: string, form: Record<string, string | number>) =>
  shopper.send('POST', url, { form: new URLSearchParams(Object.entries(form).map(([k, v]) => [k, String(v)])).toString(), headers: FORM_POST });

function assertCartPage(page: Answer, status = 200): void {
  assert.equal(page.status, status, page.raw);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.equal(page.headers['content-security-policy'], contentSecurityPolicy('http://store.test', [], 'shop'));
  assert.match(page.raw, /^<!doctype html><html lang="en">/);
  assert.equal(page.raw.match(/<h1[\s>]/g)?.length, 1, 'exactly one h1');
  assert.match(page.raw, /<h1>Your cart<\/h1>/);
  assert.match(page.raw, /<meta name="robots" content="noindex, nofollow">/);
}

/** The quantity a line's input shows, by the line's item name. */
function quantityShown(html: string, name: string): number | undefined {
  const label = new RegExp(`<label for="(cart-quantity-\\d+)">Quantity<span class="visually-hidden"> for ${name}</span></label>`).exec(html);
  if (!label) return undefined;
  const input = new RegExp(`<input id="${label[1]}" name="quantity" type="number" min="0"[^>]* value="(\\d+)"`).exec(html);
  return input ? Number(input[1]) : undefined;
}

/** The line key the page's forms post for a line. */
const lineKeys = (html: string) => [...new Set([...html.matchAll(/<input type="hidden" name="id" value="([^"]+)">/g)].map((m) => m[1]!))];

for (const backend of backends) {
  describe(`the cart page (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const itemOf = (sku: string) => {
      const product = t.store.catalog.snapshot.products.find((p) => p.variants.some((v) => v.sku === sku))!;
      const variant = product.variants.find((v) => v.sku === sku)!;
      return { product, variant, name: product.optionNames.length > 0 ? `${product.title} - ${variant.title}` : product.title };
    };

    it('with no cart, the page says the cart is empty, links to every product, and makes no cart and sets no cookie', async () => {
      const carts = await countRows(t, 'carts');
      for (const cookie of [null, 'cart=CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC', 'cart=not-a-token']) {
        const page = await new Shopper(t.app).send('GET', '/cart', { headers: NAVIGATE, cookie });
        assertCartPage(page);
        assert.match(page.raw, /Your cart is empty\./);
        assert.match(page.raw, /<a href="\/collections\/all">/);
        assert.doesNotMatch(page.raw, /Check out/);
        assert.equal(page.headers['set-cookie'], undefined, 'no cookie');
      }
      assert.equal(await countRows(t, 'carts'), carts, 'no cart was made');
    });

    it('a form post to /cart/add lands on /cart, which lists the line with its image, link, prices, quantity form and checkout button', async () => {
      const shopper = new Shopper(t.app);
      const added = await submit(shopper, '/cart/add', { id: variantId(t, 'ESP-RIS-10'), quantity: 2 });
      assert.equal(added.status, 302);
      assert.equal(added.headers.location, '/cart');
      assert.ok(shopper.token, 'the cart cookie is set');

      const page = await open(shopper, '/cart');
      assertCartPage(page);
      assert.equal(page.headers['set-cookie'], undefined, 'reading the cart sets no cookie');
      const { product, variant, name } = itemOf('ESP-RIS-10');
      assert.equal(quantityShown(page.raw, name), 2);
      assert.ok(page.raw.includes(`<a href="/products/${product.handle}">${product.title}</a>`), 'the product links to its page');
      assert.ok(page.raw.includes(`<span class="variant">${variant.title}</span>`));
      // The demo image's alt is the product's title, which the link beside it says already.
      assert.match(page.raw, /<img class="cart-thumb" src="\/assets\/demo\/[a-z0-9-]+\.svg" alt=""/);
      assert.match(page.raw, /\$6\.50 each/);
      assert.match(page.raw, /<dt class="grand">Total<\/dt><dd class="grand">\$13\.00<\/dd>/);
      assert.match(page.raw, /<button type="submit" class="secondary">Update<\/button>/);
      assert.ok(page.raw.includes(`Remove<span class="visually-hidden"> ${name}</span></button>`));
      assert.match(page.raw, /<form method="get" action="\/checkout" class="actions">\n<button type="submit" class="primary">Check out<\/button>/);
      // Standard shipping is free from $50.00 (FREE_SHIPPING_OVER_CENTS' default).
      assert.match(page.raw, /Spend \$37\.00 more for free standard shipping\./);
      assert.match(page.raw, /<progress max="5000" value="1300" aria-labelledby="free-shipping-status">/);
    });

    it('the quantity form changes a line, the remove form takes it out, and a cart over the threshold ships free', async () => {
      const shopper = new Shopper(t.app);
      await submit(shopper, '/cart/add', { id: variantId(t, 'ESP-RIS-10'), quantity: 1 });
      await submit(shopper, '/cart/add', { id: variantId(t, 'ESP-DEC-10'), quantity: 1 });
      const before = await open(shopper, '/cart');
      const [decafKey, ristrettoKey] = lineKeys(before.raw);
      assert.ok(decafKey?.startsWith(`${variantId(t, 'ESP-DEC-10')}:`), 'the newest line first');

      const changed = await submit(shopper, '/cart/change', { id: ristrettoKey!, quantity: 8 });
      assert.equal(changed.status, 302);
      assert.equal(changed.headers.location, '/cart');
      const after = await open(shopper, '/cart');
      assert.equal(quantityShown(after.raw, itemOf('ESP-RIS-10').name), 8);
      assert.equal(quantityShown(after.raw, itemOf('ESP-DEC-10').name), 1);
      assert.match(after.raw, /Your order ships free with standard shipping\./);

      const removed = await submit(shopper, '/cart/change', { id: decafKey!, quantity: 0 });
      assert.equal(removed.headers.location, '/cart');
      const left = await open(shopper, '/cart');
      assert.equal(quantityShown(left.raw, itemOf('ESP-DEC-10').name), undefined, 'the removed line is gone');
      assert.equal(quantityShown(left.raw, itemOf('ESP-RIS-10').name), 8);
      assert.equal((await shopper.cart()).body.item_count, 8);
    });

    it('a refused form post answers the cart page, 422, saying why, with the cart unchanged', async () => {
      const shopper = new Shopper(t.app);
      await submit(shopper, '/cart/add', { id: variantId(t, 'ESP-RIS-10'), quantity: 1 });
      const [key] = lineKeys((await open(shopper, '/cart')).raw);
      const token = shopper.token;
      const refusals: [string, Record<string, string | number>, RegExp][] = [
        ['/cart/add', { id: variantId(t, 'HYD-WATERMELON-30'), quantity: 1 }, /sold out/],
        ['/cart/add', { id: 999_999_999, quantity: 1 }, /Cannot find variant 999999999/],
        ['/cart/change', { id: key!, quantity: t.store.config.cartMaxLineQuantity + 1 }, /\d/],
        ['/cart/change', { id: key!, quantity: 'lots' }, /could not be read/],
      ];
      for (const [path, form, why] of refusals) {
        const page = await submit(shopper, path, form);
        assertCartPage(page, 422);
        const alert = /<div class="problem" role="alert"><p>([^<]*)<\/p><p>Your cart was not changed\.<\/p><\/div>/.exec(page.raw);
        assert.ok(alert, `${path} ${JSON.stringify(form)}: the refusal is on the page`);
        assert.match(alert[1]!, why);
        assert.doesNotMatch(page.raw, /"status":422/, 'no JSON for a person');
        assert.equal(quantityShown(page.raw, itemOf('ESP-RIS-10').name), 1, 'the cart as it was');
        assert.equal(page.headers['set-cookie'], undefined);
        assert.equal(shopper.token, token);
      }
      const cart = (await shopper.cart()).body;
      assert.deepEqual(cart.items.map((item: { sku: string; quantity: number }) => [item.sku, item.quantity]), [['ESP-RIS-10', 1]]);
    });

    it('JSON and script callers get the JSON error as before, and an HTML form post that does not say it is a navigation too', async () => {
      const shopper = new Shopper(t.app);
      const soldOut = `id=${variantId(t, 'HYD-WATERMELON-30')}&quantity=1`;
      const callers: Record<string, string>[] = [
        { accept: 'application/json' },
        { 'x-requested-with': 'XMLHttpRequest', 'sec-fetch-mode': 'cors' },
        { accept: 'text/html,application/xhtml+xml' },
      ];
      for (const headers of callers) {
        assertCartError(await shopper.send('POST', '/cart/add', { form: soldOut, headers }), /sold out/);
      }
      assertCartError(await shopper.send('POST', '/cart/add.js', { form: soldOut, headers: FORM_POST }), /sold out/);
      const added = await shopper.send('POST', '/cart/add', { json: { id: variantId(t, 'ESP-RIS-10'), quantity: 1 }, headers: { accept: 'application/json' } });
      assert.equal(added.status, 200);
      assert.equal(added.body.item_count, 1);
    });

    it('the hand-off /cart/c/{token} opened in a browser shows the cart and a button, taking nothing; the button takes the cart under a new cookie and lands on /cart; the link then says so', async () => {
      for (const headers of [NAVIGATE, { accept: 'text/html,application/xhtml+xml' }]) {
        const agent = new Shopper(t.app);
        await agent.add([{ id: variantId(t, 'ESP-DEC-10'), quantity: 3, properties: { Engraving: 'For Sam' } }]);
        const browser = new Shopper(t.app);
        const shown = await browser.send('GET', `/cart/c/${agent.token}`, { headers, cookie: null });
        assert.equal(shown.status, 200, shown.raw);
        assert.equal(shown.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(shown.headers['referrer-policy'], 'no-referrer');
        assert.equal(shown.headers['cache-control'], 'no-store');
        assert.equal(shown.headers['content-security-policy'], contentSecurityPolicy('http://store.test', [], 'shop'));
        assert.match(shown.raw, /<meta name="robots" content="noindex, nofollow">/);
        assert.equal(shown.raw.match(/<h1[\s>]/g)?.length, 1, 'exactly one h1');
        assert.ok(shown.raw.includes(itemOf('ESP-DEC-10').product.title), 'the item is shown');
        assert.match(shown.raw, /<td class="n">3<\/td>/, 'its quantity');
        assert.match(shown.raw, /<bdi>For Sam<\/bdi>/, "the agent's text is isolated");
        assert.match(shown.raw, /<form method="post" class="actions">\s*<button type="submit" class="primary">Open this cart here<\/button>\s*<\/form>/);
        assert.equal(shown.setCookie, undefined);
        assert.equal((await agent.cart()).body.item_count, 3, 'the agent still holds the cart');

        const opened = await browser.send('POST', `/cart/c/${agent.token}`, { form: '', headers: { ...headers, origin: 'http://store.test', ...('sec-fetch-mode' in headers ? { 'sec-fetch-site': 'same-origin' } : {}) }, cookie: null });
        assert.equal(opened.status, 303, opened.raw);
        assert.equal(opened.headers.location, '/cart');
        assert.equal(opened.headers['referrer-policy'], 'no-referrer');
        assert.equal(opened.headers['cache-control'], 'no-store');
        assert.ok(opened.setCookie?.includes('HttpOnly'));
        assert.ok(browser.token && browser.token !== agent.token, 'the browser took the cart under a new token');
        const page = await open(browser, '/cart');
        assertCartPage(page);
        assert.equal(quantityShown(page.raw, itemOf('ESP-DEC-10').name), 3);
        // The link was used: opened elsewhere, a page says the cart was handed over; a script gets the 404 JSON.
        const again = await new Shopper(t.app).send('GET', `/cart/c/${agent.token}`, { headers });
        assert.equal(again.status, 404, again.raw);
        assert.match(again.raw, /<h1>This cart was handed over<\/h1>/);
        assert.equal(again.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(again.headers['cache-control'], 'no-store');
        assert.equal(again.setCookie, undefined);
        const json = await new Shopper(t.app).send('GET', `/cart/c/${agent.token}`);
        assert.equal(json.status, 404);
        assert.equal(json.body.status, 404);
      }
    });

    it('a hand-off link naming no live cart answers a 404 page and sets nothing', async () => {
      const carts = await countRows(t, 'carts');
      for (const [method, token] of [['GET', 'C'.repeat(32)], ['GET', 'short'], ['GET', '%00'], ['POST', 'C'.repeat(32)]] as const) {
        const page = await new Shopper(t.app).send(method, `/cart/c/${token}`, { headers: method === 'GET' ? NAVIGATE : FORM_POST, ...(method === 'POST' ? { form: '' } : {}) });
        assert.equal(page.status, 404, `${method} ${token}: ${page.raw}`);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(page.headers['cache-control'], 'no-store');
        assert.match(page.raw, /The cart link is not valid or has expired\./);
        assert.match(page.raw, /<a href="\/">/);
        assert.equal(page.headers['set-cookie'], undefined);
      }
      assert.equal(await countRows(t, 'carts'), carts);
    });
  });
}
