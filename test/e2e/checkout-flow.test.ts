/**
 * The whole flow, as the people who use it do it: an agent with the MCP SDK's own client searches, fills a cart,
 * checks it out, gives the buyer, address and shipping option, and asks to complete (answered requires_escalation
 * with the approval link, never an order); then a buyer in a real headless Chromium opens that link, sees the
 * lines and totals, proves they are the buyer as the store asks by default (APPROVAL_PROOF=passkey-or-code: a
 * first-time buyer has no passkey, so "Email me a code", the code read from the mail a real SMTP server on loopback
 * received, typed on the page) and approves; get_checkout then answers completed and get_order the order. Once with
 * JavaScript on (and axe-core finding no serious or critical accessibility violation on the approval page, before and
 * after the code is sent, and on the order page), the agent on the MCP SDK v1 client (MCP 2025-11-25); once with
 * JavaScript off, the agent on the v2 client speaking MCP 2026-07-28. On both backends. The agent names its
 * profile (a 2026-04-08 agent, served on loopback) on its checkout and order calls, which need one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { officialSchemaErrors, resultSchemaFor } from '../ucp/official-schemas.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta } from '../ucp/mcp-harness.js';
import { connectAgentClient, type AgentClient, type McpClientKind } from '../ucp/mcp-clients.js';
import { freePort, launchChromium, seriousViolations } from '../helpers/browser.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

after(dropTestDatabases);


for (const backend of backends) {
  describe(`an agent prepares, the buyer approves in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let base: string;
    const clients = new Map<McpClientKind, AgentClient>();
    /** The client of the flow running now. */
    let client: AgentClient;
    let browser: Browser;
    let smtp: TestSmtpServer;
    let profiles: AgentProfileServer;
    /** The agent's `meta`: its profile, which the checkout and order tools need. */
    const agent = () => agentMeta(profiles.profileUrl('2026-04-08'));

    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      // The store mails the buyer's approval code to this server (its order mail stays in the outbox: not delivered here).
      smtp = await startSmtpServer();
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off' });
      assert.equal(config.checkout.approvalProof, 'passkey-or-code', 'the store runs its default proof');
      t = await startTestStore(backend, {
        config: { ...config, storeName: 'Fizz & Sons', mail: { ...config.mail, smtpUrl: smtp.url }, allowInsecureProfiles: true },
      });
      await t.app.listen({ host: '127.0.0.1', port });
      for (const kind of ['v1', 'v2'] as const) clients.set(kind, await connectAgentClient(kind, `${base}/api/ucp/mcp`, 'storefront-e2e-agent'));
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      for (const each of clients.values()) await each.close();
      await t?.close();
      await smtp?.close();
      await profiles?.close();
    });

    async function call(name: string, args: Record<string, unknown>): Promise<any> {
      const result = (await client.callTool({ name, arguments: args })) as { structuredContent: any };
      const structured = result.structuredContent;
      assert.deepEqual(officialSchemaErrors(resultSchemaFor(name, structured), structured), [], `${name}: ${JSON.stringify(structured).slice(0, 600)}`);
      return structured;
    }

    /** search -> cart -> checkout -> buyer, address, shipping -> complete: the checkout waiting for its buyer. */
    async function agentPreparesCheckout(email: string): Promise<{ id: string; continueUrl: string; total: number; title: string }> {
      const search = await call('search_catalog', { catalog: { query: 'espresso' } });
      const product = search.products[0];
      const variant = product.variants[0];
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: variant.id }, quantity: 2 }] } });
      const created = await call('create_checkout', { meta: agent(), checkout: { cart_id: cart.id } });
      assert.equal(created.status, 'incomplete');
      const lineIds = created.line_items.map((line: { id: string }) => line.id);
      const updated = await call('update_checkout', {
        meta: agent(),
        id: created.id,
        checkout: {
          line_items: created.line_items.map((line: any) => ({ id: line.id, item: { id: line.item.id }, quantity: line.quantity })),
          buyer: { email, first_name: 'Ann', last_name: 'Lee' },
          fulfillment: {
            methods: [
              {
                id: 'shipping_1',
                type: 'shipping',
                line_item_ids: lineIds,
                destinations: [{ street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' }],
                groups: [{ id: 'group_1', selected_option_id: 'express' }],
              },
            ],
          },
        },
      });
      assert.equal(updated.status, 'ready_for_complete', JSON.stringify(updated.messages));
      const asked = await call('complete_checkout', { meta: { ...agent(), 'idempotency-key': crypto.randomUUID() }, id: created.id, checkout: {} });
      assert.equal(asked.status, 'requires_escalation');
      assert.equal(asked.order, undefined);
      assert.ok(asked.continue_url.startsWith(`${base}/checkout/approve/`), asked.continue_url);
      const total = asked.totals.find((x: { type: string }) => x.type === 'total').amount as number;
      return { id: created.id, continueUrl: asked.continue_url, total, title: asked.line_items[0].item.title as string };
    }

    const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

    async function buyerApproves(javaScriptEnabled: boolean, email: string, kind: McpClientKind): Promise<void> {
      client = clients.get(kind)!;
      assert.equal(client.protocolVersion(), kind === 'v1' ? '2025-11-25' : '2026-07-28');
      const checkout = await agentPreparesCheckout(email);
      const context = await browser.newContext({ javaScriptEnabled, bypassCSP: false });
      try {
        const page = await context.newPage();
        const response = await page.goto(checkout.continueUrl);
        assert.equal(response?.status(), 200);
        const text = await page.locator('body').innerText();
        assert.ok(text.includes('Fizz & Sons'), 'the store name');
        // The line: the product's title and the variant's, as the agent's checkout named them ("Product - Variant").
        for (const part of checkout.title.split(' - ')) assert.ok(text.includes(part), `the line ${checkout.title}: ${part}`);
        assert.ok(text.includes(dollars(checkout.total)), `the total ${dollars(checkout.total)}`);
        assert.match(text, /nothing is charged|not charged/i);
        if (javaScriptEnabled) assert.deepEqual(await seriousViolations(page), [], 'approval page accessibility');
        // Nothing approves before the buyer proves it is them: no passkey for a first-time buyer, no code yet.
        assert.equal(await page.locator('#passkey-approval').count(), 0, 'no passkey offered');
        assert.equal(await page.getByRole('button', { name: /approve/i }).count(), 0, 'no Approve button before a code is sent');

        // The buyer asks for a code, reads it in the mail, types it, and approves.
        const mailsBefore = smtp.messages.length;
        await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Email me a code' }).click()]);
        const mail = (await smtp.waitFor(mailsBefore + 1))[mailsBefore]!;
        assert.deepEqual(mail.envelope.to, [email], 'the code goes to the buyer email of the checkout');
        const code = /^(\d{6}) is your code to approve your order at Fizz & Sons$/.exec(mail.subject ?? '')?.[1];
        assert.ok(code, `the code mail's subject: ${JSON.stringify(mail.subject)}`);
        assert.ok(mail.text?.includes(dollars(checkout.total)), 'the code mail says what it approves');
        assert.match(await page.locator('section.proof').innerText(), new RegExp(`We emailed a 6-digit code to ${email.replace(/[.]/g, '\\.')}`));
        if (javaScriptEnabled) assert.deepEqual(await seriousViolations(page), [], 'approval page accessibility, with the code field');
        await page.getByLabel('Code from the email').fill(code);
        await Promise.all([page.waitForURL(/\/orders\/ord_/), page.getByRole('button', { name: /^Approve and place order/ }).click()]);
        const orderText = await page.locator('body').innerText();
        assert.ok(orderText.includes(dollars(checkout.total)));
        // This store's BASE_URL names an IP address, which no passkey can be bound to: no offer to create one
        // (test/storefront/buyer-proof-browser.test.ts runs on localhost, where it is offered).
        assert.equal(await page.getByRole('button', { name: 'Create a passkey' }).count(), 0, 'no passkey offer on an IP address');
        if (javaScriptEnabled) assert.deepEqual(await seriousViolations(page), [], 'order page accessibility');
      } finally {
        await context.close();
      }
      const completed = await call('get_checkout', { meta: agent(), id: checkout.id });
      assert.equal(completed.status, 'completed');
      assert.equal(completed.continue_url, undefined);
      const order = await call('get_order', { meta: agent(), id: completed.order.id });
      assert.equal(order.checkout_id, checkout.id);
      assert.equal(order.totals.find((x: { type: string }) => x.type === 'total').amount, checkout.total);
      const [row] = await t.store.db.query<{ buyer_email: string }>('select buyer_email from orders where id = $1', [completed.order.id]);
      assert.equal(row?.buyer_email, email);
    }

    it('with JavaScript on, an agent on SDK v1 / MCP 2025-11-25: the buyer proves the email with the mailed code and approves, the order exists, and axe finds no serious or critical violation', async () => {
      await buyerApproves(true, 'js-on@example.com', 'v1');
    });

    it('with JavaScript off, an agent on SDK v2 / MCP 2026-07-28: the same flow works, the mailed code included', async () => {
      await buyerApproves(false, 'js-off@example.com', 'v2');
    });
  });
}
