/**
 * Issue 35, finding 5 and build items 1 and 4: an import refuses a catalog URL that is not an https address on a
 * named host (or a path on this store), and catalog text holding control, bidirectional or invisible format
 * characters, in one line naming the product and the field; nothing of the file is imported, and the pages'
 * Content-Security-Policy stays as it was. JSON documents in memory, and JSON and Shopify CSV files as they stream,
 * on both backends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ImportError, type CatalogDocument, type ProductInput } from '../../src/catalog/import/catalog-document.js';
import { CatalogStream } from '../../src/catalog/import/catalog-stream.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-hostile-catalog-'));
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await dropTestDatabases();
});

let files = 0;
function writeFile(extension: string, text: string): string {
  const file = path.join(scratch, `catalog-${files++}.${extension}`);
  writeFileSync(file, text);
  return file;
}

/** Addresses no page may load an image from, and none of which may reach a policy. */
const HOSTILE_URLS = [
  'https://img.example;form-action/x.png',
  'https://a*b/x.png',
  'https://a,b.example/x.png',
  'javascript:alert(1)',
  'http://img.example/x.png',
  'https://user:pw@img.example/x.png',
  "https://img.example/x.png' ; script-src *",
  'https://img.example/x.png ; script-src *',
  '//img.example/x.png',
  'https://192.168.1.10/x.png',
  'https://[::1]/x.png',
  'data:image/png;base64,AAAA',
];

/** Text no catalog field may hold, each in a field of its own. */
const HOSTILE_TEXT: { field: string; set: (product: ProductInput) => void }[] = [
  { field: 'title', set: (p) => (p.title = 'Mug\u001b[2J') },
  { field: 'vendor', set: (p) => (p.vendor = 'Acme\u202eemcA') },
  { field: 'product_type', set: (p) => (p.product_type = 'Mug\u200b') },
  { field: 'tags.1', set: (p) => (p.tags = ['fine', 'bad\u2066tag']) },
  { field: 'options.0', set: (p) => (p.options = ['Colo\nur']) },
  { field: 'variants.0.options.0', set: (p) => (p.variants[0]!.options = ['Bl\u0085ack']) },
  { field: 'variants.0.title', set: (p) => (p.variants[0]!.title = 'Black\u0007') },
  { field: 'images.0.alt', set: (p) => (p.images = [{ src: '/assets/mug.png', alt: 'A mug\u2028' }]) },
  { field: 'description_html', set: (p) => (p.description_html = '<p>Fine\nlines, but\u001b]52;c;cm0gLXJmIH4K\u0007 not this</p>') },
];

const HANDLE = 'hostile-mug';

function product(overrides: Partial<ProductInput> = {}): ProductInput {
  return {
    handle: HANDLE,
    title: 'Hostile Mug',
    options: ['Colour'],
    variants: [{ sku: 'HOSTILE-MUG-BLK', options: ['Black'], price: 1200, inventory_quantity: 3 }],
    ...overrides,
  };
}

/** A harmless product first, so a refusal is seen to undo what came before it in the same file. */
const harmless: ProductInput = { handle: 'harmless-mug', title: 'Harmless Mug', variants: [{ sku: 'HARMLESS-MUG', price: 900 }] };

const documentWith = (hostile: ProductInput): CatalogDocument => ({ products: [harmless, hostile] });

/** A Shopify export with one product whose first row has `imageSrc` in its Image Src column. */
function csvWithImage(imageSrc: string): string {
  const cell = (text: string) => `"${text.replaceAll('"', '""')}"`;
  return [
    'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price,Image Src',
    'harmless-mug,Harmless Mug,Title,Default Title,HARMLESS-MUG,9.00,',
    `${HANDLE},Hostile Mug,Colour,Black,HOSTILE-MUG-BLK,12.00,${cell(imageSrc)}`,
  ].join('\n');
}

/** What `storefront import` prints for a refusal is this message after its prefix: one line, naming the product and the field. */
function assertRefusal(error: unknown, where: string | RegExp): true {
  assert.ok(error instanceof ImportError, String(error));
  assert.doesNotMatch(error.message, /[\n\r]/, 'one line');
  if (typeof where === 'string') assert.equal(error.where, where);
  else assert.match(error.where, where);
  return true;
}

