/**
 * The shop's HTML pages (issue [pages], items 1 and 2): home, collection, product and search pages through the real
 * app on both backends. Each is HTML with a title, a meta description, a canonical URL, Open Graph tags and the
 * shop's policy; a product page carries schema.org JSON-LD whose offers match the product; pages answer 304 to
 * their ETag and change (tag included) when stock does; unknown handles are the shop's 404 page; collections page
 * by 24; search ranks as the suggest endpoint does; nothing a catalog holds becomes markup; and the storefront JSON
 * answers as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import type { CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { productJson } from '../../src/storefront/product-json.js';
import { merchantHtml } from '../../src/storefront/pages/shop-parts.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const BASE = 'http://store.test';

interface Page {
  status: number;
  headers: Record<string, unknown>;
  html: string;
}

async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<Page> {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, headers: response.headers, html: response.body };
}

const first = (pattern: RegExp, text: string) => pattern.exec(text)?.[1];
const all = (pattern: RegExp, text: string) => [...text.matchAll(pattern)].map((m) => m[1]!);
const decode = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The products a page shows as cards, in order, by handle. */
const cardHandles = (html: string) => all(/<h3 class="card-title"><a href="\/products\/([a-z0-9-]+)">/g, html);

/** The head every shop page has: title, meta description, canonical, Open Graph, and the shop's policy and script. */
function assertShopHead(page: Page, url: string, expected: { title: RegExp; canonical: string; ogType?: string }): void {
  assert.equal(page.status, 200, `${url}: ${page.html.slice(0, 300)}`);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8', url);
  assert.match(first(/<title>([^<]*)<\/title>/, page.html) ?? '', expected.title, url);
  const description = first(/<meta name="description" content="([^"]*)">/, page.html);
  assert.ok(description && description.length > 10 && description.length <= 170, `${url}: meta description "${description}"`);
  assert.equal(first(/<link rel="canonical" href="([^"]*)">/, page.html), `${BASE}${expected.canonical}`, url);
  assert.equal(first(/<meta property="og:url" content="([^"]*)">/, page.html), `${BASE}${expected.canonical}`, url);
  assert.ok(first(/<meta property="og:title" content="([^"]*)">/, page.html), url);
  assert.equal(first(/<meta property="og:description" content="([^"]*)">/, page.html), description, url);
  assert.equal(first(/<meta property="og:type" content="([^"]*)">/, page.html), expected.ogType ?? 'website', url);
  assert.equal(page.html.match(/<h1[ >]/g)?.length, 1, `${url}: one h1`);
  const policy = String(page.headers['content-security-policy']);
  assert.match(policy, /script-src http:\/\/store\.test\/assets\/storefront\.js;/, url);
  assert.doesNotMatch(policy, /unsafe-inline/, url);
  assert.match(page.html, /<script src="\/assets\/storefront\.js" defer><\/script>/, url);
  // No inline script: the only script elements are the shop's file and JSON-LD data blocks.
  for (const tag of page.html.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /src="\/assets\/storefront\.js"|type="application\/ld\+json"/, `${url}: ${tag}`);
  assert.match(page.html, /<main id="main"( class="wide")?>/, url);
  assert.equal(page.headers['cache-control'], 'public, max-age=30', url);
  assert.match(String(page.headers.etag), /^"[A-Za-z0-9_-]{27}"$/, url);
}

function jsonLd(html: string): any {
  const block = first(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/, html);
  assert.ok(block, 'a JSON-LD block');
  return JSON.parse(block);
}

const SCHEMA_AVAILABILITY = { true: 'https://schema.org/InStock', false: 'https://schema.org/OutOfStock' } as const;

/** A catalog of `count` plain products, each one variant in stock, for paging. */
function pagingCatalog(count: number): CatalogDocument {
  return {
    products: Array.from({ length: count }, (_, i) => ({
      handle: `paging-mug-${String(i).padStart(2, '0')}`,
      title: `Paging Mug ${String(i).padStart(2, '0')}`,
      description_html: `<p>Mug number ${i}.</p>`,
      vendor: 'Mug Co.',
      product_type: 'Mug',
      variants: [{ sku: `PAGING-MUG-${i}`, price: 1000 + i, inventory_quantity: 5 }],
    })),
  };
}

