/**
 * The admin's catalog in a real headless Chromium (Debian's, through playwright-core), on both backends, signed in (the
 * session's cookie set in the browser's context), against the store listening on loopback (BASE_URL
 * http://localhost:PORT, so the forms' Origin is the store's). Issue 38's "Done when": a price edited on the admin's
 * product page is seen at once on /products/{handle}.js, the product page and MCP get_product; a refusal is shown
 * beside its field with nothing changed; staff change units on hand only. An import's preview lists a removed image
 * before anything is applied; Apply removes it; an apply onto a catalog changed since the preview is refused until the
 * file is previewed again. The edit runs with JavaScript off (plain forms). axe-core finds no serious or critical
 * violation on the catalog and import pages at 390 and 1280 px. One browser for the file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { auditOfProduct, TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import { editProduct } from '../../src/catalog/catalog-edit.js';
import { CatalogStream } from '../../src/catalog/import/catalog-stream.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { loadConfig } from '../../src/config.js';
import { ADMIN_SESSION_COOKIE, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { freePort, launchChromium, seriousViolations } from '../helpers/browser.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { callTool } from '../ucp/mcp-harness.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-catalog-browser-'));
let browser: Browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  rmSync(scratch, { recursive: true, force: true });
  await dropTestDatabases();
});

const FRONT = 'https://img.example/tea-front.png';
const BACK = 'https://img.example/tea-back.png';

let files = 0;
/** A Shopify export of one tea in two sizes; `withBack` lists its second image. */
function teaCsv(handle: string, options: { withBack: boolean; smallPrice: string }): string {
  const file = path.join(scratch, `${handle}-${files++}.csv`);
  writeFileSync(
    file,
    [
      'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price,Variant Inventory Qty,Image Src,Image Position,Image Alt Text',
      `${handle},Preview Tea,Size,Small,${handle}-S,${options.smallPrice},10,${FRONT},1,Front`,
      `${handle},,,Large,${handle}-L,9.00,10,${options.withBack ? `${BACK},2,Back` : ',,'}`,
    ].join('\n'),
  );
  return file;
}

