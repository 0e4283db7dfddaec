/**
 * What was bought is kept and shown everywhere (issue 39, items 1 and 8), on both backends: a browser's cart with a
 * note and attributes (cart/update.js), one line on the demo's espresso-capsules plan and one one-time line, checked
 * out and approved on the approval page. The approval page, the order, its page (with the link to manage the
 * subscription), both mails, `orders show`, the admin's page and `get_order` (valid in both UCP releases) say the
 * plan (its name, interval and saving) and the note and attributes. An agent's checkout of such a cart names the plan
 * in its line's title too. Text stored before the fields refused it (a direction override, a line break that would
 * read as the store's own) stays inert on the page, in the mails and on the terminal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MailMessage } from '../../src/outbox/outbox.js';
import { orderMails } from '../../src/mail/order-mail.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import { planUnitPrice, type Product } from '../../src/catalog/types.js';
import { adminClient, startStaffSession } from '../helpers/admin-session.js';
import { runCommand } from '../helpers/cli.js';
import { CHECKOUT_FORM, FORM_POST } from '../helpers/orders.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';
import { Shopper, variantId } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta, callTool, startListeningStore, type ListeningStore } from '../ucp/mcp-harness.js';
import { toolResultErrors, UCP_RELEASES, type UcpRelease } from '../ucp/official-schemas.js';

after(dropTestDatabases);

const NOTE = 'Leave it with the neighbour at no. 3\n<script>alert("note")</script>';
const ATTRIBUTES = { 'Gift wrap': 'yes', 'Deliver after': '5pm <b>sharp</b>' };
const MERCHANT = 'merchant@store.test';
/** The plan in the words of every surface: its name, interval and discount, and what the one unit bought saved. */
const PLAN_WORDS = 'Delivery every month (every month, save 10%)';
const SAVED = `${PLAN_WORDS} — you save $0.65`;

/** A character that steers a terminal (C0 but the line break, DEL, C1), reorders text or hides. */
const STEERING = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u202a-\u202e\u2066-\u2069]/u;
const DIRECTION = /[\u202a-\u202e\u2066-\u2069]/u;

const encoded = (form: Record<string, string>) => new URLSearchParams(form).toString();
/** The text of a page: tags dropped, entities of the escapes read back, spaces collapsed. */
const textOf = (page: string) =>
  page
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

