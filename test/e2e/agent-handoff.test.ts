/**
 * The agent's hand-off, as the MCP instructions tell agents to do it: an agent with the MCP SDK's own client fills a
 * cart (create_cart, naming its profile) and gives the buyer the cart's continue_url; the buyer opens it in a real
 * headless Chromium (/cart/c/{token} shows the cart and takes nothing; its button, a form post, hands the cart over: a
 * new token in the cart cookie, and the cart page shows the agent's lines), checks out in the browser (email, US
 * address, shipping method), proves they are the buyer with the code the store mails (its default proof, to a
 * loopback SMTP server) and approves. The order holds the agent's cart lines, was placed from a checkout of that cart
 * prepared by the browser, and took the stock. Meanwhile the agent's cart id names no cart (get_cart: not_found), and
 * its continue_url, opened in another browser, says the cart was handed over; once the order closed the cart, it no
 * longer works in the buyer's browser either. With JavaScript on and off, on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { backends, dropTestDatabases } from '../helpers/store.js';
import {
  BUYER,
  approveWithCode,
  askForMailedCode,
  cartLineCount,
  cartQuantityOf,
  clickAndLoad,
  fillCheckoutForm,
  onHand,
  openWindow,
  placedOrder,
  startListeningShop,
  variantBySku,
  whereItStopped,
  type ListeningShop,
} from '../helpers/walk.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta } from '../ucp/mcp-harness.js';
import { officialSchemaErrors, resultSchemaFor } from '../ucp/official-schemas.js';

let browser: Browser;
let profiles: AgentProfileServer;
before(async () => {
  browser = await launchChromium();
  profiles = await serveAgentProfiles(['2026-04-08']);
});
after(async () => {
  await browser?.close();
  await profiles?.close();
  await dropTestDatabases();
});

/** What the agent puts in the cart, by SKU, per walk (different variants, so each walk's stock is its own). */
const AGENT_LINES = {
  js: [
    { sku: 'HYD-LEMONLIME-10', quantity: 2 },
    { sku: 'ESP-CLA-10', quantity: 1 },
  ],
  nojs: [
    { sku: 'HYD-MIXEDBERRY-10', quantity: 1 },
    { sku: 'ESP-RIS-10', quantity: 3 },
  ],
} as const;