for (const backend of backends) {
  describe(`an import refuses hostile catalog URLs and text (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const count = async () => (await t.store.db.query<{ count: number }>(`select count(*)::int as count from products where handle in ('harmless-mug', $1)`, [HANDLE]))[0]!.count;
    const pagePolicies = async () => {
      await t.store.catalog.refresh(t.store.db);
      const answers = await Promise.all(['/', '/cart', '/policies/refund-policy'].map((url) => t.app.inject({ method: 'GET', url })));
      return answers.map((answer) => answer.headers['content-security-policy']);
    };

    it('an image URL that is not https on a named host is refused, naming the product and the field; nothing is imported and the policy stays', async () => {
      const policies = await pagePolicies();
      for (const src of HOSTILE_URLS) {
        await assert.rejects(importCatalog(t.store.db, documentWith(product({ images: [{ src: '/assets/mug.png' }, { src }] }))), (error) =>
          assertRefusal(error, `products.1.images.1.src (product "${HANDLE}")`),
        );
      }
      assert.equal(await count(), 0);
      assert.deepEqual(await pagePolicies(), policies);
    });

    it('a JSON file as it streams is refused the same way', async () => {
      const file = writeFile('json', JSON.stringify(documentWith(product({ images: [{ src: HOSTILE_URLS[0]! }] }))));
      await assert.rejects(importCatalog(t.store.db, CatalogStream.ofFile(file)), (error) => assertRefusal(error, `products.1.images.0.src (product "${HANDLE}")`));
      assert.equal(await count(), 0);
    });

    it("a Shopify export's Image Src is refused naming its row, column and product", async () => {
      const policies = await pagePolicies();
      for (const src of HOSTILE_URLS) {
        const file = writeFile('csv', csvWithImage(src));
        await assert.rejects(importCatalog(t.store.db, CatalogStream.ofFile(file)), (error) =>
          assertRefusal(error, `row 3, column "Image Src" (product "${HANDLE}")`),
        );
      }
      assert.equal(await count(), 0);
      assert.deepEqual(await pagePolicies(), policies);
    });

    it('text with a control, bidirectional or invisible format character is refused in every catalog field that holds it', async () => {
      for (const { field, set } of HOSTILE_TEXT) {
        const hostile = product();
        set(hostile);
        await assert.rejects(importCatalog(t.store.db, documentWith(hostile)), (error) => assertRefusal(error, `products.1.${field} (product "${HANDLE}")`));
      }
      const collection = { handle: 'mugs', title: 'Mugs\u202e', products: ['harmless-mug'] };
      await assert.rejects(importCatalog(t.store.db, { products: [harmless], collections: [collection] }), (error) =>
        assertRefusal(error, 'collections.0.title (collection "mugs")'),
      );
      const csv = writeFile('csv', ['Handle,Title,Vendor,Variant SKU,Variant Price', `${HANDLE},Hostile Mug,"Acme\u001b[2J",HOSTILE-MUG-BLK,12.00`].join('\n'));
      await assert.rejects(importCatalog(t.store.db, CatalogStream.ofFile(csv)), (error) => assertRefusal(error, `row 2, column "Vendor" (product "${HANDLE}")`));
      assert.equal(await count(), 0);
    });

    it("an https image on a named host, a path on this store, and text in any script with its line breaks in the description import; the host joins the pages' img-src", async () => {
      const report = await importCatalog(
        t.store.db,
        documentWith(
          product({
            title: 'Tasse à café — كوب 👩‍💻',
            description_html: '<p>Two\nlines</p>',
            images: [{ src: 'https://CDN.example.com:8443/mug.png?v=1' }, { src: '/assets/mug.png' }],
          }),
        ),
      );
      assert.equal(report.products.created, 2);
      const [home] = await pagePolicies();
      assert.match(String(home), /; img-src 'self' data: https:\/\/cdn\.example\.com:8443; /);
    });
  });
}
