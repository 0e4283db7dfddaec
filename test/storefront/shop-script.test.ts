/**
 * The shop's script (assets/storefront.js) and the cart count in the header: it reads /cart.js only when this browser
 * has a cart, since reading /cart.js without one hands out a new cart and a cookie. The script runs here in a
 * sandbox against the pages the store serves, with a stand-in for the few DOM calls it makes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import vm from 'node:vm';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from '../cart/shopper.js';

after(dropTestDatabases);

const SCRIPT = readFileSync(new URL('../../src/storefront/pages/assets/storefront.js', import.meta.url), 'utf8');
const MARK = 'storefront.cart';

/** Runs the script on `html` served at `path`, with `stored` as the browser's local storage; what it fetched and kept. */
async function runScript(html: string, path: string, stored: Map<string, string>): Promise<{ fetched: string[] }> {
  const fetched: string[] = [];
  const element = (id: string) =>
    html.includes(`id="${id}"`) ? { id, textContent: '', hidden: false, setAttribute() {}, removeAttribute() {}, addEventListener() {} } : null;
  const document = {
    cookie: '', // the cart cookie is HttpOnly: a script never sees it
    readyState: 'complete',
    getElementById: element,
    querySelector: (selector: string) => {
      const className = /^\.([a-z-]+)$/.exec(selector)?.[1];
      assert.ok(className, `a selector the stand-in knows: ${selector}`);
      return html.includes(`class="${className}"`) ? {} : null;
    },
    addEventListener() {},
  };
  const window = {
    location: { pathname: path, href: `http://store.test${path}` },
    localStorage: {
      getItem: (key: string) => stored.get(key) ?? null,
      setItem: (key: string, value: string) => void stored.set(key, value),
      removeItem: (key: string) => void stored.delete(key),
    },
    fetch: (url: string) => {
      fetched.push(url);
      return Promise.resolve({ ok: true, json: () => Promise.resolve({ item_count: 1 }) });
    },
  };
  vm.runInNewContext(SCRIPT, { window, document, JSON });
  await new Promise((resolve) => setImmediate(resolve));
  return { fetched };
}

for (const backend of backends) {
  describe(`the shop script's cart count (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const page = async (shopper: Shopper, url: string) => {
      const answer = await shopper.send('GET', url, { headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' } });
      assert.equal(answer.status, 200, answer.raw);
      return answer.raw;
    };

    it('an empty cart page asks nothing of /cart.js (which would hand out a cart and a cookie), and forgets an earlier mark', async () => {
      const emptyCart = await page(new Shopper(t.app), '/cart');
      for (const stored of [new Map<string, string>(), new Map([[MARK, '1']])]) {
        const { fetched } = await runScript(emptyCart, '/cart', stored);
        assert.deepEqual(fetched, [], 'no read of /cart.js');
        assert.equal(stored.has(MARK), false, 'no mark is left');
      }
      // Nor does a shop page in a browser that never had a cart.
      const { fetched } = await runScript(await page(new Shopper(t.app), '/'), '/', new Map());
      assert.deepEqual(fetched, []);
    });

    it('a cart page with lines reads the count and marks the browser, so the shop pages read it too', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const stored = new Map<string, string>();
      assert.deepEqual((await runScript(await page(shopper, '/cart'), '/cart', stored)).fetched, ['/cart.js']);
      assert.equal(stored.get(MARK), '1');
      assert.deepEqual((await runScript(await page(shopper, '/'), '/', stored)).fetched, ['/cart.js']);
    });
  });
}