const HOSTILE_TITLE = '<script>alert("title")</script> Mug & "Cup"';
const hostileCatalog: CatalogDocument = {
  products: [
    {
      handle: 'hostile-mug',
      title: HOSTILE_TITLE,
      description_html:
        '<p onclick="steal()">Hello <b style="color:red">bold</b><script>alert("desc")</script></p>' +
        '<img src=x onerror="alert(1)"><a href="javascript:alert(2)">bad link</a><a href=" jav&#x61;script:alert(3)">worse</a>' +
        '<a href="https://example.com/a?b=1&amp;c=2" target="_blank">good link</a><style>body{display:none}</style>' +
        '<svg><script>alert(4)</script></svg><iframe src="https://evil.example/"></iframe><table><tr><td>cell',
      vendor: '<b>Vendor</b>',
      // The import refuses a javascript: or plain-http image; the test stores those as rows written before it did.
      images: [{ src: 'https://cdn.example.com/mug.png', alt: '<b>alt</b>' }],
      variants: [{ sku: 'HOSTILE-1', price: 1250, inventory_quantity: 3 }],
    },
  ],
};

describe('the merchant description allow-list', () => {
  const clean = (html: string) => merchantHtml(html).text;
  it('keeps text, allowed tags and safe links; drops scripts, styles, handlers and unsafe URLs', () => {
    assert.equal(clean('<p>Hi <strong>there</strong></p><ul><li>one</li></ul>'), '<p>Hi <strong>there</strong></p><ul><li>one</li></ul>');
    assert.equal(clean('<p onclick="x()" class="a">text</p>'), '<p>text</p>');
    assert.equal(clean('a<script>alert(1)</script>b<style>p{}</style>c'), 'abc');
    // sanitize-html reads `<scr<script>` as a browser does: one unknown element named `scr<script` (dropped, its text kept).
    assert.equal(clean('<scr<script>x</script>ipt>alert(1)</script>'), 'xipt&gt;alert(1)', 'shown as text, never a tag');
    assert.equal(clean('<svg><svg></svg><script>alert(1)</script></svg>after'), 'after');
    assert.equal(clean('<!-- <script>alert(1)</script> -->ok'), 'ok');
    assert.equal(clean('<textarea><script>alert(1)</script></textarea>ok'), 'ok');
    assert.equal(clean('<img src=x onerror=alert(1)>'), '');
    assert.equal(clean('<a href="javascript:alert(1)">x</a>'), '<a>x</a>');
    assert.equal(clean('<a href="  JaVaScRiPt:alert(1)">x</a>'), '<a>x</a>');
    assert.equal(clean('<a href="jav&#x61;script:alert(1)">x</a>'), '<a>x</a>');
    assert.equal(clean('<a href="jav&#x09;ascript:alert(1)">x</a>'), '<a>x</a>');
    assert.equal(clean('<a href="java\tscript:alert(1)">x</a>'), '<a>x</a>');
    assert.equal(clean('<a href="data:text/html,x">x</a>'), '<a>x</a>');
    assert.equal(clean('<a href="https://example.com/?a=1&amp;b=2">x</a>'), '<a href="https://example.com/?a=1&amp;b=2" rel="nofollow noopener noreferrer">x</a>');
    assert.equal(clean('<a href=/collections/all>x</a>'), '<a href="/collections/all" rel="nofollow noopener noreferrer">x</a>');
  });

  it('closes what it opens and ignores end tags it did not open, so the page around it stays whole', () => {
    assert.equal(clean('<table><tr><td>cell'), '<table><tr><td>cell</td></tr></table>');
    assert.equal(clean('</div></main><p>x'), '<p>x</p>');
    // A new <li> closes the open one, as in a browser.
    assert.equal(clean('<ul><li>a<li>b</ul>'), '<ul><li>a</li><li>b</li></ul>');
  });

  it('moves headings below the page’s own, and escapes stray angle brackets and ampersands', () => {
    assert.equal(clean('<h1>Big</h1><h2>Less</h2>'), '<h3>Big</h3><h4>Less</h4>');
    // Character references are decoded and the text escaped again: the same text on the page.
    assert.equal(clean('1 < 2 & 3 > 2 &amp; &#60;b&#62;'), '1 &lt; 2 &amp; 3 &gt; 2 &amp; &lt;b&gt;');
  });
});