for (const backend of backends) {
  describe(`what was bought reaches every surface (${backend.name})`, () => {
    let t: ListeningStore;
    let agents: AgentProfileServer;
    let capsules: Product;
    let approvalPage: string;
    let order: Order;

    /** A browser whose cart holds 1 espresso capsules on the monthly plan and 1 decaf once, with `NOTE` and `ATTRIBUTES`. */
    async function cartWithPlanAndNote(): Promise<Shopper> {
      const shopper = new Shopper(t.app);
      const plan = capsules.sellingPlanGroups[0]!.plans[0]!;
      const added = await shopper.add([
        { id: capsules.variants[0]!.id, quantity: 1, selling_plan: plan.id },
        { id: variantId(t, 'ESP-DEC-10'), quantity: 1 },
      ]);
      assert.equal(added.status, 200, added.raw);
      const updated = await shopper.update({ note: NOTE, attributes: ATTRIBUTES });
      assert.equal(updated.status, 200, updated.raw);
      assert.equal(updated.body.note, NOTE);
      return shopper;
    }

    before(async () => {
      t = await startListeningStore(backend, { mail: { ...testConfig().mail, merchantEmail: MERCHANT } });
      agents = await serveAgentProfiles(UCP_RELEASES);
      capsules = t.store.catalog.snapshot.productByHandle('espresso-capsules')!;
      assert.equal(capsules.variants[0]!.priceCents, 650, "the demo's capsules at $6.50 once");
      assert.equal(planUnitPrice(650, capsules.sellingPlanGroups[0]!.plans[0]!.discountPercent), 585, '$5.85 on the plan');

      // The browser checkout: the form, then the approval page (APPROVAL_PROOF=link: its form places the order).
      const shopper = await cartWithPlanAndNote();
      const posted = await shopper.send('POST', '/checkout', { form: encoded(CHECKOUT_FORM), headers: FORM_POST });
      assert.equal(posted.status, 303, posted.raw);
      const approvalUrl = String(posted.headers.location);
      assert.match(approvalUrl, /^\/checkout\/approve\//);
      const opened = await t.app.inject({ method: 'GET', url: approvalUrl });
      assert.equal(opened.statusCode, 200, opened.body);
      approvalPage = opened.body;
      const formCookie = ([] as string[]).concat(opened.headers['set-cookie'] ?? []).find((c) => c.startsWith('approval_form='))!.split(';')[0]!;
      const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(approvalPage)?.[1] ?? '';
      const approved = await t.app.inject({
        method: 'POST',
        url: approvalUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie, origin: 'http://store.test', 'sec-fetch-site': 'same-origin' },
        payload: encoded({ action: 'approve', form_token: field('form_token'), digest: field('digest') }),
      });
      assert.equal(approved.statusCode, 303, approved.body);
      const orderId = /^\/orders\/(ord_[A-Za-z0-9_-]+)$/.exec(String(approved.headers.location))?.[1];
      assert.ok(orderId, String(approved.headers.location));
      order = (await readOrder(t.store.db, orderId))!;
    });
    after(async () => {
      await agents?.close();
      await t?.close();
    });

    it('the approval page shows the plan with its saving, that it starts a subscription, and the note and attributes', () => {
      assert.ok(approvalPage.includes(SAVED), 'the plan line says its plan, interval and saving');
      assert.match(textOf(approvalPage), /You subscribe to Espresso Capsules[^:]*: Delivery every month \(every month, save 10%\)\. Each later delivery waits for your approval/);
      assert.ok(approvalPage.includes('<bdi>Leave it with the neighbour at no. 3</bdi><br><bdi>&lt;script&gt;alert(&quot;note&quot;)&lt;/script&gt;</bdi>'), 'the note, line by line, escaped');
      assert.ok(approvalPage.includes('<bdi>Gift wrap</bdi>: <bdi>yes</bdi>'));
      assert.ok(approvalPage.includes('<bdi>Deliver after</bdi>: <bdi>5pm &lt;b&gt;sharp&lt;/b&gt;</bdi>'));
      assert.ok(!approvalPage.includes('<script>alert') && !approvalPage.includes('<b>sharp'), 'nothing the buyer typed is markup');
    });

    it("the order keeps the note, the attributes and the plan's terms as bought, with the one-time price", () => {
      assert.equal(order.channel, 'browser');
      assert.equal(order.note, NOTE);
      assert.deepEqual(order.attributes, ATTRIBUTES);
      const planned = order.lines.find((line) => line.productId === capsules.id);
      const once = order.lines.find((line) => line.productId !== capsules.id);
      const plan = capsules.sellingPlanGroups[0]!.plans[0]!;
      assert.deepEqual(planned!.sellingPlan, {
        sellingPlanId: plan.id,
        groupId: capsules.sellingPlanGroups[0]!.id,
        groupName: 'Subscribe & save',
        name: 'Delivery every month',
        description: 'Save 10% on every delivery. Skip or cancel any time.',
        intervalUnit: 'month',
        intervalCount: 1,
        discountPercent: 10,
        fullUnitPrice: 650,
      });
      assert.equal(planned!.sellingPlanId, plan.id);
      assert.equal(planned!.unitPrice, 585);
      assert.equal(once!.sellingPlan, null, 'the one-time line has no plan');
      assert.equal(once!.sellingPlanId, null);
    });

    it('the order page shows the plan and saving, links to manage the subscription, and shows the note and attributes', async () => {
      const page = await t.app.inject({ method: 'GET', url: `/orders/${order.id}` });
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(SAVED), 'the plan line');
      assert.equal(page.body.split(' — you save ').length, 2, 'only the plan line says a saving');
      assert.ok(page.body.includes(`<a href="/orders/${order.id}/subscriptions">Manage your subscription</a>`));
      assert.ok(page.body.includes('<bdi>Leave it with the neighbour at no. 3</bdi><br><bdi>&lt;script&gt;alert(&quot;note&quot;)&lt;/script&gt;</bdi>'));
      assert.ok(page.body.includes('<bdi>Gift wrap</bdi>: <bdi>yes</bdi>'));
      assert.ok(!page.body.includes('<script>alert'));
    });

    it("both mails, the buyer's confirmation and the merchant's notice, show the plan, the saving, the note and the attributes", async () => {
      const rows = await t.store.db.query<{ payload: MailMessage | string }>("select payload from outbox where order_id = $1 and kind = 'mail' order by id", [order.id]);
      const mails = rows.map((row) => (typeof row.payload === 'string' ? (JSON.parse(row.payload) as MailMessage) : row.payload));
      assert.deepEqual(mails.map((mail) => mail.to).sort(), ['ana@example.com', MERCHANT]);
      for (const mail of mails) {
        assert.ok(mail.text.includes(`  ${SAVED}`), `${mail.to}: the plan under its line in the text part`);
        assert.match(mail.text, /\nNote\n {2}Leave it with the neighbour at no\. 3\n {2}<script>alert\("note"\)<\/script>\n/, `${mail.to}: the note in the text part`);
        assert.match(mail.text, /\nAdditional details\n {2}[^\n]+\n {2}[^\n]+\n/, `${mail.to}: the attributes`);
        assert.ok(mail.text.includes('\n  Gift wrap: yes\n') && mail.text.includes('\n  Deliver after: 5pm <b>sharp</b>\n'), `${mail.to}: each attribute`);
        assert.ok(mail.html.includes(SAVED), `${mail.to}: the plan in the HTML part`);
        assert.ok(mail.html.includes('Leave it with the neighbour at no. 3<br>&lt;script&gt;alert(&quot;note&quot;)&lt;/script&gt;'), `${mail.to}: the note, escaped`);
        assert.ok(mail.html.includes('Deliver after: 5pm &lt;b&gt;sharp&lt;/b&gt;'), `${mail.to}: an attribute, escaped`);
        assert.ok(!mail.html.includes('<script>alert') && !mail.html.includes('<b>sharp'));
        assert.ok(!/[\r\n]/.test(mail.subject) && !mail.subject.includes('neighbour'), 'nothing the buyer wrote reaches the subject');
      }
    });

    it('`orders show` shows the plan under its line, and the note and attributes', async () => {
      const shown = await runCommand(['orders', 'show', String(order.number)], {}, t.store.db);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, new RegExp(`^ {6}plan: ${SAVED.replace(/[()$.]/g, '\\$&')}$`, 'm'));
      assert.equal(shown.stdout.split('plan: ').length, 2, 'only the plan line has a plan');
      assert.match(shown.stdout, /^Note\s+Leave it with the neighbour at no\. 3\\u000a<script>alert\("note"\)<\/script>$/m);
      assert.match(shown.stdout, /^Attributes\s+\S/m);
      assert.match(shown.stdout, /^(?:Attributes)?\s+Gift wrap: yes$/m);
      assert.match(shown.stdout, /^(?:Attributes)?\s+Deliver after: 5pm <b>sharp<\/b>$/m);
    });

    it("the admin's order page shows the plan and the buyer's note and attributes", async () => {
      const owner = await startStaffSession(t.store, { email: 'owner@store.test', role: 'owner' });
      const page = await adminClient(t).get(`/admin/orders/${order.number}`, owner);
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(`<bdi>${SAVED}</bdi>`));
      assert.match(page.body, /<h2 id="note-heading">Note from the buyer<\/h2>/);
      assert.ok(page.body.includes('<bdi>Leave it with the neighbour at no. 3</bdi><br><bdi>&lt;script&gt;'));
      assert.ok(page.body.includes('<th scope="row"><bdi>Gift wrap</bdi></th><td><bdi>yes</bdi></td>'));
      assert.ok(!page.body.includes('<script>alert'));
    });

    /** A tools/call as an agent speaking `release`: a result valid against that release's schema for the tool. */
    async function callAs(release: UcpRelease, name: string, args: Record<string, unknown>): Promise<any> {
      const answer = await callTool(t.mcpUrl, name, { ...args, meta: agentMeta(agents.profileUrl(release)) });
      const structured = answer.body?.result?.structuredContent;
      assert.ok(structured, `${name}: ${answer.text.slice(0, 600)}`);
      assert.equal(structured.ucp?.version, release);
      assert.deepEqual(toolResultErrors(release, name, structured), [], `${name} (${release}): ${JSON.stringify(structured).slice(0, 800)}`);
      return structured;
    }

    for (const release of UCP_RELEASES) {
      it(`get_order (${release}) is valid in that release and names the plan in the plan line's title`, async () => {
        const answer = await callAs(release, 'get_order', { id: order.id });
        const lines = answer.line_items.map((line: { item: { title: string; price: number } }) => [line.item.title, line.item.price]);
        const expected = order.lines.map((line) => [line.sellingPlan ? `${line.title} — ${PLAN_WORDS}` : line.title, line.unitPrice]);
        assert.deepEqual(lines, expected);
        assert.deepEqual(expected.map(([, price]) => price).sort(), [585, 690]);
      });
    }

    it("an agent's checkout of such a cart names the plan in its line's title, in both releases", async () => {
      const shopper = await cartWithPlanAndNote();
      const [older, newer] = UCP_RELEASES;
      const created = await callAs(older, 'create_checkout', { checkout: { cart_id: shopper.token } });
      const read = await callAs(newer, 'get_checkout', { id: created.id });
      for (const checkout of [created, read]) {
        const titles = checkout.line_items.map((line: { item: { title: string; price: number } }) => [line.item.title, line.item.price]).sort();
        assert.equal(titles.length, 2);
        assert.deepEqual(titles[0], ['Decaf Espresso Capsules', 690], 'the one-time line: its name alone');
        assert.match(titles[1][0], /^Espresso Capsules - .+ — Delivery every month \(every month, save 10%\)$/);
        assert.equal(titles[1][1], 585);
      }
      // Neither release's checkout has a member for a cart's note or attributes: the store adds none.
      assert.equal(JSON.stringify(read).includes('neighbour'), false);
    });

    it('text stored before the fields refused it stays inert on the order page, in the mails and on the terminal', async () => {
      // As a row stored before the rules: a direction override, a line that reads as the store's own, a clipboard escape.
      const note = 'Ring twice\u202e evil\nShipped in full.\u001b]52;c;cm0K\u0007';
      const attributes = { 'Gift\u2066 wrap\u2069': 'yes\u202e oN', 'Line\nbreak': 'one\ntwo' };
      await t.store.db.query('update orders set note = $1, attributes = $2 where id = $3', [note, JSON.stringify(attributes), order.id]);
      const stored = (await readOrder(t.store.db, order.id))!;
      assert.equal(stored.note, note);

      const page = (await t.app.inject({ method: 'GET', url: `/orders/${order.id}` })).body;
      assert.doesNotMatch(page, DIRECTION);
      assert.ok(page.includes('<bdi>Ring twice evil</bdi><br><bdi>Shipped in full. ]52;c;cm0K</bdi>'), 'each line isolated, the controls gone');

      const shop = { storeName: 'Storefront', contactEmail: 'help@store.test', address: [], baseUrl: 'http://store.test', merchantEmail: MERCHANT };
      const mails = orderMails({ type: 'placed', order: stored }, shop);
      assert.equal(mails.length, 2);
      for (const mail of mails) {
        for (const part of [mail.subject, mail.text, mail.html]) assert.doesNotMatch(part, STEERING, `${mail.to}: ${part.slice(0, 200)}`);
        assert.match(mail.text, /\nNote\n {2}Ring twice evil\n {2}Shipped in full\. ]52;c;cm0K\n/, 'a stored line break starts an indented line of the note');
        assert.ok(mail.text.includes('\n  Gift wrap : yes oN\n') && mail.text.includes('\n  Line break: one two\n'), 'each attribute on one line');
      }

      const shown = await runCommand(['orders', 'show', order.id], {}, t.store.db);
      assert.equal(shown.code, 0, shown.stderr);
      assert.doesNotMatch(shown.stdout, STEERING);
      assert.ok(shown.stdout.includes('Ring twice\\u202e evil\\u000aShipped in full.\\u001b]52;c;cm0K\\u0007'), shown.stdout);
      assert.doesNotMatch(shown.stdout, /^Shipped in full\.$/m);
      assert.ok(shown.stdout.includes('Gift\\u2066 wrap\\u2069: yes\\u202e oN'));
      assert.ok(shown.stdout.includes('Line\\u000abreak: one\\u000atwo'));
    });
  });
}
