/**
 * The store's identity is the merchant's (issue [pages], item 3): a store started with STORE_NAME, STORE_DESCRIPTION,
 * STORE_CONTACT_EMAIL and STORE_ADDRESS, selling teas, says who it is on the approval page, the order page, the code
 * and order mails (read from a loopback SMTP server), the MCP `instructions` and tool descriptions, and its OpenAPI
 * document; and none of them speaks of drink sticks or capsules, which this store does not sell.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { loadConfig } from '../../src/config.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

const BASE_URL = 'http://store.test';
const IDENTITY = {
  STORE_NAME: 'Harbor Tea Co.',
  STORE_DESCRIPTION: 'Loose-leaf teas, blended in Maine.',
  STORE_CONTACT_EMAIL: 'help@harbor.example',
  STORE_ADDRESS: '1 Wharf St;Portland, ME 04101',
};
const ADDRESS_ON_ONE_LINE = '1 Wharf St, Portland, ME 04101';

/** What the demo catalog sells and this store does not: none of it may appear anywhere this store speaks. */
const NOT_THIS_STORE = /drink|capsule|\bsticks?\b/i;

const TEAS: CatalogDocument = {
  products: [
    {
      handle: 'harbor-breakfast',
      title: 'Harbor Breakfast',
      product_type: 'Black tea',
      options: ['Size'],
      images: [{ src: '/assets/harbor-breakfast.jpg', alt: 'A tin of Harbor Breakfast' }],
      variants: [
        { sku: 'HB-100', options: ['100 g'], price: 1400, inventory_quantity: 40 },
        { sku: 'HB-250', options: ['250 g'], price: 3000, inventory_quantity: 40 },
      ],
    },
    { handle: 'fog-green', title: 'Fog Green', product_type: 'Green tea', variants: [{ sku: 'FG-50', price: 1100, inventory_quantity: 40 }] },
  ],
  collections: [{ handle: 'teas', title: 'Teas', products: ['harbor-breakfast', 'fog-green'] }],
};