for (const backend of backends) {
  describe(`the shop's pages (${backend.name})`, () => {
    let t: TestStore;
    let app: FastifyInstance;
    before(async () => {
      t = await startTestStore(backend);
      app = t.app;
    });
    after(() => t.close());

    const variantIdOf = (sku: string) => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;

    it('the home page: the store’s name as h1, its description, its collections and featured products', async () => {
      const page = await get(app, '/');
      assertShopHead(page, '/', { title: /^Storefront$/, canonical: '/' });
      assert.match(page.html, /<h1>Storefront<\/h1>/);
      assert.match(page.html, /<p class="lede">Storefront is an online store\.<\/p>/);
      for (const [handle, title] of [['drink-sticks', 'Drink Sticks'], ['capsules', 'Capsules'], ['subscribe-and-save', 'Subscribe &amp; Save']]) {
        assert.match(page.html, new RegExp(`<a href="/collections/${handle}">${title}</a>`));
      }
      assert.match(page.html, /<a href="\/collections\/all">Browse all products<\/a>/);
      const featured = cardHandles(page.html);
      assert.ok(featured.length >= 4, `featured products: ${featured.join()}`);
      assert.ok(!featured.includes('cold-brew-capsules'), 'an unpublished product is not featured');
      assert.equal(jsonLd(page.html)['@type'], 'WebSite');
    });

    it('a collection page: its title and description, a card per product (image with alt, title link, price, compare-at struck)', async () => {
      const page = await get(app, '/collections/drink-sticks');
      assertShopHead(page, '/collections/drink-sticks', { title: /^Drink Sticks · Storefront$/, canonical: '/collections/drink-sticks' });
      assert.match(page.html, /<h1>Drink Sticks<\/h1>/);
      assert.match(page.html, /<div class="description"><p>Single-serve drink mixes for hydration and energy\.<\/p><\/div>/);
      assert.deepEqual(cardHandles(page.html), ['hydration-drink-stick', 'energy-drink-stick']);
      assert.match(page.html, /<img class="card-image" src="\/assets\/demo\/energy-drink-stick\.svg" alt="Energy Drink Stick"/);
      // Energy Drink Stick sells at $19.99 instead of $24.99.
      assert.match(page.html, /<span class="visually-hidden">Sale price: <\/span><span>\$19\.99<\/span><\/span> <s class="price-was"><span class="visually-hidden">Regular price: <\/span><span>\$24\.99<\/span><\/s>/);
      assert.doesNotMatch(page.html, /<nav class="pagination"/, 'one page: no pagination');

      const everything = await get(app, '/collections/all');
      assertShopHead(everything, '/collections/all', { title: /^All products · Storefront$/, canonical: '/collections/all' });
      assert.match(everything.html, /<h1>All products<\/h1>/);
      assert.deepEqual(cardHandles(everything.html).sort(), ['decaf-capsules', 'energy-drink-stick', 'espresso-capsules', 'hydration-drink-stick', 'sleep-capsules']);
    });

    it('a product page: images, h1, price, availability, the add-to-cart form, selling plans, description, products beside it', async () => {
      const page = await get(app, '/products/hydration-drink-stick');
      assertShopHead(page, '/products/hydration-drink-stick', { title: /^Hydration Drink Stick · Storefront$/, canonical: '/products/hydration-drink-stick', ogType: 'product' });
      const html = page.html;
      assert.equal(first(/<meta property="og:image" content="([^"]*)">/, html), `${BASE}/assets/demo/hydration-drink-stick.svg`);
      assert.match(first(/<meta name="description" content="([^"]*)">/, html)!, /^An electrolyte drink mix in a single-serve stick/);
      assert.match(html, /<img class="main-image" src="\/assets\/demo\/hydration-drink-stick\.svg" alt="Hydration Drink Stick"/);
      assert.match(html, /<h1>Hydration Drink Stick<\/h1>/);
      assert.match(html, /<span id="price-amount">\$14\.99<\/span>/);
      assert.match(html, /<p class="availability in-stock" id="product-availability">In stock<\/p>/);
      // The form: posts to /cart/add, a labelled variant select listing every variant (the sold-out one disabled and
      // marked), a labelled quantity, the selling plans after a one-time purchase, "Add to cart".
      const form = first(/(<form method="post" action="\/cart\/add"[\s\S]*?<\/form>)/, html)!;
      assert.ok(form, 'the add-to-cart form');
      assert.match(form, /<label for="variant-id">Variant<\/label>\n<select id="variant-id" name="id">/);
      const options = all(/<option value="(\d+)"[^>]*data-available/g, form);
      assert.equal(options.length, 6);
      const soldOut = variantIdOf('HYD-WATERMELON-30');
      assert.match(form, new RegExp(`<option value="${soldOut}"[^>]*data-available="false" disabled>Watermelon / 30 sticks – \\$39\\.99 – Sold out</option>`));
      assert.match(form, new RegExp(`<option value="${variantIdOf('HYD-LEMONLIME-10')}"[^>]* selected>`));
      assert.match(form, /<label for="quantity">Quantity<\/label>\n<input id="quantity" name="quantity" type="number" min="1" max="10" value="1"/);
      assert.match(form, /<input type="radio" name="selling_plan" value="" checked> <span>One-time purchase<\/span>/);
      assert.equal(all(/name="selling_plan" value="(\d+)"/g, form).length, 2);
      assert.match(form, /<button type="submit" class="add-to-cart" id="add-to-cart">Add to cart<\/button>/);
      // One select per option for the script, hidden without it.
      assert.match(form, /<div class="option-pickers" id="option-pickers" hidden>\n<label for="option-1">Flavour<\/label>/);
      assert.match(html, /<h2 id="description-heading">Description<\/h2>\n<div class="description"><p>An electrolyte drink mix/);
      const goesWith = first(/<h2 id="complementary-heading">Goes well with<\/h2>([\s\S]*?)<\/section>/, html)!;
      assert.deepEqual(cardHandles(goesWith), ['energy-drink-stick', 'sleep-capsules']);
      const alsoLike = first(/<h2 id="related-heading">You may also like<\/h2>([\s\S]*?)<\/section>/, html)!;
      assert.ok(cardHandles(alsoLike).length > 0 && !cardHandles(alsoLike).includes('hydration-drink-stick'));
    });

    it('the product page’s form adds to the cart as posted', async () => {
      const page = await get(app, '/products/decaf-capsules');
      const id = first(/<input type="hidden" name="id" id="variant-id" value="(\d+)"/, page.html);
      assert.equal(Number(id), variantIdOf('ESP-DEC-10'), 'a product with one variant posts it in a hidden field');
      const added = await app.inject({
        method: 'POST',
        url: '/cart/add',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `id=${id}&quantity=2`,
      });
      assert.ok(added.statusCode === 302 || added.statusCode === 303, `${added.statusCode} ${added.body}`);
      const cookie = String(added.headers['set-cookie']).split(';')[0]!;
      const cart = JSON.parse((await get(app, '/cart.js', { cookie })).html);
      assert.deepEqual(cart.items.map((item: any) => [item.variant_id, item.quantity]), [[Number(id), 2]]);
    });

    it('the product JSON-LD is a schema.org Product whose offers match the product (price, currency, availability, URL)', async () => {
      for (const handle of ['hydration-drink-stick', 'decaf-capsules', 'espresso-capsules']) {
        const page = await get(app, `/products/${handle}`);
        const data = jsonLd(page.html);
        const json = JSON.parse((await get(app, `/products/${handle}.js`)).html);
        assert.equal(data['@context'], 'https://schema.org');
        assert.equal(data['@type'], 'Product');
        assert.equal(data.name, json.title);
        assert.equal(data.url, `${BASE}/products/${handle}`);
        assert.deepEqual(data.image, json.images);
        assert.deepEqual(data.brand, { '@type': 'Brand', name: json.vendor });
        assert.ok(typeof data.description === 'string' && data.description.length > 10 && !data.description.includes('<'));
        assert.ok(typeof data.sku === 'string');
        assert.equal(data.offers.length, json.variants.length, handle);
        data.offers.forEach((offer: any, index: number) => {
          const variant = json.variants[index];
          assert.equal(offer['@type'], 'Offer');
          assert.match(offer.price, /^\d+\.\d{2}$/);
          assert.equal(Math.round(Number(offer.price) * 100), variant.price, `${handle}: ${variant.sku}`);
          assert.equal(offer.priceCurrency, 'USD');
          assert.equal(offer.availability, SCHEMA_AVAILABILITY[String(variant.available) as 'true' | 'false']);
          assert.equal(offer.sku, variant.sku);
          assert.ok(offer.url.startsWith(`${BASE}/products/${handle}`));
        });
      }
    });

    it('?variant= preselects a variant; a sold-out one is named as sold out and an available one chosen instead', async () => {
      const wanted = variantIdOf('HYD-MIXEDBERRY-30');
      const page = await get(app, `/products/hydration-drink-stick?variant=${wanted}`);
      assert.equal(page.status, 200);
      assert.match(page.html, new RegExp(`<option value="${wanted}"[^>]* selected>`));
      assert.match(page.html, /<span id="price-amount">\$39\.99<\/span>/);
      assert.match(page.html, /<span id="price-was-amount">\$44\.97<\/span>/);
      assert.equal(first(/<link rel="canonical" href="([^"]*)">/, page.html), `${BASE}/products/hydration-drink-stick`);

      const soldOut = await get(app, `/products/hydration-drink-stick?variant=${variantIdOf('HYD-WATERMELON-30')}`);
      assert.match(soldOut.html, /<p class="notice">Watermelon \/ 30 sticks is sold out\. Another is chosen below\.<\/p>/);
      assert.match(soldOut.html, /<button type="submit" class="add-to-cart" id="add-to-cart">Add to cart<\/button>/);
      for (const ignored of ['?variant=abc', '?variant=999999999', `?variant=${variantIdOf('ESP-DEC-10')}`, '?variant=1&variant=2', '?selling_plan=x']) {
        const other = await get(app, `/products/hydration-drink-stick${ignored}`);
        assert.equal(other.status, 200, ignored);
        assert.match(other.html, new RegExp(`<option value="${variantIdOf('HYD-LEMONLIME-10')}"[^>]* selected>`), ignored);
      }
      const planId = first(/name="selling_plan" value="(\d+)"/, page.html)!;
      const withPlan = await get(app, `/products/hydration-drink-stick?variant=${wanted}&selling_plan=${planId}`);
      assert.match(withPlan.html, new RegExp(`name="selling_plan" value="${planId}" checked>`));
    });

    it('every page type answers 304 to its ETag, and 200 with the same tag to another', async () => {
      for (const url of ['/', '/collections/all', '/collections/capsules', '/products/espresso-capsules', '/search?q=capsules', '/search', '/assets/storefront.js']) {
        const page = await get(app, url);
        const etag = String(page.headers.etag);
        assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/, url);
        const again = await get(app, url, { 'if-none-match': etag });
        assert.equal(again.status, 304, url);
        assert.equal(again.html, '', url);
        assert.equal(again.headers.etag, etag, url);
        const other = await get(app, url, { 'if-none-match': '"stale"' });
        assert.equal(other.status, 200, url);
        assert.equal(other.html, page.html, url);
        assert.equal(other.headers.etag, etag, url);
      }
    });

    it('the shop script: same-origin JavaScript, cacheable, no modules', async () => {
      const script = await get(app, '/assets/storefront.js');
      assert.equal(script.status, 200);
      assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.match(String(script.headers['cache-control']), /^public/);
      assert.match(script.html, /fetch\('\/cart\.js'/);
      assert.doesNotMatch(script.html, /^\s*(import|export)\s/m);
    });

    it('selling out a variant shows at once on its page, its cards and the pages showing it beside others, with new tags', async () => {
      const before = await get(app, '/products/decaf-capsules');
      const collectionBefore = await get(app, '/collections/capsules');
      const besideBefore = await get(app, '/products/espresso-capsules');
      assert.match(before.html, /<p class="availability in-stock" id="product-availability">In stock<\/p>/);
      const decafCard = (html: string) => first(/(<li class="card">(?:(?!<\/li>)[\s\S])*?href="\/products\/decaf-capsules"[\s\S]*?<\/li>)/, html) ?? '';
      assert.ok(decafCard(besideBefore.html), 'the espresso page shows decaf beside it');
      assert.doesNotMatch(decafCard(besideBefore.html), /Sold out/);

      await t.store.inventory.setOnHand(t.store.db, 'ESP-DEC-10', 0);
      try {
        const after = await get(app, '/products/decaf-capsules');
        assert.notEqual(after.headers.etag, before.headers.etag);
        assert.match(after.html, /<p class="availability sold-out" id="product-availability">Sold out<\/p>/);
        assert.match(after.html, /<button type="submit" class="add-to-cart" id="add-to-cart" disabled>Sold out<\/button>/);
        assert.equal(jsonLd(after.html).offers[0].availability, 'https://schema.org/OutOfStock');
        const stale = await get(app, '/products/decaf-capsules', { 'if-none-match': String(before.headers.etag) });
        assert.equal(stale.status, 200, 'the old tag no longer matches');

        const collectionAfter = await get(app, '/collections/capsules');
        assert.notEqual(collectionAfter.headers.etag, collectionBefore.headers.etag);
        assert.match(decafCard(collectionAfter.html), /<p class="badge sold-out">Sold out<\/p>/);
        const besideAfter = await get(app, '/products/espresso-capsules');
        assert.notEqual(besideAfter.headers.etag, besideBefore.headers.etag);
        assert.match(decafCard(besideAfter.html), /<p class="badge sold-out">Sold out<\/p>/);
      } finally {
        await t.store.inventory.setOnHand(t.store.db, 'ESP-DEC-10', 150);
      }
      const restocked = await get(app, '/products/decaf-capsules');
      assert.equal(restocked.headers.etag, before.headers.etag, 'the same page again, the same tag');
    });

    it('a variant sold past zero on backorder says so, in the page and its JSON-LD', async () => {
      await t.store.inventory.setOnHand(t.store.db, 'SLP-60', 0);
      try {
        const page = await get(app, `/products/sleep-capsules?variant=${variantIdOf('SLP-60')}`);
        assert.match(page.html, /id="product-availability">Available on backorder: ships when back in stock<\/p>/);
        assert.equal(jsonLd(page.html).offers[0].availability, 'https://schema.org/BackOrder');
      } finally {
        await t.store.inventory.setOnHand(t.store.db, 'SLP-60', 3);
      }
      const page = await get(app, `/products/sleep-capsules?variant=${variantIdOf('SLP-60')}`);
      assert.match(page.html, /id="product-availability">In stock<\/p>/);
    });

    it('search ranks as the suggest endpoint ranks, shows the query in the search box, and pages without a query show the form', async () => {
      for (const q of ['capsules', 'drink stick', 'espresso', 'lemon', 'caffeine', 'coffee capsule']) {
        const page = await get(app, `/search?q=${encodeURIComponent(q)}`);
        assertShopHead(page, q, { title: /^Search: .+ · Storefront$/, canonical: `/search?q=${encodeURIComponent(q)}` });
        const suggest = JSON.parse((await get(app, `/search/suggest.json?q=${encodeURIComponent(q)}&resources[limit]=10`)).html);
        const expected = suggest.resources.results.products.map((p: any) => p.handle);
        assert.ok(expected.length > 0, q);
        assert.deepEqual(cardHandles(page.html).slice(0, 10), expected, q);
        assert.match(page.html, new RegExp(`<input id="site-search-q" name="q" type="search" placeholder="Search" value="${q}"`));
      }
      const empty = await get(app, '/search');
      assertShopHead(empty, '/search', { title: /^Search · Storefront$/, canonical: '/search' });
      assert.match(empty.html, /<form class="search-form" method="get" action="\/search"/);
      assert.deepEqual(cardHandles(empty.html), []);
      assert.equal((await get(app, '/search?q=%20%20')).status, 200);
    });

    it('a search that finds nothing says so and suggests something: completions, popular products, every product', async () => {
      const page = await get(app, '/search?q=unicorn%20saddle');
      assert.equal(page.status, 200);
      assert.match(page.html, /<p class="notice" id="no-results" role="status">No products match “unicorn saddle”\.<\/p>/);
      assert.match(page.html, /<h2 id="popular-heading">Popular products<\/h2>/);
      assert.ok(cardHandles(page.html).length > 0, 'popular products are shown');
      assert.match(page.html, /<a href="\/collections\/all">Browse all products<\/a>/);
      const typo = await get(app, '/search?q=zzzz%20espr');
      assert.match(typo.html, /No products match/);
    });

    it('search bounds its query, and odd parameters never fail', async () => {
      const long = await get(app, `/search?q=${'capsule '.repeat(100)}`);
      assert.equal(long.status, 200);
      assert.ok((first(/value="([^"]*)"/, long.html.slice(long.html.indexOf('site-search-q'))) ?? '').length <= 200);
      for (const url of ['/search?q=a&q=b', '/search?q[x]=1', '/search?q=%3Cscript%3E', '/search?q=capsules&page=1']) {
        const page = await get(app, url);
        assert.equal(page.status, 200, url);
        assert.doesNotMatch(page.html, /<script>/, url);
      }
      for (const url of ['/search?q=capsules&page=2', '/search?q=capsules&page=x', '/search?page=2']) {
        const page = await get(app, url);
        assert.equal(page.status, 404, url);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8', url);
      }
    });

    it('a query cut at 200 characters in the middle of an emoji is searched without its half, never a 500', async () => {
      // The 200th and 201st UTF-16 units are the two halves of 😀: the cut keeps neither.
      for (const q of [`${'a'.repeat(199)}😀`, `${'a'.repeat(199)}😀tail`, '😀'.repeat(150)]) {
        const page = await get(app, `/search?q=${encodeURIComponent(q)}`);
        assert.equal(page.status, 200, `${q.slice(0, 20)}…: ${page.html.slice(0, 200)}`);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
        const canonical = first(/<link rel="canonical" href="([^"]*)">/, page.html)!;
        const searched = new URL(canonical).searchParams.get('q')!;
        assert.ok(searched.length <= 200 && q.startsWith(searched), 'the query as searched is a prefix of what was typed');
        assert.doesNotMatch(searched, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no half of a pair is left at the end');
      }
    });

    it('an unknown product or collection, or a page past the end, is the shop’s 404 page in HTML', async () => {
      for (const url of ['/products/no-such-thing', '/products/Bad_Handle', '/collections/no-such-thing', '/collections/all?page=2', '/collections/all?page=0', '/collections/all?page=abc', '/collections/all?page=1&page=2']) {
        const page = await get(app, url);
        assert.equal(page.status, 404, url);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8', url);
        assert.match(page.html, /<h1>Page not found<\/h1>/, url);
        assert.match(page.html, /<nav class="shop-nav" aria-label="Shop">/, url);
        assert.match(String(page.headers['content-security-policy']), /default-src 'none'/, url);
        assert.equal(page.headers.etag, undefined, url);
      }
      assert.equal((await get(app, '/collections/all?page=1')).status, 200);
    });

    it('the storefront JSON answers as before: product and list JSON, JSON errors, and no page where a file was asked for', async () => {
      const product = await get(app, '/products/hydration-drink-stick.js');
      assert.equal(product.status, 200);
      assert.equal(product.headers['content-type'], 'application/json; charset=utf-8');
      const snapshot = t.store.catalog.snapshot;
      assert.deepEqual(JSON.parse(product.html), productJson(snapshot.productByHandle('hydration-drink-stick')!, snapshot.baseUrl, t.store.inventory, t.store.config.cartMaxLineQuantity));
      const list = await get(app, '/collections/all/products.json');
      assert.equal(list.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(JSON.parse(list.html).products.length, 5);
      assert.equal(JSON.parse((await get(app, '/products.json')).html).products.length, 5);
      for (const url of ['/products/no-such-thing.js', '/collections/no-such-thing/products.json', '/products/hydration-drink-stick.json', '/collections/all.json']) {
        const answer = await get(app, url);
        assert.equal(answer.status, 404, url);
        assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8', url);
        assert.equal(JSON.parse(answer.html).status, 404, url);
      }
    });

    it('collections page by 24: "Page N of M" between "Previous page" and "Next page", each page its own canonical URL', async () => {
      await importCatalog(t.store.db, pagingCatalog(30));
      await t.store.catalog.refresh(t.store.db);
      await t.store.inventory.refresh(t.store.db);
      const one = await get(app, '/collections/all');
      assertShopHead(one, '/collections/all', { title: /^All products · Storefront$/, canonical: '/collections/all' });
      assert.equal(cardHandles(one.html).length, 24);
      const nav = first(/(<nav class="pagination" aria-label="Pagination">[\s\S]*?<\/nav>)/, one.html)!;
      assert.ok(nav, 'pagination');
      assert.doesNotMatch(nav, /Previous page/);
      assert.match(nav, /<span aria-current="page">Page 1 of 2<\/span>/);
      assert.match(nav, /<a href="\/collections\/all\?page=2" rel="next">Next page<\/a>/);
      assert.match(one.html, /Products 1–24 of 35/);

      const two = await get(app, '/collections/all?page=2');
      assertShopHead(two, '/collections/all?page=2', { title: /^All products \(page 2 of 2\) · Storefront$/, canonical: '/collections/all?page=2' });
      assert.equal(cardHandles(two.html).length, 11);
      assert.match(two.html, /<a href="\/collections\/all" rel="prev">Previous page<\/a>/);
      assert.match(two.html, /<span aria-current="page">Page 2 of 2<\/span>/);
      assert.doesNotMatch(two.html, /Next page/);
      assert.deepEqual(new Set([...cardHandles(one.html), ...cardHandles(two.html)]).size, 35, 'every product once');
      assert.equal((await get(app, '/collections/all?page=3')).status, 404);

      // Search pages the same way, in the suggest endpoint's order.
      const mugs = await get(app, '/search?q=paging%20mug');
      assert.equal(cardHandles(mugs.html).length, 24);
      assert.match(mugs.html, /<a href="\/search\?q=paging%20mug&amp;page=2" rel="next">Next page<\/a>/);
      const mugs2 = await get(app, '/search?q=paging%20mug&page=2');
      assert.equal(cardHandles(mugs2.html).length, 6);
    });

    it('nothing a catalog holds becomes markup: titles escaped, descriptions reduced to an allow-list, unsafe images left out', async () => {
      await importCatalog(t.store.db, hostileCatalog);
      await t.store.db.query(
        `insert into product_images (product_id, position, src, alt)
         select id, 1 + n, src, alt from products, (values (1, 'javascript:alert(5)', 'x" onerror="alert(6)'), (2, 'http://plain.example/mug.png', 'plain http')) as i(n, src, alt)
          where handle = 'hostile-mug'`,
      );
      await t.store.db.query('update catalog_version set version = version + 1');
      await t.store.catalog.refresh(t.store.db);
      await t.store.inventory.refresh(t.store.db);
      const page = await get(app, '/products/hostile-mug');
      assert.equal(page.status, 200);
      const body = page.html.slice(page.html.indexOf('<body>'));
      assert.match(page.html, /<title>&lt;script&gt;alert\(&quot;title&quot;\)&lt;\/script&gt; Mug &amp; &quot;Cup&quot; · Storefront<\/title>/);
      assert.match(body, /<h1>&lt;script&gt;alert\(&quot;title&quot;\)&lt;\/script&gt; Mug &amp; &quot;Cup&quot;<\/h1>/);
      assert.doesNotMatch(page.html, /<script>|alert\(\d\)|onerror|onclick|javascript:|<style>body|<iframe|<svg|evil\.example|<img[^>]+plain\.example/i);
      assert.match(body, /<p>Hello <b>bold<\/b><\/p>/);
      assert.match(body, /<a href="https:\/\/example\.com\/a\?b=1&amp;c=2" rel="nofollow noopener noreferrer">good link<\/a>/);
      assert.match(body, /<table><tr><td>cell<\/td><\/tr><\/table><\/div>\n<\/section>/, 'an unclosed table is closed inside the description');
      assert.match(body, /<img class="main-image" src="https:\/\/cdn\.example\.com\/mug\.png" alt="&lt;b&gt;alt&lt;\/b&gt;">/);
      assert.match(String(page.headers['content-security-policy']), /img-src 'self' data: https:\/\/cdn\.example\.com;/);
      // The JSON-LD block holds the title as data: no `<` can close the element.
      const block = first(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/, page.html)!;
      assert.doesNotMatch(block, /</);
      assert.equal(JSON.parse(block).name, HOSTILE_TITLE);
      // Its card elsewhere is escaped too.
      const search = await get(app, '/search?q=mug%20cup');
      assert.ok(cardHandles(search.html).includes('hostile-mug'));
      assert.doesNotMatch(search.html, /<script>alert/);
      assert.match(decode(search.html), /<script>alert\("title"\)<\/script> Mug & "Cup"/, 'shown as text');
    });
  });
}
