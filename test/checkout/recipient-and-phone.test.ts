/**
 * A shipping address needs a recipient; a phone must be a phone (issue 36, build item 6). On both doors and the
 * browser form: a checkout whose address names nobody (and whose buyer gives no name to fall back on) is not ready
 * and says so beside the field; a buyer's or an address's phone that is not a phone number is refused naming the
 * field, nothing stored; one written as Americans write it is stored in E.164. Both backends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { CHECKOUT_FORM, FORM_POST, shopperWithCart as shopper } from '../helpers/orders.js';
import { variantId, type Shopper } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta, callTool, startListeningStore, type ListeningStore } from '../ucp/mcp-harness.js';

after(dropTestDatabases);

/** An address with no name, as UCP's own checkout examples give it. */
const PLACE = { street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const DESTINATION = '$.fulfillment.methods[0].destinations[0]';
const NOT_PHONES = ['abc', '123', '+1 415 555 010'];

for (const backend of backends) {
  describe(`a recipient and a phone (${backend.name})`, () => {
    let t: ListeningStore;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles(['2026-08-25']);
      t = await startListeningStore(backend);
    });
    after(async () => {
      await t.close();
      await profiles.close();
    });

    const meta = () => agentMeta(profiles.profileUrl('2026-08-25'));
    const lines = () => [{ item: { id: String(variantId(t, 'ESP-RIS-10')) }, quantity: 1 }];
    const shipTo = (address: object) => ({ methods: [{ type: 'shipping', destinations: [address], groups: [{ selected_option_id: 'standard' }] }] });
    const create = (checkout: Record<string, unknown>) => callTool(t.mcpUrl, 'create_checkout', { checkout: { line_items: lines(), ...checkout }, meta: meta() });
    const update = (id: string, checkout: Record<string, unknown>) => callTool(t.mcpUrl, 'update_checkout', { id, checkout: { line_items: lines(), ...checkout }, meta: meta() });
    const checkoutCount = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from checkouts'))[0]!.n;
    const stored = async (id: string) =>
      (
        await t.store.db.query<{ buyer_phone: string | null; destination_phone: string | null; version: number }>(
          `select buyer->>'phoneNumber' as buyer_phone, destination->>'phoneNumber' as destination_phone, version from checkouts where id = $1`,
          [id],
        )
      )[0]!;
    const result = (answer: { body: any; text: string }) => {
      assert.ok(answer.body?.result?.structuredContent, answer.text.slice(0, 600));
      return answer.body.result.structuredContent;
    };

    describe('the commerce door', () => {
      it('an address naming nobody, and a buyer naming nobody: incomplete, with the missing name at first_name; complete_checkout does not escalate', async () => {
        const created = result(await create({ buyer: { email: 'ann@example.com' }, fulfillment: shipTo(PLACE) }));
        assert.equal(created.status, 'incomplete');
        assert.deepEqual(
          created.messages.map((m: any) => [m.type, m.code, m.severity, m.path]),
          [['error', 'missing', 'recoverable', `${DESTINATION}.first_name`]],
        );
        assert.match(created.messages[0].content, /recipient's name.*first_name.*last_name/);
        const asked = result(await callTool(t.mcpUrl, 'complete_checkout', { id: created.id, meta: { ...meta(), 'idempotency-key': randomUUID() } }));
        assert.notEqual(asked.status, 'requires_escalation');
        assert.equal(asked.continue_url.includes('/checkout/approve/'), false, 'no approval link');

        const named = result(await update(created.id, { buyer: { email: 'ann@example.com' }, fulfillment: shipTo({ ...PLACE, last_name: 'Lee' }) }));
        assert.equal(named.status, 'ready_for_complete', JSON.stringify(named.messages));
      });

      it("an address naming nobody ships to the buyer's name; an address's own name wins", async () => {
        const created = result(await create({ buyer: { email: 'ann@example.com', first_name: 'Ann', last_name: 'Lee' }, fulfillment: shipTo(PLACE) }));
        assert.equal(created.status, 'ready_for_complete', JSON.stringify(created.messages));
        assert.deepEqual((await t.store.checkouts.get(t.store.db, created.id))!.view.address?.firstName, 'Ann');
        const gift = result(await update(created.id, { buyer: { email: 'ann@example.com', first_name: 'Ann', last_name: 'Lee' }, fulfillment: shipTo({ ...PLACE, first_name: 'Bo' }) }));
        assert.equal(gift.status, 'ready_for_complete');
        const address = (await t.store.checkouts.get(t.store.db, created.id))!.view.address!;
        assert.deepEqual([address.firstName, address.lastName], ['Bo', undefined]);
      });

      it('a buyer phone or an address phone that is not a phone answers -32602 naming it, on create and update; nothing is stored', async () => {
        const kept = result(await create({ buyer: { email: 'ann@example.com', first_name: 'Ann' }, fulfillment: shipTo(PLACE) }));
        const version = (await stored(kept.id)).version;
        for (const phone of NOT_PHONES) {
          const before = await checkoutCount();
          const cases: [Promise<{ body: any; text: string }>, string][] = [
            [create({ buyer: { email: 'ann@example.com', phone_number: phone } }), '$.checkout.buyer.phone_number'],
            [create({ fulfillment: shipTo({ ...PLACE, phone_number: phone }) }), `$.checkout${DESTINATION.slice(1)}.phone_number`],
            [update(kept.id, { buyer: { email: 'ann@example.com', phone_number: phone } }), '$.checkout.buyer.phone_number'],
            [update(kept.id, { fulfillment: shipTo({ ...PLACE, first_name: 'Ann', phone_number: phone }) }), `$.checkout${DESTINATION.slice(1)}.phone_number`],
          ];
          for (const [call, path] of cases) {
            const answer = await call;
            assert.equal(answer.body.error?.code, -32602, `${phone}: ${answer.text.slice(0, 400)}`);
            assert.equal(answer.body.error.data.path, path, phone);
            assert.match(answer.body.error.message + JSON.stringify(answer.body.error.data), /is not a phone number/);
          }
          assert.equal(await checkoutCount(), before, `${phone}: no checkout made`);
          assert.equal((await stored(kept.id)).version, version, `${phone}: the checkout is unchanged`);
        }
      });

      it('a phone written "(415) 555-0100" is stored and answered as +14155550100', async () => {
        const created = result(
          await create({ buyer: { email: 'ann@example.com', phone_number: '(415) 555-0100' }, fulfillment: shipTo({ ...PLACE, first_name: 'Ann', phone_number: ' 415.555.0100 ' }) }),
        );
        assert.equal(created.buyer.phone_number, '+14155550100');
        assert.equal(created.fulfillment.methods[0].destinations[0].phone_number, '+14155550100');
        const row = await stored(created.id);
        assert.deepEqual([row.buyer_phone, row.destination_phone], ['+14155550100', '+14155550100']);
        const updated = result(await update(created.id, { buyer: { email: 'ann@example.com', phone_number: '+1 (212) 555-0199' }, fulfillment: shipTo({ ...PLACE, first_name: 'Ann' }) }));
        assert.equal(updated.buyer.phone_number, '+12125550199');
      });

      it('a phone stored before the phone rule that is not one: each is named as invalid, and the checkout cannot go to the buyer', async () => {
        const created = result(await create({ buyer: { email: 'ann@example.com', first_name: 'Ann' }, fulfillment: shipTo(PLACE) }));
        assert.equal(created.status, 'ready_for_complete');
        await t.store.db.query(
          `update checkouts set buyer = jsonb_set(buyer, '{phoneNumber}', '"abc"'), destination = jsonb_set(destination, '{phoneNumber}', '"123"') where id = $1`,
          [created.id],
        );
        const read = result(await callTool(t.mcpUrl, 'get_checkout', { id: created.id, meta: meta() }));
        assert.deepEqual(
          read.messages.map((m: any) => [m.code, m.severity, m.path]),
          [
            ['invalid', 'recoverable', '$.buyer.phone_number'],
            ['invalid', 'recoverable', `${DESTINATION}.phone_number`],
          ],
        );
        const asked = result(await callTool(t.mcpUrl, 'complete_checkout', { id: created.id, meta: { ...meta(), 'idempotency-key': randomUUID() } }));
        assert.notEqual(asked.status, 'requires_escalation');
        const page = await t.app.inject({ method: 'GET', url: `/checkouts/${created.id}`, headers: { host: 'store.test', accept: 'text/html' } });
        assert.match(page.body, /The phone number is not valid: write it with its area code, such as \(415\) 555-0100\./);
      });
    });

    describe('the browser checkout form', () => {
      const form = (fields: Record<string, string>) => new URLSearchParams({ ...CHECKOUT_FORM, ...fields }).toString();
      const checkoutOf = async (buyer: Shopper) =>
        (await t.store.db.query<{ id: string; status: string }>('select id, status from checkouts where cart_token = $1', [buyer.token]))[0];

      it('no first or last name: the form again, the problem beside the first name, no approval', async () => {
        const buyer = await shopper(t);
        const page = await buyer.send('POST', '/checkout', { form: form({ first_name: '', last_name: ' ' }), headers: FORM_POST });
        assert.equal(page.status, 200, page.raw.slice(0, 400));
        assert.match(page.raw, /<a href="#checkout-first-name">The shipping address needs the name of the person it goes to\.<\/a>/);
        assert.match(page.raw, /<p class="field-error" id="checkout-first-name-error">.*needs the name of the person it goes to/);
        assert.match(page.raw, /id="checkout-first-name"[^>]* aria-invalid="true" aria-describedby="checkout-first-name-error"/);
        assert.equal((await checkoutOf(buyer))?.status, 'incomplete');
        const named = await buyer.send('POST', '/checkout', { form: form({ first_name: '', last_name: 'Lima' }), headers: FORM_POST });
        assert.equal(named.status, 303, named.raw.slice(0, 400));
        assert.match(String(named.headers.location), /^\/checkout\/approve\//);
      });

      it('a phone that is not a phone: 422 beside the phone field, nothing stored', async () => {
        for (const phone of NOT_PHONES) {
          const buyer = await shopper(t);
          const before = await checkoutCount();
          const page = await buyer.send('POST', '/checkout', { form: form({ phone }), headers: FORM_POST });
          assert.equal(page.status, 422, `${phone}: ${page.raw.slice(0, 400)}`);
          assert.match(page.raw, /<a href="#checkout-phone">This is not a phone number: /, phone);
          assert.match(page.raw, /id="checkout-phone-error"/, phone);
          assert.equal(await checkoutCount(), before, `${phone}: nothing stored`);
        }
      });

      it('a phone written "(415) 555-0100" goes on to the approval page, stored as +14155550100', async () => {
        const buyer = await shopper(t);
        const page = await buyer.send('POST', '/checkout', { form: form({ phone: '(415) 555-0100' }), headers: FORM_POST });
        assert.equal(page.status, 303, page.raw.slice(0, 400));
        assert.match(String(page.headers.location), /^\/checkout\/approve\//);
        assert.equal((await stored((await checkoutOf(buyer))!.id)).destination_phone, '+14155550100');
      });
    });
  });
}