for (const backend of backends) {
  describe(`the admin's catalog in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let base: string;
    let owner: StaffSessionForTest;
    let staff: StaffSessionForTest;

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off', APPROVAL_PROOF: 'link', MCP_ALLOWED_HOSTS: 'localhost' });
      t = await startTestStore(backend, { config });
      await t.app.listen({ host: '127.0.0.1', port });
      owner = await startStaffSession(t.store, { email: 'owner@store.test', role: 'owner' });
      staff = await startStaffSession(t.store, { email: 'staff@store.test', role: 'staff' });
    });
    after(async () => {
      await t?.close();
    });

    async function signedIn(session: StaffSessionForTest, javaScriptEnabled: boolean): Promise<BrowserContext> {
      const context = await browser.newContext({ javaScriptEnabled });
      // A __Host- cookie is set by host and path (Chromium refuses one given by URL on http://localhost).
      await context.addCookies([{ name: ADMIN_SESSION_COOKIE, value: session.secret, domain: 'localhost', path: '/', secure: true, httpOnly: true, sameSite: 'Strict' }]);
      return context;
    }

    /** Submits a form by its button and waits for the page it answers with; the answer's status. */
    async function submit(page: Page, button: string): Promise<number> {
      const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button, exact: true }).click()]);
      return response!.status();
    }

    const sleepCapsules = () => {
      const product = t.store.catalog.snapshot.productByHandle('sleep-capsules')!;
      return { product, variant: product.variants.find((v) => v.sku === 'SLP-120')! };
    };
    const shopJson = async (handle: string) => (await (await fetch(`${base}/products/${handle}.js`)).json()) as { images: string[]; variants: { sku: string; price: number; compare_at_price: number | null }[] };
    const mcpProduct = async (handle: string) => {
      const answer = await callTool(`${base}/api/ucp/mcp`, 'get_product', { catalog: { id: handle } });
      assert.ok(answer.body?.result?.structuredContent, answer.text);
      return answer.body.result.structuredContent.product as { variants: { sku?: string; price: { amount: number } }[] };
    };

    it('a price edited on the product page (JavaScript off) is seen at once on the shop JSON, the product page and MCP get_product', async () => {
      const context = await signedIn(owner, false);
      try {
        const page = await context.newPage();
        const { product, variant } = sleepCapsules();
        await page.goto(`${base}/admin/products`);
        await page.getByRole('link', { name: product.title, exact: true }).click();
        assert.equal(new URL(page.url()).pathname, `/admin/products/${product.id}`);
        assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), product.title);
        assert.equal(await page.locator(`#price_${variant.id}`).inputValue(), '42.00');

        await page.locator(`#price_${variant.id}`).fill('43.50');
        assert.equal(await submit(page, 'Save changes'), 200);
        assert.equal(new URL(page.url()).search, '?done=saved');
        assert.match((await page.getByRole('status').first().textContent()) ?? '', /Saved: the change is live/);
        // At once: no wait, no poll.
        assert.equal((await shopJson('sleep-capsules')).variants.find((v) => v.sku === 'SLP-120')?.price, 4350);
        assert.match(await (await fetch(`${base}/products/sleep-capsules`)).text(), /\$43\.50/);
        assert.equal((await mcpProduct('sleep-capsules')).variants.find((v) => v.sku === 'SLP-120')?.price.amount, 4350);
        assert.match(await page.locator('ol.timeline').textContent() ?? '', /price of SLP-120 \$42\.00 → \$43\.50/);

        // A compare-at price below the price: refused beside its field, the typed value kept, nothing changed.
        await page.locator(`#compare_${variant.id}`).fill('40.00');
        await page.locator(`#price_${variant.id}`).fill('41.00');
        assert.equal(await submit(page, 'Save changes'), 400);
        assert.match((await page.locator(`#error-compare_${variant.id}`).textContent()) ?? '', /compare-at price of SLP-120 \(\$40\.00\) must be above the price \(\$41\.00\)/);
        assert.equal(await page.locator(`#compare_${variant.id}`).getAttribute('aria-invalid'), 'true');
        assert.equal(await page.locator(`#compare_${variant.id}`).inputValue(), '40.00');
        assert.match((await page.getByRole('alert').first().textContent()) ?? '', /Not saved, nothing was changed/);
        const json = (await shopJson('sleep-capsules')).variants.find((v) => v.sku === 'SLP-120');
        assert.deepEqual([json?.price, json?.compare_at_price], [4350, 4800]);

        // An image address the import would refuse: refused beside its field.
        await page.goto(`${base}/admin/products/${product.id}`);
        await page.locator('#image_src_1').fill('http://img.example/x.png');
        assert.equal(await submit(page, 'Save changes'), 400);
        assert.match((await page.locator('#error-image_src_1').textContent()) ?? '', /must be an https:\/\/ address/);
        assert.equal((await shopJson('sleep-capsules')).images.length, 1);
      } finally {
        await context.close();
      }
    });

    it('staff see the catalog fields and change units on hand only: their stock edit is saved, the price field is not theirs', async () => {
      const context = await signedIn(staff, false);
      try {
        const page = await context.newPage();
        const { product, variant } = sleepCapsules();
        await page.goto(`${base}/admin/products/${product.id}`);
        assert.equal(await page.locator(`#price_${variant.id}`).isDisabled(), true);
        await page.locator(`#stock_${variant.id}`).fill('7');
        assert.equal(await submit(page, 'Save changes'), 200);
        assert.equal(t.store.inventory.onHand(variant.id), 7);
        const [entry] = (await auditOfProduct(t.store.db, String(product.id))).slice(-1);
        assert.deepEqual([entry?.action, entry?.actor], ['stock.set', 'staff@store.test']);
        // An owner's form resent from the staff session: 403, nothing changed.
        const response = await page.request.post(`${base}/admin/products/${product.id}`, {
          headers: { origin: base },
          form: { _csrf: staff.csrf, catalog: '1', title: 'Taken over', [`price_${variant.id}`]: '1.00', [`stock_${variant.id}`]: '7', [`stock_was_${variant.id}`]: '7' },
        });
        assert.equal(response.status(), 403);
        assert.equal(t.store.catalog.snapshot.productByHandle('sleep-capsules')?.title, product.title);
      } finally {
        await context.close();
      }
    });

    it("an import's preview lists the removed image before anything is applied; Apply removes it", async () => {
      await importCatalog(t.store.db, CatalogStream.ofFile(teaCsv('preview-tea', { withBack: true, smallPrice: '4.50' })));
      await t.store.catalog.refresh(t.store.db);
      const context = await signedIn(owner, true);
      try {
        const page = await context.newPage();
        await page.goto(`${base}/admin/import`);
        await page.locator('#catalog-file').setInputFiles(teaCsv('preview-tea', { withBack: false, smallPrice: '5.00' }));
        assert.equal(await submit(page, 'Preview the changes'), 200);
        assert.match(new URL(page.url()).pathname, /^\/admin\/import\/[A-Za-z0-9_-]{22}$/);
        const preview = (await page.locator('main').textContent()) ?? '';
        assert.match(preview, /Nothing has been changed yet/);
        assert.match(preview, /Image removed:\s*https:\/\/img\.example\/tea-back\.png/);
        assert.match(preview, /preview-tea-S: price: \$4\.50 → \$5\.00/);
        // Nothing applied: the shop still shows both images and the old price.
        let json = await shopJson('preview-tea');
        assert.equal(json.images.length, 2);
        assert.equal(json.variants.find((v) => v.sku === 'preview-tea-S')?.price, 450);

        assert.equal(await submit(page, 'Apply this import'), 200);
        assert.match(new URL(page.url()).search, /done=applied/);
        assert.match((await page.locator('main').textContent()) ?? '', /Imported: .*preview-tea.*Image removed:\s*https:\/\/img\.example\/tea-back\.png/s);
        json = await shopJson('preview-tea');
        assert.deepEqual(json.images.map((src) => src.replace(/^https?:/, '')), ['//img.example/tea-front.png']);
        assert.equal(json.variants.find((v) => v.sku === 'preview-tea-S')?.price, 500);
        const audit = await t.store.db.query<{ action: string; actor: string }>("select action, actor from audit_log where action = 'catalog.import'");
        assert.deepEqual(audit, [{ action: 'catalog.import', actor: 'owner@store.test' }]);
      } finally {
        await context.close();
      }
    });

    it('an apply onto a catalog changed since its preview is refused, nothing changed, until the file is previewed again', async () => {
      const context = await signedIn(owner, false);
      try {
        const page = await context.newPage();
        await page.goto(`${base}/admin/import`);
        await page.locator('#catalog-file').setInputFiles(teaCsv('preview-tea', { withBack: true, smallPrice: '5.50' }));
        assert.equal(await submit(page, 'Preview the changes'), 200);
        assert.match((await page.locator('main').textContent()) ?? '', /Image added:\s*https:\/\/img\.example\/tea-back\.png/);
        const tea = t.store.catalog.snapshot.productByHandle('preview-tea')!;
        await editProduct(t.store.db, t.store, TERMINAL_ACTOR, tea.id, { title: 'Preview Tea, edited' });
        assert.equal(await submit(page, 'Apply this import'), 409);
        assert.match((await page.getByRole('alert').textContent()) ?? '', /the catalog changed since this preview/);
        assert.equal((await shopJson('preview-tea')).images.length, 1, 'nothing was applied');
        assert.equal(await submit(page, 'Preview again'), 200);
        assert.match((await page.locator('main').textContent()) ?? '', /title: "Preview Tea, edited" → "Preview Tea"/);
        assert.equal(await submit(page, 'Apply this import'), 200);
        assert.equal((await shopJson('preview-tea')).images.length, 2);
      } finally {
        await context.close();
      }
    });

    it('over plain HTTP: no session, no CSRF token, another origin or a staff member uploading are refused and change nothing; a long description fits', async () => {
      const { product, variant } = sleepCapsules();
      const edit = (session: StaffSessionForTest | undefined, fields: Record<string, string>, origin = base) =>
        fetch(`${base}/admin/products/${product.id}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...(session ? { cookie: session.cookie } : {}) },
          body: new URLSearchParams(fields).toString(),
        });
      const before = await shopJson('sleep-capsules');
      const price = { [`price_${variant.id}`]: '1.00', [`stock_${variant.id}`]: '7', [`stock_was_${variant.id}`]: '7' };
      assert.equal((await edit(undefined, { _csrf: owner.csrf, ...price })).status, 401);
      assert.equal((await edit(owner, price)).status, 403);
      assert.equal((await edit(owner, { _csrf: owner.csrf, ...price }, 'https://evil.example')).status, 403);
      assert.deepEqual(await shopJson('sleep-capsules'), before);

      const upload = (session: StaffSessionForTest) => {
        const form = new FormData();
        form.append('_csrf', session.csrf);
        form.append('file', new Blob(['Handle,Title,Variant SKU,Variant Price\nsneaky,Sneaky,SNEAKY,1.00\n'], { type: 'text/csv' }), 'sneaky.csv');
        return fetch(`${base}/admin/import`, { method: 'POST', redirect: 'manual', headers: { origin: base, cookie: session.cookie }, body: form });
      };
      const drafts = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from import_drafts'))[0]!.n;
      const draftsBefore = await drafts();
      assert.equal((await upload(staff)).status, 403);
      assert.equal(await drafts(), draftsBefore, 'nothing kept of a refused upload');
      assert.equal((await fetch(`${base}/admin/import`, { headers: { cookie: staff.cookie } })).status, 403);
      const answer = await upload(owner);
      assert.equal(answer.status, 303);
      assert.match(answer.headers.get('location') ?? '', /^\/admin\/import\/[A-Za-z0-9_-]{22}$/);
      assert.equal(await drafts(), draftsBefore + 1);
      assert.equal((await fetch(`${base}/products/sneaky.js`)).status, 404, 'the preview imported nothing');

      const description = `<p>${'A long description. '.repeat(4500)}</p>`;
      const long = await edit(owner, { _csrf: owner.csrf, catalog: '1', title: product.title, description, published: 'yes', image_src_0: product.images[0]!.src, image_alt_0: product.images[0]!.alt ?? '' });
      assert.equal(long.status, 303);
      assert.equal(t.store.catalog.snapshot.productByHandle('sleep-capsules')?.descriptionHtml, description);
    });

    it('the catalog and import pages have no serious or critical axe violation at 390 and 1280 px', async () => {
      const context = await signedIn(owner, true);
      try {
        const page = await context.newPage();
        const { product } = sleepCapsules();
        await page.goto(`${base}/admin/import`);
        await page.locator('#catalog-file').setInputFiles(teaCsv('axe-tea', { withBack: false, smallPrice: '3.00' }));
        await submit(page, 'Preview the changes');
        const previewPath = new URL(page.url()).pathname;
        for (const width of [390, 1280]) {
          await page.setViewportSize({ width, height: 900 });
          for (const pathname of ['/admin/products', `/admin/products/${product.id}`, '/admin/products?q=nothing-matches', '/admin/import', previewPath]) {
            await page.goto(`${base}${pathname}`);
            assert.deepEqual(await seriousViolations(page), [], `${pathname} at ${width} px`);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
            assert.ok(overflow <= 0, `${pathname} scrolls sideways at ${width} px (${overflow} px)`);
          }
        }
      } finally {
        await context.close();
      }
    });
  });
}
