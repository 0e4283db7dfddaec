/**
 * The browser checkout (issue [pages]): from the cart, one page with the email, the US address and the shipping method,
 * inline errors, then the same approval page, proof and transaction as an agent's checkout. One domain checkout,
 * recorded as prepared by a browser and moved by the buyer. Both backends, through app.inject (APPROVAL_PROOF=link).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readApproval } from '../../src/checkout/checkout-store.js';
import { contentSecurityPolicy } from '../../src/storefront/page-policy.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { CHECKOUT_FORM } from '../helpers/orders.js';
import { Shopper, variantId, type Answer } from '../cart/shopper.js';

after(dropTestDatabases);

const NAVIGATE = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'same-origin' };
const FORM_POST = { ...NAVIGATE, origin: 'http://store.test' };

const FILLED = CHECKOUT_FORM;

const encoded = (form: Record<string, string | number>) => new URLSearchParams(Object.entries(form).map(([k, v]) => [k, String(v)])).toString();

const post = (shopper: Shopper, url: string, form: Record<string, string | number>, headers: Record<string, string> = FORM_POST) =>
  shopper.send('POST', url, { form: encoded(form), headers });

const APPROVAL_LOCATION = /^\/checkout\/approve\/([A-Za-z0-9_-]{43})$/;

function assertFormPage(page: Answer, status: number): void {
  assert.equal(page.status, status, page.raw);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.equal(page.headers['content-security-policy'], contentSecurityPolicy('http://store.test', [], 'shop'));
  assert.equal(page.raw.match(/<h1[\s>]/g)?.length, 1, 'exactly one h1');
  assert.match(page.raw, /<h1>Checkout<\/h1>/);
}

/** An input's attributes, by its id. */
function inputTag(html: string, id: string): string {
  const tag = new RegExp(`<(input|select)[^>]* id="${id}"[^>]*>`).exec(html)?.[0];
  assert.ok(tag, `no field ${id}`);
  return tag;
}

