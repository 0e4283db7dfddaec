import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { searchCatalog } from '../../src/catalog/catalog-queries.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';
import { schemaErrors } from '../helpers/schemas.js';

after(dropTestDatabases);

/** Row counts of every table: "changes no state" means these stay equal. */
async function tableCounts(t: TestStore): Promise<Record<string, number>> {
  const tables = await t.store.db.query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
  );
  const counts: Record<string, number> = {};
  for (const { table_name } of tables) {
    const [row] = await t.store.db.query<{ n: number }>(`select count(*)::int as n from "${table_name}"`);
    counts[table_name] = row!.n;
  }
  const [version] = await t.store.db.query<{ version: number }>('select version from catalog_version');
  counts.catalog_version_value = version!.version;
  return counts;
}

const handles = (body: any, type = 'products') => body.resources.results[type].map((p: { handle: string }) => p.handle);

for (const backend of backends) {
  describe(`search and recommendations over HTTP (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('spec test rule: GET /search/suggest.json with no arguments answers 422 Invalid parameter error naming q, idempotently, changing nothing', async () => {
      const before = await tableCounts(t);
      for (let i = 0; i < 2; i++) {
        const { status, body } = await getJson(t.app, '/search/suggest.json');
        assert.equal(status, 422);
        assert.equal(body.status, 422);
        assert.equal(body.message, 'Invalid parameter error');
        assert.match(body.description, /\bq\b/);
        assert.deepEqual(schemaErrors('Error', body), []);
      }
      assert.deepEqual(await tableCounts(t), before);
    });

    it('spec test rule: GET /recommendations/products.json with no arguments answers 422 Missing parameter error naming product_id, idempotently, changing nothing', async () => {
      const before = await tableCounts(t);
      for (let i = 0; i < 2; i++) {
        const { status, body } = await getJson(t.app, '/recommendations/products.json');
        assert.equal(status, 422);
        assert.equal(body.status, 422);
        assert.equal(body.message, 'Missing parameter error');
        assert.match(body.description, /\bproduct_id\b/);
      }
      assert.deepEqual(await tableCounts(t), before);
    });

    for (const q of ['', '%20%20', '%09']) {
      it(`an empty or blank q ("${q}") answers 422 naming q`, async () => {
        const { status, body } = await getJson(t.app, `/search/suggest.json?q=${q}`);
        assert.equal(status, 422);
        assert.equal(body.message, 'Invalid parameter error');
        assert.match(body.description, /\bq\b/);
      });
    }

    it('a q repeated or too long answers 422 naming q', async () => {
      for (const url of ['/search/suggest.json?q=a&q=b', `/search/suggest.json?q=${'a'.repeat(201)}`]) {
        const { status, body } = await getJson(t.app, url);
        assert.equal(status, 422, url);
        assert.match(body.description, /\bq\b/);
      }
    });

    it('finds products in the Product shape, available first, at most resources[limit] (default 5)', async () => {
      const { status, body } = await getJson(t.app, '/search/suggest.json?q=capsules');
      assert.equal(status, 200);
      const products = body.resources.results.products;
      assert.ok(products.length >= 3 && products.length <= 5);
      for (const product of products) assert.deepEqual(schemaErrors('Product', product), []);
      assert.ok(handles(body).includes('espresso-capsules'));
      const limited = await getJson(t.app, '/search/suggest.json?q=capsules&resources[limit]=1');
      assert.equal(limited.body.resources.results.products.length, 1);
      assert.equal(Object.keys(body.resources.results).join(), 'products');
    });

    it('the last word matches as a prefix, a typo is tolerated, accents and case are folded', async () => {
      assert.ok(handles((await getJson(t.app, '/search/suggest.json?q=espresso%20capsu')).body).includes('espresso-capsules'));
      assert.ok(handles((await getJson(t.app, '/search/suggest.json?q=capsle')).body).length > 0);
      assert.deepEqual(
        handles((await getJson(t.app, '/search/suggest.json?q=HYDRATION')).body)[0],
        'hydration-drink-stick',
      );
      assert.ok(handles((await getJson(t.app, '/search/suggest.json?q=h%C3%BDdration')).body).includes('hydration-drink-stick'));
    });

    it('q=espresso: "Espresso Capsules" ranks above "Decaf Espresso Capsules", whose title only contains the word (#9, item 8)', async () => {
      for (const q of ['espresso', 'Espresso', 'espresso%20capsules', 'espresso%20caps', 'expresso']) {
        const { status, body } = await getJson(t.app, `/search/suggest.json?q=${q}`);
        assert.equal(status, 200);
        assert.deepEqual(handles(body), ['espresso-capsules', 'decaf-capsules'], q);
      }
      // The agent door ranks the same.
      const page = searchCatalog(t.store.catalog.snapshot, t.store.inventory, 'espresso', {}, 0, 10);
      assert.deepEqual(page.products.map((p) => p.handle), ['espresso-capsules', 'decaf-capsules']);
    });

    it('an unpublished product never appears in search', async () => {
      for (const q of ['cold%20brew', 'coming', 'CBR-10']) {
        const { body } = await getJson(t.app, `/search/suggest.json?q=${q}&resources[type]=product,query`);
        assert.ok(!handles(body).includes('cold-brew-capsules'), q);
        assert.ok(!JSON.stringify(body.resources.results.queries).toLowerCase().includes('cold brew'), q);
      }
    });

    it('resources[type] selects collections and query suggestions, raw or percent-encoded brackets', async () => {
      const raw = await getJson(t.app, '/search/suggest.json?q=caps&resources[type]=product,collection,query');
      const encoded = await getJson(t.app, '/search/suggest.json?q=caps&resources%5Btype%5D=product%2Ccollection%2Cquery');
      assert.equal(raw.status, 200);
      assert.deepEqual(raw.body, encoded.body);
      assert.deepEqual(Object.keys(raw.body.resources.results).sort(), ['collections', 'products', 'queries']);
      assert.deepEqual(handles(raw.body, 'collections'), ['capsules']);
      const queries = raw.body.resources.results.queries;
      assert.ok(queries.length > 0);
      for (const query of queries) {
        assert.ok(query.text.startsWith('caps'), query.text);
        assert.match(query.styled_text, /<mark>caps<\/mark>/);
      }
    });

    it('an unknown resources[type] or a resources[limit] outside 1–10 answers 422 naming it', async () => {
      for (const [query, name] of [
        ['resources[type]=product,page', 'resources\\[type\\]'],
        ['resources[type]=', 'resources\\[type\\]'],
        ['resources[limit]=0', 'resources\\[limit\\]'],
        ['resources[limit]=11', 'resources\\[limit\\]'],
        ['resources%5Blimit%5D=abc', 'resources\\[limit\\]'],
      ]) {
        const { status, body } = await getJson(t.app, `/search/suggest.json?q=caps&${query}`);
        assert.equal(status, 422, query);
        assert.equal(body.message, 'Invalid parameter error');
        assert.match(body.description, new RegExp(name!), query);
      }
    });

    it('recommendations: related never includes the product itself, respects limit, and are Products', async () => {
      const product = (await getJson(t.app, '/products/espresso-capsules.js')).body;
      const { status, body } = await getJson(t.app, `/recommendations/products.json?product_id=${product.id}&limit=3`);
      assert.equal(status, 200);
      assert.equal(body.intent, 'related');
      assert.ok(body.products.length > 0 && body.products.length <= 3);
      assert.ok(!body.products.some((p: { id: number }) => p.id === product.id));
      for (const p of body.products) assert.deepEqual(schemaErrors('Product', p), []);
      assert.equal(body.products[0].handle, 'decaf-capsules', 'the same type and collection ranks first');
      assert.ok(!body.products.some((p: { handle: string }) => p.handle === 'cold-brew-capsules'));
    });

    it('recommendations: complementary lists the merchant’s choices in order', async () => {
      const product = (await getJson(t.app, '/products/hydration-drink-stick.js')).body;
      const { body } = await getJson(t.app, `/recommendations/products.json?product_id=${product.id}&intent=complementary`);
      assert.equal(body.intent, 'complementary');
      assert.deepEqual(
        body.products.map((p: { handle: string }) => p.handle),
        ['energy-drink-stick', 'sleep-capsules'],
      );
    });

    it('recommendations: a bad product_id, limit or intent answers 422; an unknown or unpublished product 404', async () => {
      for (const [query, message, name] of [
        ['product_id=abc', 'Invalid parameter error', 'product_id'],
        ['product_id=1.5', 'Invalid parameter error', 'product_id'],
        ['product_id=7100000001&limit=11', 'Invalid parameter error', 'limit'],
        ['product_id=7100000001&intent=upsell', 'Invalid parameter error', 'intent'],
      ]) {
        const { status, body } = await getJson(t.app, `/recommendations/products.json?${query}`);
        assert.equal(status, 422, query);
        assert.equal(body.message, message);
        assert.match(body.description, new RegExp(`\\b${name}\\b`));
      }
      assert.equal((await getJson(t.app, '/recommendations/products.json?product_id=999999')).status, 404);
      const [coldBrew] = await t.store.db.query<{ id: number }>("select id from products where handle = 'cold-brew-capsules'");
      assert.equal((await getJson(t.app, `/recommendations/products.json?product_id=${coldBrew!.id}`)).status, 404);
    });

    it('search and recommendations follow catalog changes (import, stock) without a restart', async () => {
      assert.deepEqual(handles((await getJson(t.app, '/search/suggest.json?q=matcha')).body), []);
      await importCatalog(t.store.db, {
        products: [
          { handle: 'matcha-drink-stick', title: 'Matcha Drink Stick', product_type: 'Drink Stick', variants: [{ sku: 'MAT-1', price: 1599, inventory_quantity: 9 }] },
        ],
      });
      await t.store.catalog.refresh(t.store.db);
      await t.store.inventory.refresh(t.store.db);
      assert.deepEqual(handles((await getJson(t.app, '/search/suggest.json?q=matcha')).body), ['matcha-drink-stick']);

      // Selling out every variant of the energy stick moves it after available matches, without a catalog reload.
      const snapshot = t.store.catalog.snapshot;
      for (const sku of ['NRG-CITRUS-12', 'NRG-CHERRYCOLA-12']) await t.store.inventory.setOnHand(t.store.db, sku, 0);
      assert.equal(t.store.catalog.snapshot, snapshot);
      const sticks = handles((await getJson(t.app, '/search/suggest.json?q=drink%20stick&resources[limit]=10')).body);
      assert.equal(sticks.at(-1), 'energy-drink-stick');
      assert.ok(sticks.includes('matcha-drink-stick'));
    });
  });
}
