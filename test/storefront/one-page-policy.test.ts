/**
 * Issue 35, build item 4: every HTML page's Content-Security-Policy comes from one builder (src/storefront/page-policy.ts)
 * and is sent once. Every page (shop, cart, checkout, approval, order, checkout link, policy pages and the error pages)
 * is fetched over a real socket, so a header sent twice would show as two lines; each carries exactly the builder's
 * policy for what it runs, with no other directive. An image address stored before the import checked them (a row
 * written directly) cannot add a directive or a wildcard: the builder leaves out any origin that is not
 * `https://host[:port]`. Both backends.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { contentSecurityPolicy, type PageScripts } from '../../src/storefront/page-policy.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { SHIP_TO } from '../helpers/orders.js';

after(dropTestDatabases);

const OWN_ORIGIN = 'http://store.test';
const CDN = 'https://cdn.example.com';
const PAGE = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

const DIRECTIVES: Record<PageScripts, string[]> = {
  none: ['default-src', 'style-src', 'img-src', 'form-action', 'frame-ancestors', 'base-uri'],
  shop: ['default-src', 'style-src', 'img-src', 'script-src', 'connect-src', 'form-action', 'frame-ancestors', 'base-uri'],
  passkeys: ['default-src', 'style-src', 'img-src', 'script-src', 'connect-src', 'form-action', 'frame-ancestors', 'base-uri'],
};

interface Answer {
  status: number;
  type: string | undefined;
  /** Every Content-Security-Policy line of the answer, as sent. */
  policies: string[];
  setCookie: string[];
  body: string;
}

