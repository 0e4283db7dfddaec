/**
 * Issue 38, build item 4: the merchant edits a product (title, description, published, images by URL, and per variant
 * price, compare-at price, SKU and units on hand) in one transaction with an audit entry. A field holds what an import
 * may write there (the import's own checks); a refusal changes nothing; stock never goes below zero, and a level a sale
 * moved since the form was read is not overwritten. The change is live at once on this instance's shop JSON, and on
 * another instance of the same PostgreSQL database within a second (NOTIFY). Both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { auditOfProduct, TERMINAL_ACTOR, type Actor } from '../../src/audit/audit-log.js';
import { editableProduct, editProduct, ProductEditRefused, type EditableProduct, type ProductEdit } from '../../src/catalog/catalog-edit.js';
import type { CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { backends, dropTestDatabases, getJson, startSecondInstance, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const OWNER: Actor = { staffId: null, label: 'owner@shop.test' };

const mugs: CatalogDocument = {
  products: [
    {
      handle: 'edit-mug',
      title: 'Edit Mug',
      description_html: '<p>A mug.</p>',
      options: ['Size'],
      images: [{ src: '/assets/demo/mug-front.svg', alt: 'Front' }, { src: 'https://img.example/mug-back.png', alt: 'Back' }],
      variants: [
        { sku: 'EDIT-MUG-S', options: ['Small'], price: 1200, inventory_quantity: 5 },
        { sku: 'EDIT-MUG-L', options: ['Large'], price: 1500, compare_at_price: 1800, inventory_quantity: 2 },
      ],
    },
    { handle: 'other-mug', title: 'Other Mug', variants: [{ sku: 'OTHER-MUG', price: 900, inventory_quantity: 1 }] },
  ],
};

for (const backend of backends) {
  describe(`catalog edit (${backend.name})`, () => {
    let t: TestStore;
    let productId: number;
    before(async () => {
      t = await startTestStore(backend);
      await importCatalog(t.store.db, mugs);
      const [row] = await t.store.db.query<{ id: number }>("select id from products where handle = 'edit-mug'");
      productId = row!.id;
    });
    after(() => t.close());

    const read = async (): Promise<EditableProduct> => (await editableProduct(t.store.db, productId))!;
    const variant = async (sku: string) => (await read()).variants.find((v) => v.sku === sku)!;
    const edit = (change: ProductEdit, options: Parameters<typeof editProduct>[5] = {}, actor: Actor = OWNER) =>
      editProduct(t.store.db, t.store, actor, productId, change, options);
    const shopJson = async () => (await getJson(t.app, '/products/edit-mug.js')).body as { title: string; variants: { sku: string; price: number; compare_at_price: number | null }[] } | undefined;
    const auditCount = async () => (await auditOfProduct(t.store.db, String(productId))).length;

    /** Asserts `change` is refused with `code` at `field`, and that nothing of the product, its stock or the audit log moved. */
    async function refused(change: ProductEdit, code: ProductEditRefused['code'], field: string | undefined, options: Parameters<typeof editProduct>[5] = {}) {
      const before = await read();
      const audits = await auditCount();
      const version = t.store.catalog.snapshot.version;
      await assert.rejects(edit(change, options), (error: unknown) => {
        assert.ok(error instanceof ProductEditRefused, String(error));
        assert.equal(error.code, code, error.message);
        assert.equal(error.field, field, error.message);
        return true;
      });
      const { updatedAt: _a, ...was } = before;
      const { updatedAt: _b, ...now } = await read();
      assert.deepEqual(now, was);
      assert.equal(await auditCount(), audits);
      await t.store.catalog.refresh(t.store.db);
      assert.equal(t.store.catalog.snapshot.version, version, 'a refusal does not move the catalog version');
    }

    it('the title and the description change, are live at once on the shop JSON, and are audited as product.update', async () => {
      const result = await edit({ title: 'Edited Mug', descriptionHtml: '<p>A <strong>better</strong> mug.</p>\n<p>Two lines.</p>' });
      assert.deepEqual(result.changes.map((c) => c.field), ['title', 'description_html']);
      assert.equal((await shopJson())?.title, 'Edited Mug');
      assert.equal(t.store.catalog.snapshot.productByHandle('edit-mug')?.descriptionHtml, '<p>A <strong>better</strong> mug.</p>\n<p>Two lines.</p>');
      const [entry] = (await auditOfProduct(t.store.db, String(productId))).slice(-1);
      assert.equal(entry?.action, 'product.update');
      assert.equal(entry?.actor, 'owner@shop.test');
      assert.match(entry!.summary, /title "Edit Mug" → "Edited Mug"; description changed/);
    });

    it('a price and a compare-at price change; the shop JSON shows them at once', async () => {
      const large = await variant('EDIT-MUG-L');
      await edit({ variants: [{ variantId: large.id, priceCents: 1600, compareAtCents: 2000 }] });
      const json = await shopJson();
      const shown = json?.variants.find((v) => v.sku === 'EDIT-MUG-L');
      assert.equal(shown?.price, 1600);
      assert.equal(shown?.compare_at_price, 2000);
      const [entry] = (await auditOfProduct(t.store.db, String(productId))).slice(-1);
      assert.match(entry!.summary, /price of EDIT-MUG-L \$15\.00 → \$16\.00; compare at price of EDIT-MUG-L \$18\.00 → \$20\.00/);
      await edit({ variants: [{ variantId: large.id, compareAtCents: null }] });
      assert.equal((await variant('EDIT-MUG-L')).compareAtCents, null);
    });

    it('a SKU changes (two variants may swap theirs); one used by another product, or twice in the form, is refused', async () => {
      const small = await variant('EDIT-MUG-S');
      const large = await variant('EDIT-MUG-L');
      await edit({ variants: [{ variantId: small.id, sku: 'EDIT-MUG-L' }, { variantId: large.id, sku: 'EDIT-MUG-S' }] });
      assert.equal((await read()).variants.find((v) => v.id === small.id)?.sku, 'EDIT-MUG-L');
      await edit({ variants: [{ variantId: small.id, sku: 'EDIT-MUG-S' }, { variantId: large.id, sku: 'EDIT-MUG-L' }] });
      await refused({ variants: [{ variantId: small.id, sku: 'OTHER-MUG' }] }, 'sku_taken', `variants.${small.id}.sku`);
      await refused({ variants: [{ variantId: small.id, sku: 'EDIT-MUG-L' }] }, 'sku_taken', `variants.${small.id}.sku`);
      await refused({ variants: [{ variantId: small.id, sku: 'BAD\u202eSKU' }] }, 'invalid', `variants.${small.id}.sku`);
    });

    it('published off hides the product from the shop at once, on again shows it', async () => {
      await edit({ published: false });
      assert.equal((await getJson(t.app, '/products/edit-mug.js')).status, 404);
      assert.equal((await read()).published, false);
      await edit({ published: true });
      assert.equal((await getJson(t.app, '/products/edit-mug.js')).status, 200);
    });

    it('images by URL: one removed, one added, the alt text changed; the shop shows the new list at once', async () => {
      const result = await edit({ images: [{ src: 'https://img.example/mug-back.png', alt: 'Back of the mug' }, { src: 'https://cdn.example/mug-side.png', alt: null }] });
      assert.deepEqual(
        result.changes.map((c) => [c.field, c.from, c.to]),
        [
          ['image.alt', 'Back', 'Back of the mug'],
          ['image', null, 'https://cdn.example/mug-side.png'],
          ['image', '/assets/demo/mug-front.svg', null],
        ],
      );
      const images = (await getJson(t.app, '/products/edit-mug.js')).body.images as string[];
      assert.equal(images.length, 2);
      assert.match(images[0]!, /mug-back\.png$/);
      assert.match(images[1]!, /mug-side\.png$/);
    });

    it('an image address the import refuses is refused by the same rule, naming the image, and nothing changes', async () => {
      for (const src of ['http://img.example/x.png', 'javascript:alert(1)', 'https://192.168.1.10/x.png', 'https://img.example;form-action/x.png', '//img.example/x.png']) {
        await refused({ images: [{ src: '/assets/demo/ok.svg' }, { src }] }, 'invalid', 'images.1.src');
      }
      await refused({ images: [{ src: '/assets/demo/ok.svg', alt: 'bad\u2028alt' }] }, 'invalid', 'images.0.alt');
    });

    it('text the import refuses is refused by the same rule: a control character in the title, a bidi override in the description, an empty title', async () => {
      await refused({ title: 'Mug\u001b[2J' }, 'invalid', 'title');
      await refused({ title: '' }, 'invalid', 'title');
      await refused({ title: 'x'.repeat(256) }, 'invalid', 'title');
      await refused({ descriptionHtml: '<p>fine\u202e</p>' }, 'invalid', 'description_html');
    });

    it('a compare-at price not above the price is refused, and a price above the compare-at too; a negative or huge price', async () => {
      const large = await variant('EDIT-MUG-L');
      await edit({ variants: [{ variantId: large.id, compareAtCents: 2000 }] });
      await refused({ variants: [{ variantId: large.id, compareAtCents: 1600 }] }, 'invalid', `variants.${large.id}.compare_at_price`);
      await refused({ variants: [{ variantId: large.id, priceCents: 2500 }] }, 'invalid', `variants.${large.id}.compare_at_price`);
      await refused({ variants: [{ variantId: large.id, priceCents: -1 }] }, 'invalid', `variants.${large.id}.price`);
      await refused({ variants: [{ variantId: large.id, priceCents: 100_000_001 }] }, 'invalid', `variants.${large.id}.price`);
      await refused({ variants: [{ variantId: large.id, priceCents: 12.5 }] }, 'invalid', `variants.${large.id}.price`);
    });

    it('stock on hand is set through the inventory, audited as stock.set, and shown at once; never below zero', async () => {
      const small = await variant('EDIT-MUG-S');
      const result = await edit({ variants: [{ variantId: small.id, onHand: 9, onHandWas: small.onHand }] });
      assert.deepEqual(result.changes.map((c) => [c.part, c.field, c.from, c.to]), [['stock', 'on_hand', small.onHand, 9]]);
      assert.equal(t.store.inventory.onHand(small.id), 9);
      assert.equal((await variant('EDIT-MUG-S')).onHand, 9);
      const [entry] = (await auditOfProduct(t.store.db, String(productId))).slice(-1);
      assert.equal(entry?.action, 'stock.set');
      assert.match(entry!.summary, /units on hand of EDIT-MUG-S \d+ → 9/);
      await refused({ variants: [{ variantId: small.id, onHand: -1 }] }, 'invalid', `variants.${small.id}.on_hand`);
      await refused({ variants: [{ variantId: small.id, onHand: 1.5 }] }, 'invalid', `variants.${small.id}.on_hand`);
      await edit({ variants: [{ variantId: small.id, onHand: 0, onHandWas: 9 }] });
      assert.equal(t.store.inventory.onHand(small.id), 0);
    });

    it('a level a sale moved since the form was read is not overwritten: refused, and the title edited with it is not changed either', async () => {
      const small = await variant('EDIT-MUG-S');
      await t.store.inventory.setOnHand(t.store.db, 'EDIT-MUG-S', 4);
      await refused({ title: 'Not this', variants: [{ variantId: small.id, onHand: 10, onHandWas: small.onHand }] }, 'stock_changed', `variants.${small.id}.on_hand`);
      assert.equal(t.store.inventory.onHand(small.id), 4);
    });

    it('a person whose role allows stock alone may set stock, and is refused a price (nothing changes)', async () => {
      const small = await variant('EDIT-MUG-S');
      const stockOnly = new Set(['stock'] as const);
      await edit({ variants: [{ variantId: small.id, onHand: 6, onHandWas: small.onHand }] }, { may: stockOnly });
      assert.equal((await variant('EDIT-MUG-S')).onHand, 6);
      await refused({ variants: [{ variantId: small.id, priceCents: 1 }] }, 'not_allowed', `variants.${small.id}.price`, { may: stockOnly });
      await refused({ title: 'Sneaky', variants: [{ variantId: small.id, onHand: 7, onHandWas: 6 }] }, 'not_allowed', 'title', { may: stockOnly });
    });

    it('an edit that changes nothing writes nothing (no audit entry, no new catalog version)', async () => {
      const product = await read();
      const audits = await auditCount();
      const result = await edit({ title: product.title, variants: [{ variantId: product.variants[0]!.id, priceCents: product.variants[0]!.priceCents }] });
      assert.deepEqual(result.changes, []);
      assert.equal(await auditCount(), audits);
    });

    it('an unknown product or a variant of another product is refused', async () => {
      await assert.rejects(editProduct(t.store.db, t.store, TERMINAL_ACTOR, 1, { title: 'x' }), (e: unknown) => e instanceof ProductEditRefused && e.code === 'not_found');
      const [other] = await t.store.db.query<{ id: number }>("select id from variants where sku = 'OTHER-MUG'");
      await refused({ variants: [{ variantId: other!.id, priceCents: 1 }] }, 'not_found', `variants.${other!.id}`);
    });

    if (backend.name === 'postgres') {
      it('another instance of the same database shows a price edit within a second (NOTIFY, not the 30 s poll)', async () => {
        const second = await startSecondInstance(backend, t);
        try {
          const small = await variant('EDIT-MUG-S');
          const price = small.priceCents + 100;
          const started = Date.now();
          await edit({ variants: [{ variantId: small.id, priceCents: price }] });
          for (;;) {
            const shown = (await getJson(second.app, '/products/edit-mug.js')).body?.variants?.find((v: { sku: string }) => v.sku === 'EDIT-MUG-S')?.price;
            if (shown === price) break;
            assert.ok(Date.now() - started < 1000, 'the second instance did not show the new price within a second');
            await sleep(20);
          }
        } finally {
          await second.close();
        }
      });
    }
  });
}
