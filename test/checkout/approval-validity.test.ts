/**
 * An approval link's validity is decided once (src/checkout/approval-validity.ts) and reads the same on every page
 * the link leads to: opening it, approving from a page opened before, and declining from that page. Each door meets
 * the verdict on a link of its own, as it stands (an expired link not yet settled by a read, say), on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { APPROVAL_SENTENCES, approvalSentence, approvalVerdict } from '../../src/checkout/approval-validity.js';
import type { CheckoutRecord } from '../../src/checkout/checkout.js';
import type { ApprovalRecord } from '../../src/checkout/checkout-store.js';
import { ANA_AT_MARKET_ST } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const SKU = 'ESP-LUN-10';
const DOORS = ['view', 'approve', 'decline'] as const;
type Door = (typeof DOORS)[number];

interface Page {
  status: number;
  html: string;
  location: string | undefined;
}

/** What the buyer reads on a page: its problem (why the link no longer works, or why it was not found), and what changed. */
function reading(page: Page): { status: number; problem: string | undefined; changes: string[] } {
  const problem = /<p class="problem">([^<]*)<\/p>/.exec(page.html)?.[1];
  const list = /<h2>What changed<\/h2>\s*<ul>(.*?)<\/ul>/s.exec(page.html)?.[1] ?? '';
  return { status: page.status, problem, changes: [...list.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]!) };
}

describe('the verdict, without a database', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  const approval = { formSecret: 'secret', usedAt: null, voidedAt: null, voidReason: null, expiresAt: new Date(now.getTime() + 60_000) } as ApprovalRecord;
  const checkout = { status: 'requires_escalation', orderId: null } as CheckoutRecord;

  it('is decided in one order: unknown, wrong form, used, voided, expired, closed, valid', () => {
    assert.deepEqual(approvalVerdict(undefined, checkout, now), { code: 'unknown' });
    assert.deepEqual(approvalVerdict(approval, undefined, now), { code: 'unknown' });
    const used = { ...approval, usedAt: now, voidedAt: now, expiresAt: now };
    assert.deepEqual(approvalVerdict(used, { ...checkout, orderId: 'ord_1' }, now, 'other'), { code: 'wrong_form' });
    assert.deepEqual(approvalVerdict(used, { ...checkout, orderId: 'ord_1', status: 'completed' }, now, 'secret'), { code: 'used', orderId: 'ord_1' });
    assert.deepEqual(approvalVerdict({ ...approval, voidedAt: now, expiresAt: now }, checkout, now), { code: 'voided', reason: null });
    assert.deepEqual(approvalVerdict({ ...approval, expiresAt: now }, { ...checkout, status: 'canceled' }, now), { code: 'expired' });
    assert.deepEqual(approvalVerdict(approval, { ...checkout, status: 'canceled' }, now), { code: 'closed', status: 'canceled' });
    assert.deepEqual(approvalVerdict(approval, checkout, now, 'secret'), { code: 'valid', approval, checkout });
    assert.equal(approvalVerdict(approval, checkout, now).code, 'valid', 'a caller with no form (a webhook) is not asked for one');
  });

  it('reads each verdict as one sentence; a voided link reads as the reason written when it was voided', () => {
    assert.equal(approvalSentence({ code: 'expired' }), 'This approval link has expired.');
    assert.equal(approvalSentence({ code: 'voided', reason: APPROVAL_SENTENCES.superseded }), APPROVAL_SENTENCES.superseded);
    assert.equal(approvalSentence({ code: 'voided', reason: null }), APPROVAL_SENTENCES.voided);
    assert.equal(approvalSentence({ code: 'closed', status: 'ready_for_complete' }), 'This checkout is ready for complete.');
  });
});