function request(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request({ host: '127.0.0.1', port, method, path, headers: { host: 'store.test', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = response.rawHeaders;
        const values = (name: string) => raw.flatMap((value, i) => (i % 2 === 0 && value.toLowerCase() === name ? [raw[i + 1]!] : []));
        resolve({ status: response.statusCode!, type: response.headers['content-type'], policies: values('content-security-policy'), setCookie: values('set-cookie'), body: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The page's one policy: exactly the builder's for what it runs, its directives those and no other. */
function assertOnePolicy(answer: Answer, scripts: PageScripts, origins: readonly string[], what: string): void {
  assert.match(String(answer.type), /^text\/html/, what);
  assert.equal(answer.policies.length, 1, `${what}: one Content-Security-Policy line`);
  const policy = answer.policies[0]!;
  assert.equal(policy, contentSecurityPolicy(OWN_ORIGIN, origins, scripts), what);
  assert.deepEqual(policy.split('; ').map((directive) => directive.split(' ')[0]), DIRECTIVES[scripts], what);
}

for (const backend of backends) {
  describe(`every page's Content-Security-Policy, from the one builder (${backend.name})`, () => {
    let t: TestStore;
    let port: number;
    /** Each page, with what it runs. */
    let pages: { what: string; scripts: PageScripts; fetch: () => Promise<Answer> }[];

    before(async () => {
      t = await startTestStore(backend);
      const { db, checkouts } = t.store;
      // One product's pictures move to a CDN: its origin is the one the pages' img-src names besides this store.
      await importCatalog(db, { products: [{ handle: 'cdn-mug', title: 'CDN Mug', images: [{ src: `${CDN}/mug.png` }], variants: [{ sku: 'CDN-MUG', price: 1500, inventory_quantity: 9 }] }] });
      await t.store.catalog.refresh(db);
      await t.store.inventory.refresh(db);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;

      const variantId = t.store.catalog.snapshot.productByHandle('cdn-mug')!.variants[0]!.id;
      const added = await request(port, 'POST', '/cart/add.js', { 'content-type': 'application/json' }, JSON.stringify({ items: [{ id: variantId, quantity: 1 }] }));
      const cartCookie = added.setCookie.find((cookie) => cookie.startsWith('cart='))!.split(';')[0]!;
      const created = await checkouts.create(db, { lines: [{ variantId, quantity: 1 }], buyer: { email: 'ana@example.com' }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const { approval } = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      const placing = await checkouts.create(db, { lines: [{ variantId, quantity: 1 }], buyer: { email: 'bo@example.com' }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(db, placing.view.record.id, 'agent');
      const placed = await checkouts.approve(db, asked.approval!.token, asked.approval!.formSecret, asked.approval!.digest, { kind: 'none' });
      assert.equal(placed.kind, 'placed');
      const orderId = placed.kind === 'placed' ? placed.order.id : '';

      const get = (path: string, headers: Record<string, string> = {}) => () => request(port, 'GET', path, { ...PAGE, ...headers });
      const postForm = (path: string, headers: Record<string, string>) => () =>
        request(port, 'POST', path, { ...PAGE, 'content-type': 'application/x-www-form-urlencoded', ...headers }, 'action=approve');
      pages = [
        { what: 'home', scripts: 'shop', fetch: get('/') },
        { what: 'collection', scripts: 'shop', fetch: get('/collections/all') },
        { what: 'product', scripts: 'shop', fetch: get('/products/cdn-mug') },
        { what: 'search', scripts: 'shop', fetch: get('/search?q=mug') },
        { what: 'empty search', scripts: 'shop', fetch: get('/search') },
        { what: 'unknown product (404)', scripts: 'shop', fetch: get('/products/no-such-product') },
        { what: 'collection page past the end (404)', scripts: 'shop', fetch: get('/collections/all?page=9') },
        { what: 'empty cart', scripts: 'shop', fetch: get('/cart') },
        { what: 'cart', scripts: 'shop', fetch: get('/cart', { cookie: cartCookie }) },
        { what: 'checkout form', scripts: 'shop', fetch: get('/checkout', { cookie: cartCookie }) },
        { what: 'checkout form from another site (403)', scripts: 'shop', fetch: postForm('/checkout', { cookie: cartCookie, origin: 'https://elsewhere.example' }) },
        { what: 'cart link', scripts: 'shop', fetch: get(`/cart/c/${cartCookie.slice('cart='.length)}`) },
        { what: 'cart link form from another site (403)', scripts: 'shop', fetch: postForm(`/cart/c/${cartCookie.slice('cart='.length)}`, { origin: 'https://elsewhere.example' }) },
        { what: 'unknown cart link (404)', scripts: 'shop', fetch: get(`/cart/c/${'C'.repeat(32)}`) },
        { what: 'approval', scripts: 'none', fetch: get(`/checkout/approve/${approval!.token}`) },
        { what: 'unknown approval (404)', scripts: 'none', fetch: get(`/checkout/approve/${'A'.repeat(43)}`) },
        { what: 'approval form from another site (403)', scripts: 'none', fetch: postForm(`/checkout/approve/${approval!.token}`, { origin: 'https://elsewhere.example' }) },
        { what: 'order', scripts: 'none', fetch: get(`/orders/${orderId}`) },
        { what: 'unknown order (404)', scripts: 'none', fetch: get(`/orders/ord_${'x'.repeat(22)}`) },
        { what: "a checkout's page", scripts: 'none', fetch: get(`/checkouts/${created.view.record.id}`) },
        { what: 'unknown checkout (404)', scripts: 'none', fetch: get(`/checkouts/chk_${'x'.repeat(22)}`) },
        ...['terms-of-service', 'privacy-policy', 'refund-policy', 'shipping-policy'].map((kind) => ({ what: kind, scripts: 'none' as const, fetch: get(`/policies/${kind}`) })),
      ];
    });
    after(() => t.close());

    it('every HTML page carries exactly one policy, the builder’s for what it runs, with only the expected directives', async () => {
      for (const page of pages) assertOnePolicy(await page.fetch(), page.scripts, [CDN], page.what);
    });

    it('image addresses stored before the import checked them add no directive, source or wildcard to any page', async () => {
      const { db } = t.store;
      await db.query(
        `insert into product_images (product_id, position, src)
         select id, 1 + n, src from products, (values (1, 'https://img.example;form-action/x.png'), (2, 'https://*.example/x.png'),
           (3, 'https://a,b.example/x.png'), (4, 'http://plain.example/x.png'), (5, 'https://user:pw@creds.example/x.png')) as i(n, src)
          where handle = 'cdn-mug'`,
      );
      await db.query('update catalog_version set version = version + 1');
      await t.store.catalog.refresh(db);
      for (const page of pages) {
        const answer = await page.fetch();
        assertOnePolicy(answer, page.scripts, [CDN], page.what);
        assert.doesNotMatch(answer.policies[0]!, /img\.example|\*|,|plain\.example|creds\.example/, page.what);
      }
    });
  });
}

describe('the page policy builder', () => {
  it('leaves out every image origin that is not exactly https://host[:port]', () => {
    const hostile = ['https://img.example;form-action', 'https://*.example', '*', "'unsafe-inline'", 'http://plain.example', 'https://a.example/path', 'https://a b.example', 'data:', 'https://1.2.3.4'];
    const policy = contentSecurityPolicy(OWN_ORIGIN, [...hostile, 'https://cdn.example.com:8443'], 'none');
    assert.equal(policy, contentSecurityPolicy(OWN_ORIGIN, ['https://cdn.example.com:8443'], 'none'));
    assert.match(policy, /; img-src 'self' data: https:\/\/cdn\.example\.com:8443; /);
  });

  it('names the scripts a page runs by their full URLs, and nothing else runs', () => {
    assert.match(contentSecurityPolicy(OWN_ORIGIN, [], 'shop'), /; script-src http:\/\/store\.test\/assets\/storefront\.js; connect-src 'self'; /);
    assert.match(contentSecurityPolicy(OWN_ORIGIN, [], 'passkeys'), /; script-src http:\/\/store\.test\/checkout\/webauthn\.js http:\/\/store\.test\/checkout\/passkey\.js; connect-src 'self'; /);
    assert.doesNotMatch(contentSecurityPolicy(OWN_ORIGIN, [], 'none'), /script-src|connect-src|unsafe/);
  });
});