for (const backend of backends) {
  describe(`the browser checkout (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const count = async (sql: string, params: unknown[] = []) => (await t.store.db.query<{ count: number }>(sql, params))[0]!.count;
    const checkoutsOfCart = (token: string | undefined) => count('select count(*)::int as count from checkouts where cart_token = $1', [token]);
    const approvalsOfCart = (token: string | undefined) =>
      count('select count(*)::int as count from checkout_approvals a join checkouts c on c.id = a.checkout_id where c.cart_token = $1', [token]);

    /** A shopper whose cart holds `quantity` of `sku`, added with the product page's form. */
    const shopperWith = async (sku: string, quantity: number) => {
      const shopper = new Shopper(t.app);
      const added = await post(shopper, '/cart/add', { id: variantId(t, sku), quantity });
      assert.equal(added.headers.location, '/cart');
      return shopper;
    };

    it('an empty cart or none goes back to the cart page', async () => {
      for (const cookie of [null, 'cart=CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC']) {
        const shopper = new Shopper(t.app);
        const page = await shopper.send('GET', '/checkout', { headers: NAVIGATE, cookie });
        assert.equal(page.status, 303);
        assert.equal(page.headers.location, '/cart');
        const posted = await shopper.send('POST', '/checkout', { form: encoded(FILLED), headers: FORM_POST, cookie });
        assert.equal(posted.status, 303);
        assert.equal(posted.headers.location, '/cart');
      }
    });

    it('the form: the order, then labelled fields for the email, the US address and the shipping method', async () => {
      const shopper = await shopperWith('ESP-DEC-10', 2);
      const page = await shopper.send('GET', '/checkout', { headers: NAVIGATE });
      assertFormPage(page, 200);
      assert.match(page.raw, /<caption>Items<\/caption>/);
      assert.match(page.raw, /<img class="thumb" src="\/assets\/demo\/decaf-capsules\.svg"[^>]*>Decaf Espresso Capsules<\/th><td class="n">2<\/td><td class="n">\$6\.90<\/td><td class="n">\$13\.80<\/td>/);
      assert.match(page.raw, /<form method="post" action="\/checkout" class="checkout-form" novalidate>/);
      const labels = [...page.raw.matchAll(/<label for="([^"]+)">([^<]+)<\/label>/g)].map((m) => [m[1], m[2]]);
      assert.deepEqual(labels, [
        ['checkout-email', 'Email'],
        ['checkout-first-name', 'First name'],
        ['checkout-last-name', 'Last name'],
        ['checkout-street-address', 'Street address'],
        ['checkout-extended-address', 'Apartment, suite, etc. (optional)'],
        ['checkout-city', 'City'],
        ['checkout-state', 'State'],
        ['checkout-zip', 'ZIP code'],
        ['checkout-phone', 'Phone (optional)'],
        ['checkout-shipping-option', 'Standard shipping — $5.00'],
        ['checkout-shipping-option-express', `Express shipping — $${(t.store.config.checkout.expressShippingCents / 100).toFixed(2)}`],
      ]);
      assert.match(inputTag(page.raw, 'checkout-email'), /type="email" autocomplete="email"/);
      assert.match(page.raw, /<option value="CA">California<\/option>/);
      assert.match(page.raw, /<fieldset class="shipping-method">\n<legend>Shipping method<\/legend>/);
      assert.match(inputTag(page.raw, 'checkout-shipping-option'), /value="standard" checked/, 'the cheapest way is chosen first');
      assert.match(page.raw, /<button type="submit" class="primary">Continue to approval<\/button>/);
    });

    it('from the cart to the order: inline errors first, then the approval page, its proof and the one transaction', async () => {
      const decaf = variantId(t, 'ESP-DEC-10');
      const stockBefore = t.store.inventory.onHand(decaf);
      const orders = await count('select count(*)::int as count from orders');
      const shopper = await shopperWith('ESP-DEC-10', 2);

      // A missing email and a ZIP code that is not one: the form again, each error beside its field, nothing asked yet.
      const wrong = await post(shopper, '/checkout', { ...FILLED, email: '', zip: '941' });
      assertFormPage(wrong, 200);
      assert.match(wrong.raw, /<title>Error: Checkout · /);
      const summary = /<div class="problem error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(wrong.raw)?.[1];
      assert.ok(summary, 'a summary of the problems at the top');
      assert.match(summary, /<a href="#checkout-email">Your email address is needed for the order confirmation\.<\/a>/);
      assert.match(summary, /<a href="#checkout-zip">The ZIP code is not valid/);
      assert.match(inputTag(wrong.raw, 'checkout-email'), /aria-invalid="true" aria-describedby="checkout-email-error"/);
      assert.match(inputTag(wrong.raw, 'checkout-zip'), /value="941".*aria-invalid="true" aria-describedby="checkout-zip-error"/);
      assert.match(wrong.raw, /<p class="field-error" id="checkout-zip-error"><span class="visually-hidden">Error: <\/span>The ZIP code is not valid/);
      assert.match(inputTag(wrong.raw, 'checkout-street-address'), /value="1 Market St"/, 'what was typed is kept');
      assert.doesNotMatch(inputTag(wrong.raw, 'checkout-street-address'), /aria-invalid/);
      assert.match(wrong.raw, /<option value="CA" selected>California<\/option>/);
      assert.equal(await approvalsOfCart(shopper.token), 0, 'no approval was asked for');

      // Every detail right: the approval page, as an agent's checkout sends its buyer to.
      const ready = await post(shopper, '/checkout', FILLED);
      assert.equal(ready.status, 303, ready.raw);
      const token = APPROVAL_LOCATION.exec(String(ready.headers.location))?.[1];
      assert.ok(token, `to the approval page: ${String(ready.headers.location)}`);
      const approval = await readApproval(t.store.db, token);
      const checkout = (await t.store.checkouts.get(t.store.db, approval!.checkoutId))!.view.record;
      assert.equal(checkout.channel, 'browser', 'prepared by a browser');
      assert.equal(checkout.cartToken, shopper.token, 'the checkout of the cart');
      assert.equal(checkout.status, 'requires_escalation');
      assert.deepEqual(checkout.buyer, { email: 'ana@example.com', firstName: 'Ana', lastName: 'Lima' });
      assert.deepEqual(checkout.lines.map((line) => [line.variantId, line.quantity]), [[decaf, 2]]);
      const transitions = await t.store.checkouts.transitions(t.store.db, checkout.id);
      assert.deepEqual(transitions.map((step) => [step.from, step.to, step.actor]), [
        [null, 'incomplete', 'buyer'],
        ['incomplete', 'ready_for_complete', 'buyer'],
        ['ready_for_complete', 'requires_escalation', 'buyer'],
      ]);

      // The approval page and its form, in link mode: the form cookie, its token and the digest of what it shows.
      const opened = await t.app.inject({ method: 'GET', url: `/checkout/approve/${token}` });
      assert.equal(opened.statusCode, 200, opened.body);
      const formCookie = ([] as string[]).concat(opened.headers['set-cookie'] ?? []).find((c) => c.startsWith('approval_form='))!.split(';')[0]!;
      const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(opened.body)?.[1];
      const approved = await t.app.inject({
        method: 'POST',
        url: `/checkout/approve/${token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie, origin: 'http://store.test', 'sec-fetch-site': 'same-origin' },
        payload: encoded({ action: 'approve', form_token: field('form_token')!, digest: field('digest')! }),
      });
      assert.equal(approved.statusCode, 303, approved.body);
      assert.match(String(approved.headers.location), /^\/orders\/ord_[A-Za-z0-9_-]{22}$/);
      assert.equal(await count('select count(*)::int as count from orders'), orders + 1);
      const [order] = await t.store.db.query<{ channel: string; buyer_email: string; total: number }>('select channel, buyer_email, total from orders where checkout_id = $1', [checkout.id]);
      assert.equal(order!.channel, 'browser');
      assert.equal(order!.buyer_email, 'ana@example.com');
      assert.equal(t.store.inventory.onHand(decaf), stockBefore - 2, 'the stock went down');

      // The order closed the cart: the cart page is empty and offers nothing to buy again.
      const cartPage = await shopper.send('GET', '/cart', { headers: NAVIGATE });
      assert.equal(cartPage.status, 200);
      assert.match(cartPage.raw, /Your cart is empty\./);
      assert.doesNotMatch(cartPage.raw, /Check out/);
      assert.equal((await shopper.send('GET', '/checkout', { headers: NAVIGATE })).headers.location, '/cart');
    });

    it('opened again while the approval waits: the form shows what was given and the link; continuing again issues a new link', async () => {
      const shopper = await shopperWith('ESP-RIS-10', 1);
      const first = APPROVAL_LOCATION.exec(String((await post(shopper, '/checkout', { ...FILLED, shipping_option: 'express' })).headers.location))?.[1];
      assert.ok(first);
      const again = await shopper.send('GET', '/checkout', { headers: NAVIGATE });
      assertFormPage(again, 200);
      assert.ok(again.raw.includes(`<a href="/checkout/approve/${first}">Review and approve it</a>`));
      assert.match(inputTag(again.raw, 'checkout-email'), /value="ana@example.com"/);
      assert.match(inputTag(again.raw, 'checkout-shipping-option-express'), /checked/);

      // The cart changed meanwhile: the new link is for the cart as it is now.
      await post(shopper, '/cart/add', { id: variantId(t, 'ESP-RIS-10'), quantity: 1 });
      const second = APPROVAL_LOCATION.exec(String((await post(shopper, '/checkout', FILLED)).headers.location))?.[1];
      assert.ok(second);
      assert.notEqual(second, first);
      const old = await t.store.checkouts.approvalState(t.store.db, first);
      assert.equal(old.kind, 'closed', 'the earlier link stops working');
      const current = await t.store.checkouts.approvalState(t.store.db, second);
      assert.equal(current.kind, 'pending');
      if (current.kind === 'pending') {
        assert.deepEqual(current.view.lines.map((priced) => priced.line.quantity), [2]);
        assert.equal(current.view.record.shippingOption, 'standard');
      }
      assert.equal(await checkoutsOfCart(shopper.token), 1, 'one checkout for the cart');
    });

    it('a field too long or an email the store cannot mail: 422 and nothing kept; a state that is not one: kept, the form again with the errors beside their fields', async () => {
      const shopper = await shopperWith('ESP-RIS-10', 1);
      const page = await post(shopper, '/checkout', { ...FILLED, state: 'ZZ', city: 'x'.repeat(101) });
      assertFormPage(page, 422);
      // The field too long is refused before anything is kept.
      assert.match(page.raw, /<a href="#checkout-city">This is too long: use at most 100 characters\.<\/a>/);
      assert.equal(await checkoutsOfCart(shopper.token), 0);
      const notMailable = await post(shopper, '/checkout', { ...FILLED, email: 'ana-at-example', state: 'ZZ' });
      assertFormPage(notMailable, 422);
      assert.match(notMailable.raw, /<a href="#checkout-email">This is not one plain email address the store can mail/);
      assert.equal(await checkoutsOfCart(shopper.token), 0);
      const next = await post(shopper, '/checkout', { ...FILLED, state: 'ZZ', shipping_option: 'teleport' });
      assertFormPage(next, 200);
      assert.match(next.raw, /<a href="#checkout-state">"<bdi>ZZ<\/bdi>" is not a US state\.<\/a>/);
      assert.match(next.raw, /<a href="#checkout-shipping-option">The shipping chosen is not one this store offers/);
      assert.match(next.raw, /<fieldset class="shipping-method field-invalid" aria-describedby="checkout-shipping-option-error">/);
      assert.equal(await approvalsOfCart(shopper.token), 0);
    });

    it('a POST from another site is refused with a 403 page and nothing is made', async () => {
      const shopper = await shopperWith('ESP-RIS-10', 1);
      for (const headers of [
        { ...FORM_POST, origin: 'https://evil.example' },
        { ...FORM_POST, origin: 'null', 'sec-fetch-site': 'cross-site' },
      ]) {
        const page = await post(shopper, '/checkout', FILLED, headers);
        assert.equal(page.status, 403, page.raw);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
        assert.match(page.raw, /sent from another website/);
      }
      assert.equal(await checkoutsOfCart(shopper.token), 0);
    });

    it('a body the form cannot be is answered with a page, never a 5xx', async () => {
      const shopper = await shopperWith('ESP-RIS-10', 1);
      const tooLarge = await shopper.send('POST', '/checkout', { form: `email=${'a'.repeat(20_000)}`, headers: FORM_POST });
      assert.equal(tooLarge.status, 413);
      assert.equal(tooLarge.headers['content-type'], 'text/html; charset=utf-8');
      // Values that are not text are not given: the form again, saying what is still needed.
      const nested = await post(shopper, '/checkout', { 'email[a]': 'x', 'state[]': 'CA', zip: '94103' });
      assertFormPage(nested, 200);
      assert.match(nested.raw, /<a href="#checkout-email">Your email address is needed/);
      const json = await shopper.send('POST', '/checkout', { json: { email: 42 }, headers: FORM_POST });
      assertFormPage(json, 200);
      assert.equal(await approvalsOfCart(shopper.token), 0);
    });
  });
}