for (const backend of backends) {
  describe(`an agent fills a cart over MCP, the buyer opens its continue_url in Chromium and places the order (${backend.name})`, () => {
    let shop: ListeningShop;
    let client: Client;

    before(async () => {
      shop = await startListeningShop(backend, { allowInsecureProfiles: true });
      client = new Client({ name: 'storefront-e2e-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${shop.base}/api/ucp/mcp`)));
    });
    after(async () => {
      await client?.close();
      await shop?.close();
    });

    async function call(name: string, args: Record<string, unknown>): Promise<any> {
      const result = (await client.callTool({ name, arguments: args })) as { structuredContent: any };
      const structured = result.structuredContent;
      assert.deepEqual(officialSchemaErrors(resultSchemaFor(name, structured), structured), [], `${name}: ${JSON.stringify(structured).slice(0, 600)}`);
      return structured;
    }

    async function handOff(javaScriptEnabled: boolean): Promise<void> {
      const mode = javaScriptEnabled ? 'js' : 'nojs';
      const email = `handoff-${mode}@example.com`;
      const wanted = AGENT_LINES[mode].map((line) => ({ ...variantBySku(shop.t, line.sku), quantity: line.quantity }));
      const stockBefore = await Promise.all(wanted.map((line) => onHand(shop.t, line.id)));

      const cart = await call('create_cart', {
        meta: agentMeta(profiles.profileUrl('2026-04-08')),
        cart: { line_items: wanted.map((line) => ({ item: { id: String(line.id) }, quantity: line.quantity })) },
      });
      assert.equal(cart.continue_url, `${shop.base}/cart/c/${cart.id}`, 'the hand-off link opens this cart in a browser');

      const { context, page, errors } = await openWindow(browser, { javaScriptEnabled });
      try {
        // Opening the link shows the cart and takes nothing (a chat app's link preview opens it too).
        const opened = await page.goto(cart.continue_url);
        assert.equal(opened?.status(), 200);
        assert.equal((await page.getByRole('heading', { level: 1 }).innerText()).trim(), 'A cart for you');
        const held = (await client.callTool({ name: 'get_cart', arguments: { id: cart.id } })) as { structuredContent: any };
        assert.equal(held.structuredContent.id, cart.id, 'the agent still holds its cart once the link is opened');
        // The buyer presses the button: the browser takes the cart over and lands on the cart page.
        await clickAndLoad(page, () => page.getByRole('button', { name: 'Open this cart here' }).click());
        assert.equal(page.url(), `${shop.base}/cart`, 'the hand-off lands on the cart page');
        assert.equal((await page.getByRole('heading', { level: 1 }).innerText()).trim(), 'Your cart');
        assert.equal(await cartLineCount(page), wanted.length, "the agent's lines, and only those");
        for (const line of wanted) {
          assert.equal(await cartQuantityOf(page, line).inputValue(), String(line.quantity), `the agent's line ${line.itemName} is on the cart page`);
        }
        // The browser now holds the agent's cart, under a token of its own; the agent's id names no cart.
        const json = (await (await context.request.get(`${shop.base}/cart.js`)).json()) as { token: string; item_count: number };
        assert.notEqual(json.token, cart.id, "the cart cookie holds the cart under a new token");
        assert.equal(json.item_count, wanted.reduce((sum, line) => sum + line.quantity, 0));
        const gone = (await client.callTool({ name: 'get_cart', arguments: { id: cart.id } })) as { structuredContent: any };
        assert.equal(gone.structuredContent.messages[0].code, 'not_found', "the agent's cart id after the hand-off");
        const elsewhere = await browser.newContext();
        try {
          const other = await elsewhere.newPage();
          assert.equal((await other.goto(cart.continue_url))?.status(), 404, 'the continue_url in another browser');
          assert.equal((await other.getByRole('heading', { level: 1 }).innerText()).trim(), 'This cart was handed over');
        } finally {
          await elsewhere.close();
        }

        await clickAndLoad(page, () => page.getByRole('button', { name: 'Check out' }).click());
        assert.equal(new URL(page.url()).pathname, '/checkout');
        await fillCheckoutForm(page, { email, ...BUYER });
        await Promise.all([page.waitForURL(/\/checkout\/approve\/[^/]+$/), page.getByRole('button', { name: 'Continue to approval' }).click()]);
        const code = await askForMailedCode(page, shop.smtp, email);
        const orderId = await approveWithCode(page, code);

        const order = await placedOrder(shop.t, orderId);
        assert.deepEqual(
          order.lines.map((line) => [line.variantId, line.quantity]).sort(),
          wanted.map((line) => [line.id, line.quantity]).sort(),
          "the order holds the agent's cart lines",
        );
        assert.equal(order.subtotal, cart.totals.find((x: { type: string }) => x.type === 'total').amount, "the items cost what the agent's cart said");
        assert.equal(order.cartToken, json.token, "the order's checkout was made from the cart the browser took");
        assert.equal(order.checkoutChannel, 'browser', 'the buyer checked out in the browser');
        assert.equal(order.buyerEmail, email);
        assert.deepEqual(errors, [], 'no console error on any page');
        // The agent's link handed the cart over once; its order closed the cart, so the link now says it does not work.
        const reopened = await page.goto(cart.continue_url);
        assert.equal(reopened?.status(), 404, 'the hand-off link of an ordered cart');
        assert.equal((await page.getByRole('heading', { level: 1 }).innerText()).trim(), 'This cart link does not work');
        const stockAfter = await Promise.all(wanted.map((line) => onHand(shop.t, line.id)));
        assert.deepEqual(stockAfter, stockBefore.map((units, i) => units - wanted[i]!.quantity), 'the stock went down by the quantities ordered');
      } catch (error) {
        throw new Error(`${(error as Error).message}\n  (${await whereItStopped(page)})`, { cause: error });
      } finally {
        await context.close();
      }
    }

    it("with JavaScript on: the order holds the agent's cart lines, checked out in the browser", async () => {
      await handOff(true);
    });

    it('with JavaScript off: the hand-off and the browser checkout work alike', async () => {
      await handOff(false);
    });
  });
}
