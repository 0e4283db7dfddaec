/**
 * What a buyer or an agent typed is shown inside <bdi> on the approval and order pages (issue 35, finding 2 and
 * build item 2): a right-to-left override stored before the input rules refused it ("\u202eteertS kaO 21", read as
 * "12 Oak Street") cannot reorder the page's text around it, and is shown in the order it is stored, the override
 * dropped ("teertS kaO 21", what the label prints). The text is written to the database directly, as a row
 * from before those rules, through the real app on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { escapeHtml } from '../../src/markup/html.js';
import { ANA_AT_MARKET_ST } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

/** Stored as typed before the doors refused direction characters. */
const STORED = {
  firstName: '\u2067Ana',
  streetAddress: '\u202eteertS kaO 21',
  extendedAddress: 'Apt 1\u202e 5$ eef gnildnah',
  locality: 'San Francisco\u202b',
};
const PROPERTY = ['Note\u202e', 'For \u202emaS'] as const;
const DIRECTION_CHARACTER = /[\u202a-\u202e\u2066-\u2069]/;

/** Every stored text is on the page in a <bdi> of its own, in its stored order, and no direction character is on it. */
function assertIsolated(page: string, where: string): void {
  for (const text of [...Object.values(STORED), ...PROPERTY]) {
    const asStored = text.replace(new RegExp(DIRECTION_CHARACTER.source, 'g'), '');
    assert.ok(page.includes(`<bdi>${escapeHtml(asStored)}</bdi>`), `${where}: ${JSON.stringify(asStored)} in a <bdi> of its own`);
  }
  assert.doesNotMatch(page, DIRECTION_CHARACTER, `${where}: no direction character on the page`);
}

for (const backend of backends) {
  describe(`text a buyer or an agent typed, shown on a page (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('the approval page and the order page show every typed address part and line property inside <bdi>', async () => {
      const { checkouts, db } = t.store;
      const variantId = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === 'ESP-DEC-10')!.id;
      const created = await checkouts.create(
        db,
        { lines: [{ variantId, quantity: 1, properties: { Note: 'For Sam' } }], buyer: { email: 'ana@example.com' }, destination: ANA_AT_MARKET_ST, shippingOption: 'standard' },
        'agent',
        'agent',
      );
      const id = created.view.record.id;
      await db.query(`update checkouts set destination = destination || $2::jsonb, lines = jsonb_set(lines, '{0,properties}', $3::jsonb) where id = $1`, [
        id,
        JSON.stringify(STORED),
        JSON.stringify({ [PROPERTY[0]]: PROPERTY[1] }),
      ]);
      const asked = await checkouts.requestCompletion(db, id, 'agent');
      assert.ok(asked.approval, `an approval link (status ${asked.view.record.status})`);

      const approvalPage = await t.app.inject({ url: `/checkout/approve/${asked.approval.token}` });
      assert.equal(approvalPage.statusCode, 200, approvalPage.body);
      assert.match(approvalPage.body, /<p class="summary-ship">Ship to <bdi>/);
      assertIsolated(approvalPage.body, 'the approval page');

      const placed = await checkouts.approve(db, asked.approval.token, asked.approval.formSecret, asked.approval.digest, { kind: 'none' });
      assert.equal(placed.kind, 'placed', placed.kind === 'refused' ? placed.reason : placed.kind);
      if (placed.kind !== 'placed') return;
      const orderPage = await t.app.inject({ url: `/orders/${placed.order.id}` });
      assert.equal(orderPage.statusCode, 200, orderPage.body);
      assertIsolated(orderPage.body, 'the order page');
    });
  });
}
