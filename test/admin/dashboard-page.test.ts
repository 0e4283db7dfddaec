/**
 * The admin's dashboard over HTTP, on both backends, with a signed-in session: its figures equal what the test
 * placed (two agent orders from two platforms, one browser order, one refund), the charts are inline SVG images
 * named by a summary with their numbers in a table, each figure links to the orders list filtered to exactly those
 * orders (the list answers the same count), no script runs, and without a session nothing is shown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatMoney } from '../../src/catalog/types.js';
import type { Order } from '../../src/orders/orders.js';
import { startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { placeOrderBy, variantOf } from '../reports/placing.js';

after(dropTestDatabases);

/** The text of some markup, tags dropped, entities read, spaces collapsed. */
function textOf(markup: string): string {
  return markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The element that starts at the first match of `start` up to its closing `tag`. */
function section(body: string, start: RegExp, tag: string): string {
  const at = body.search(start);
  assert.notEqual(at, -1, `found ${start}`);
  const end = body.indexOf(`</${tag}>`, at);
  return body.slice(at, end + tag.length + 3);
}

const href = (path: string) => path.replace(/&/g, '&amp;');

for (const backend of backends) {
  describe(`the admin's dashboard (${backend.name})`, () => {
    let t: TestStore;
    let owner: StaffSessionForTest;
    let chat: Order;
    let assistant: Order;
    let browser: Order;
    let today: string;
    const get = (url: string, session?: StaffSessionForTest) =>
      t.app.inject({ method: 'GET', url, headers: { accept: 'text/html', ...(session ? { cookie: session.cookie } : {}) } });

    before(async () => {
      t = await startTestStore(backend);
      const { store } = t;
      const variant = (sku: string) => variantOf(store, sku);
      chat = await placeOrderBy(store, { by: 'agent', platform: 'chat.example' }, [{ variantId: variant('ESP-CLA-10'), quantity: 2 }], 'ada@example.com');
      assistant = await placeOrderBy(store, { by: 'agent', platform: 'assist.example:8443' }, [{ variantId: variant('ESP-DEC-10'), quantity: 1 }], 'bo@example.com');
      browser = await placeOrderBy(store, { by: 'browser' }, [{ variantId: variant('SLP-120'), quantity: 1 }], 'cy@example.com');
      await store.orders.capture(store.db, String(chat.number));
      await store.orders.refund(store.db, String(chat.number), 500, 'dented box');
      owner = await startStaffSession(store, { role: 'owner' });
      today = new Date().toISOString().slice(0, 10);
    });
    after(() => t?.close());

    it('without a session: the sign-in page (401), no figure', async () => {
      const response = await get('/admin');
      assert.equal(response.statusCode, 401);
      assert.doesNotMatch(response.body, /Waiting for you|chat\.example/);
      assert.equal(response.headers['cache-control'], 'no-store');
    });

    it("today's sales, orders, average order and refunds equal the orders placed, beside yesterday's, each linking to its orders", async () => {
      const response = await get('/admin', owner);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.doesNotMatch(response.headers['content-security-policy'] as string, /script-src/);
      assert.doesNotMatch(response.body, /<script/);
      const panel = section(response.body, /<section class="panel" aria-labelledby="period-today">/, 'section');
      const sales = chat.total + assistant.total + browser.total;
      const list = href(`/admin/orders?status=placed&from=${today}&to=${today}`);
      assert.match(textOf(panel), new RegExp(`^Today .* Sales ${escape(formatMoney(sales))} \\$0\\.00 none before Orders 3 0 none before Average order ${escape(formatMoney(Math.round(sales / 3)))} \\$0\\.00 none before Refunds \\$5\\.00 \\$0\\.00 none before$`));
      assert.ok(panel.includes(`<a href="${list}">${formatMoney(sales)}</a>`), 'sales link to the orders of the day');
      assert.ok(panel.includes(`<a href="${list}">3</a>`), 'orders link to the orders of the day');
      // The list it links to holds exactly those orders.
      const listed = await get(`/admin/orders?status=placed&from=${today}&to=${today}`, owner);
      assert.equal(listed.statusCode, 200);
      assert.match(textOf(listed.body), /3 orders match/);
    });

    it('orders per day by who prepared them: an SVG image named by its summary, and the numbers in a table', async () => {
      const body = (await get('/admin', owner)).body;
      const chart = section(body, /<svg class="chart" role="img" aria-labelledby="orders-chart-title"/, 'svg');
      assert.match(chart, /<title id="orders-chart-title">Orders per day, last 30 days: 3 orders, 2 prepared by agents, 1 in a browser\.<\/title>/);
      assert.equal((chart.match(/<rect /g) ?? []).length, 3, 'one bar piece per preparer today');
      const table = section(body, /<table>\s*<caption id="orders-by-day-caption">/, 'table');
      const head = textOf(section(table, /<thead>/, 'thead'));
      assert.equal(head, 'Day Browser Agent: assist.example:8443 Agent: chat.example All');
      const rows = [...table.matchAll(/<tr><th scope="row">(.*?)<\/tr>/g)].map((row) => textOf(row[0]));
      assert.equal(rows[0], '30 days 1 1 1 3');
      assert.match(rows[1]!, / 1 1 1 3$/, "today's row, first after the totals");
      assert.equal(rows.length, 31);
      assert.ok(table.includes(href(`/admin/orders?status=placed&from=`) ), 'the totals link to the list');
      assert.ok(table.includes(`platform=chat.example`), "a platform's orders link to the list filtered by it");
      const platformList = await get(`/admin/orders?platform=chat.example`, owner);
      assert.match(textOf(platformList.body), /1 order match/);
    });

    it('units sold per product: a chart with its numbers in a table', async () => {
      const body = (await get('/admin', owner)).body;
      assert.match(body, /<svg class="chart" role="img" aria-labelledby="units-chart-title"/);
      const table = textOf(section(body, /<table>\s*<caption id="units-caption">/, 'table'));
      const line = (order: Order) => order.lines[0]!;
      assert.ok(table.includes(`${line(chat).productTitle} 2 ${formatMoney(line(chat).lineTotal)}`), table);
      assert.ok(table.includes(`${line(assistant).productTitle} 1 ${formatMoney(line(assistant).lineTotal)}`), table);
      assert.ok(table.includes(`${line(browser).productTitle} 1 ${formatMoney(line(browser).lineTotal)}`), table);
    });

    it('what waits for the merchant links to the list of exactly those orders, and to each order', async () => {
      const body = (await get('/admin', owner)).body;
      const waiting = section(body, /<section class="panel" aria-labelledby="waiting-heading">/, 'section');
      assert.match(textOf(waiting), /Waiting for a shipment: 3/);
      assert.ok(waiting.includes('href="/admin/orders?waiting=shipment"'));
      for (const order of [chat, assistant, browser]) assert.ok(waiting.includes(`<a href="/admin/orders/${order.number}">#${order.number}</a>`));
      const listed = await get('/admin/orders?waiting=shipment', owner);
      assert.match(textOf(listed.body), /3 orders match/);
    });

    it('a staff member (not an owner) sees the dashboard too', async () => {
      const staff = await startStaffSession(t.store, { role: 'staff' });
      const response = await get('/admin', staff);
      assert.equal(response.statusCode, 200);
      assert.match(response.body, /<h1>Dashboard<\/h1>/);
    });
  });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