for (const backend of backends) {
  describe(`an approval link's verdict reads the same when opened, approved and declined (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const variantId = () => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === SKU)!.id;
    const lines = (quantity: number) => [{ variantId: variantId(), quantity }];
    const count = async (sql: string, params: unknown[]) => (await t.store.db.query<{ n: number }>(sql, params))[0]!.n;

    /** An agent's checkout waiting for the buyer, and the approval page the buyer opened (its cookie and form). */
    async function openedLink() {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(db, { lines: lines(1), buyer: { email: 'ana@example.com' }, destination: ANA_AT_MARKET_ST, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      const token = asked.approval!.token;
      const page = await t.app.inject({ method: 'GET', url: `/checkout/approve/${token}` });
      assert.equal(page.statusCode, 200, page.body);
      const formToken = /<input type="hidden" name="form_token" value="([^"]*)">/.exec(page.body)![1]!;
      const digest = /<input type="hidden" name="digest" value="([^"]*)">/.exec(page.body)![1]!;
      return { id: created.view.record.id, token, formToken, digest };
    }

    async function post(token: string, action: string, formToken: string, digest: string): Promise<Page> {
      const response = await t.app.inject({
        method: 'POST',
        url: `/checkout/approve/${token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `approval_form=${formToken}`, origin: 'http://store.test', 'sec-fetch-site': 'same-origin' },
        payload: new URLSearchParams({ action, form_token: formToken, digest }).toString(),
      });
      return { status: response.statusCode, html: response.body, location: response.headers.location };
    }

    /** What a door shows for a link: the page opened again, the approve button, or the decline confirmed, from the page opened before. */
    async function through(door: Door, link: { token: string; formToken: string; digest: string }): Promise<Page> {
      if (door === 'view') {
        const response = await t.app.inject({ method: 'GET', url: `/checkout/approve/${link.token}` });
        return { status: response.statusCode, html: response.body, location: undefined };
      }
      return post(link.token, door === 'approve' ? 'approve' : 'decline_confirmed', link.formToken, link.digest);
    }

    /** Each door on a link of its own, brought to the verdict by `make`: what the buyer reads, per door. */
    async function readings(make: (link: Awaited<ReturnType<typeof openedLink>>) => Promise<unknown>, doors: readonly Door[] = DOORS) {
      const read: Partial<Record<Door, ReturnType<typeof reading>>> = {};
      for (const door of doors) {
        const link = await openedLink();
        await make(link);
        const orders = await count('select count(*)::int as n from orders where checkout_id = $1', [link.id]);
        read[door] = reading(await through(door, link));
        assert.equal(await count('select count(*)::int as n from orders where checkout_id = $1', [link.id]), orders, `${door}: no order placed`);
      }
      return read;
    }

    /** Every door reads the same: its status, its problem (which starts with the verdict's sentence) and what changed. */
    function assertReadsTheSame(read: Partial<Record<Door, ReturnType<typeof reading>>>, sentence: string, status = 409) {
      const [first, ...rest] = Object.entries(read);
      assert.equal(first![1].status, status, first![0]);
      assert.equal(first![1].problem?.slice(0, sentence.length), sentence, first![0]);
      for (const [door, seen] of rest) assert.deepEqual(seen, first![1], `${door} reads as ${first![0]} does`);
    }

    it('expired: "This approval link has expired." on every page, whether a read settled the link first or not', async () => {
      const expire = (link: { token: string }) =>
        t.store.db.query('update checkout_approvals set expires_at = $1 where token = $2', [new Date(Date.now() - 60_000).toISOString(), link.token]);
      assertReadsTheSame(await readings(expire), APPROVAL_SENTENCES.expired);
    });

    it('voided by a newer link: the reason it was voided, on every page', async () => {
      const supersede = (link: { id: string }) => t.store.checkouts.requestCompletion(t.store.db, link.id, 'agent');
      assertReadsTheSame(await readings(supersede), APPROVAL_SENTENCES.superseded);
    });

    it('voided by a change: the reason and what changed, on every page', async () => {
      const change = (link: { id: string }) =>
        t.store.checkouts.update(t.store.db, link.id, { lines: lines(2), buyer: { email: 'ana@example.com' }, destination: ANA_AT_MARKET_ST, shippingOption: 'standard' }, 'agent');
      const read = await readings(change);
      assertReadsTheSame(read, APPROVAL_SENTENCES.changed);
      assert.ok(read.decline!.changes.length > 0, 'the decline page too says what changed');
    });

    it('closed (a checkout no longer waiting for the buyer, its link left as it was): the checkout\'s status, on every page', async () => {
      // No move of the checkout leaves a link like this (leaving the buyer's hands voids it): written directly.
      const close = (link: { id: string }) => t.store.db.query("update checkouts set status = 'canceled' where id = $1", [link.id]);
      assertReadsTheSame(await readings(close), 'This checkout is canceled.');
    });

    it('a wrong form: the same sentence for approve and decline (opening the link has no form), and the link still works', async () => {
      const tokens: string[] = [];
      const wrongForm = async (link: { token: string; formToken: string }) => {
        tokens.push(link.token);
        link.formToken = 'x'.repeat(link.formToken.length);
      };
      assertReadsTheSame(await readings(wrongForm, ['approve', 'decline']), APPROVAL_SENTENCES.wrong_form);
      for (const token of tokens) assert.equal((await t.app.inject({ method: 'GET', url: `/checkout/approve/${token}` })).statusCode, 200);
    });

    it('unknown: "This approval link is not valid." on every page (404)', async () => {
      const unknown = async (link: { token: string }) => {
        link.token = 'A'.repeat(43);
      };
      assertReadsTheSame(await readings(unknown), APPROVAL_SENTENCES.unknown, 404);
    });

    it('used: every page leads to the order it placed, and the decline page says it was already placed', async () => {
      for (const door of DOORS) {
        const link = await openedLink();
        const placed = await post(link.token, 'approve', link.formToken, link.digest);
        assert.equal(placed.status, 303);
        const page = await through(door, link);
        if (door === 'approve') assert.equal(page.location, placed.location, 'approving again answers the same order');
        else assert.ok(page.html.includes(`href="${placed.location}"`), `${door}: links the order`);
        if (door === 'decline') assert.match(page.html, new RegExp(APPROVAL_SENTENCES.used.slice(0, -1)));
        assert.equal(await count('select count(*)::int as n from orders where checkout_id = $1', [link.id]), 1, door);
      }
    });
  });
}