describe("the merchant's identity everywhere the store speaks (pglite)", () => {
  let t: TestStore;
  let smtp: TestSmtpServer;
  /** Every text the store answered in these tests, to check none speaks of what it does not sell. */
  const said: { where: string; text: string }[] = [];
  const heard = (where: string, text: string) => {
    said.push({ where, text });
    return text;
  };

  before(async () => {
    smtp = await startSmtpServer();
    const config = loadConfig({ BASE_URL, DATA_DIR: 'unused', RATE_LIMIT: 'off', ...IDENTITY });
    assert.equal(config.checkout.approvalProof, 'passkey-or-code', 'the default proof: a mailed code');
    // `deliver`: the outbox is sent, so the order's confirmation reaches the SMTP server as the code does.
    t = await startTestStore(backends[0]!, { seedDemo: false, deliver: true, config: { ...config, mail: { ...config.mail, smtpUrl: smtp.url } } });
    await importCatalog(t.store.db, TEAS);
    await t.store.catalog.refresh(t.store.db);
    await t.store.inventory.refresh(t.store.db);
  });
  after(async () => {
    await t?.close();
    await smtp?.close();
  });

  const variantIdOf = (sku: string) => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;

  async function mcp(method: string, params: Record<string, unknown> = {}) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/ucp/mcp',
      headers: { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    assert.equal(response.statusCode, 200, response.body);
    heard(`MCP ${method}`, response.body);
    return JSON.parse(response.body).result;
  }

  it('the MCP instructions say whose store it is, what it is and how to reach it; serverInfo names it', async () => {
    const result = await mcp('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    assert.match(result.instructions, /^Harbor Tea Co\.: Loose-leaf teas, blended in Maine\. Contact: help@harbor\.example\. /);
    assert.equal(result.serverInfo.name, 'storefront');
    assert.match(result.serverInfo.title, /^Harbor Tea Co\. /);
  });

  it("tools/list: search_catalog searches this store's products, by its name", async () => {
    const { tools } = await mcp('tools/list');
    const search = (tools as { name: string; description: string }[]).find((tool) => tool.name === 'search_catalog')!;
    assert.match(search.description, /^Search the products of Harbor Tea Co\. by free text/);
  });

  it("/openapi.json is the merchant's: its title, description and contact", async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const { info } = JSON.parse(heard('/openapi.json', response.body));
    assert.equal(info.title, 'Harbor Tea Co. API');
    assert.match(info.description, /^Harbor Tea Co\.: Loose-leaf teas, blended in Maine\. /);
    assert.deepEqual(info.contact, { name: 'Harbor Tea Co.', email: 'help@harbor.example' });
  });

  it('the approval page, the code mail, the order page and the order mail name the seller, its contact and address', async () => {
    const { checkouts, db } = t.store;
    const created = await checkouts.create(
      db,
      {
        lines: [{ variantId: variantIdOf('HB-100'), quantity: 2 }, { variantId: variantIdOf('FG-50'), quantity: 1 }],
        buyer: { email: 'ana@example.com' },
        destination: { firstName: 'Ana', lastName: 'Lima', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94103', country: 'US' },
        shippingOption: 'standard',
      },
      'agent',
      'agent',
    );
    const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
    const url = `/checkout/approve/${asked.approval!.token}`;

    const page = await t.app.inject({ method: 'GET', url });
    assert.equal(page.statusCode, 200);
    const approval = heard('the approval page', page.body);
    assert.ok(approval.includes('<p class="seller">Sold by <strong>Harbor Tea Co.</strong> · <a href="mailto:help@harbor.example">help@harbor.example</a>'));
    assert.ok(approval.includes(`<span class="postal">${ADDRESS_ON_ONE_LINE}</span>`));
    assert.ok(approval.includes('<meta name="description" content="Loose-leaf teas, blended in Maine.">'));
    assert.ok(approval.includes('<title>Approve your order · Harbor Tea Co.</title>'));
    assert.ok(approval.includes('alt="A tin of Harbor Breakfast"'), 'the product picture, with its alt text');

    // The buyer asks for the code, as the page's form does, and reads it from the mail.
    const cookie = String(([] as string[]).concat(page.headers['set-cookie'] as string[]).find((c) => c.startsWith('approval_form='))).split(';')[0]!;
    const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(approval)![1]!;
    const post = (form: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: BASE_URL, 'sec-fetch-site': 'same-origin' },
        payload: new URLSearchParams({ form_token: field('form_token'), digest: field('digest'), ...form }).toString(),
      });
    assert.equal((await post({ action: 'send_code' })).statusCode, 303);
    const [codeMail] = await smtp.waitFor(1);
    const code = /^(\d{6}) /.exec(codeMail!.subject ?? '')![1]!;
    assert.equal(codeMail!.subject, `${code} is your code to approve your order at Harbor Tea Co.`);
    assertSigned('the code mail', codeMail!);

    const approved = await post({ action: 'approve', code });
    assert.equal(approved.statusCode, 303, approved.body);
    const orderPage = heard('the order page', (await t.app.inject({ method: 'GET', url: approved.headers.location! })).body);
    assert.match(orderPage, /<h1>Thank you, your order #\d+ is placed<\/h1>/);
    assert.ok(orderPage.includes('placed with Harbor Tea Co. on'));
    assert.ok(orderPage.includes('Questions? Write to <a href="mailto:help@harbor.example">help@harbor.example</a>'));
    assert.ok(orderPage.includes(`<span class="postal">${ADDRESS_ON_ONE_LINE}</span>`), "the footer's address");

    const [, confirmation] = await smtp.waitFor(2, 20_000);
    assert.match(confirmation!.subject ?? '', /^Harbor Tea Co\.: order #\d+ confirmed$/);
    assert.ok(confirmation!.text!.includes('Thank you for your order'));
    assert.ok(confirmation!.text!.includes('Harbor Breakfast'));
    assertSigned('the order confirmation', confirmation!);
  });

  /** A mail to the buyer ends with the store's name, contact and address, in both parts. */
  function assertSigned(what: string, mail: ReceivedMail): void {
    const text = heard(`${what} (text)`, mail.text ?? '');
    const markup = heard(`${what} (HTML)`, String(mail.html));
    assert.ok(text.includes('\n-- \nHarbor Tea Co.\nhelp@harbor.example\n1 Wharf St\nPortland, ME 04101\n'), `${what}: ${text}`);
    assert.ok(markup.includes('Harbor Tea Co.<br><a href="mailto:help@harbor.example"'), what);
    assert.ok(markup.includes('<br>1 Wharf St<br>Portland, ME 04101</p>'), what);
  }

  it('none of it speaks of drink sticks or capsules', () => {
    assert.ok(said.length >= 9, `all of the above was heard (${said.map((s) => s.where).join(', ')})`);
    for (const { where, text } of said) assert.doesNotMatch(text, NOT_THIS_STORE, where);
  });
});
