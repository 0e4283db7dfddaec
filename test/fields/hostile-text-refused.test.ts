/**
 * Text that could rewrite a terminal or reorder a page (issue 35, findings 1, 2 and 4) is refused where it enters,
 * at both doors, naming the field, and nothing is stored: create_checkout answers -32602 with the argument's path,
 * the browser checkout form answers 422 with the problem beside its field. An email the mailer could never send to
 * is refused the same way; a normal one is still taken. Both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { CHECKOUT_FORM, FORM_POST, shopperWithCart as shopper } from '../helpers/orders.js';
import { variantId } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta, callTool, startListeningStore, type ListeningStore } from '../ucp/mcp-harness.js';

after(dropTestDatabases);

const ESCAPES = { first_name: '\u001b[2J\u001b[HAll orders paid', street_address: '1 Main St\u001b]52;c;cm0gLXJmIH4K\u0007' };
const BIDI = ['\u202eteertS kaO 21', 'Apt 1\u202e 5$ eef gnildnah', 'Oak \u2066St\u2069', 'Main\u200bSt'];
const UNMAILABLE = ['a..b@example.com', 'a.@example.com', '"a"@example.com', 'a@b_c.com', 'a,b@example.com', '.a@example.com', 'a@1.2.3.4', 'a b@example.com'];
const ADDRESS = { street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };

for (const backend of backends) {
  describe(`hostile text is refused at the border (${backend.name})`, () => {
    let t: ListeningStore;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      t = await startListeningStore(backend);
    });
    after(async () => {
      await t.close();
      await profiles.close();
    });

    const checkouts = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from checkouts'))[0]!.n;
    const create = (checkout: Record<string, unknown>) =>
      callTool(t.mcpUrl, 'create_checkout', {
        checkout: { line_items: [{ item: { id: String(variantId(t, 'ESP-RIS-10')) }, quantity: 1 }], ...checkout },
        meta: agentMeta(profiles.profileUrl('2026-04-08')),
      });
    const shipTo = (address: object) => ({ methods: [{ type: 'shipping', destinations: [address], groups: [{ selected_option_id: 'standard' }] }] });

    /** The -32602 answer's path, after checking that nothing was stored. */
    async function refusedPath(checkout: Record<string, unknown>): Promise<string> {
      const before = await checkouts();
      const answer = await create(checkout);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.error?.code, -32602, answer.text);
      assert.equal(await checkouts(), before, 'nothing stored');
      assert.doesNotMatch(answer.text, /\u001b|\u202e/, 'the refusal does not echo the text');
      return answer.body.error.data.path;
    }

    it('create_checkout: terminal escapes in a name or a street answer -32602 naming the argument', async () => {
      assert.equal(await refusedPath({ buyer: { email: 'ann@example.com', first_name: ESCAPES.first_name } }), '$.checkout.buyer.first_name');
      assert.equal(await refusedPath({ fulfillment: shipTo({ ...ADDRESS, street_address: ESCAPES.street_address }) }), '$.checkout.fulfillment.methods[0].destinations[0].street_address');
    });

    it('create_checkout: bidirectional overrides, isolates and invisible characters answer -32602', async () => {
      for (const street of BIDI) {
        assert.equal(await refusedPath({ fulfillment: shipTo({ ...ADDRESS, street_address: street }) }), '$.checkout.fulfillment.methods[0].destinations[0].street_address', JSON.stringify(street));
      }
      assert.equal(await refusedPath({ fulfillment: shipTo({ ...ADDRESS, extended_address: BIDI[1] }) }), '$.checkout.fulfillment.methods[0].destinations[0].extended_address');
    });

    it('create_checkout: an email the mailer cannot send to answers -32602 at buyer.email; a usual one is taken', async () => {
      for (const email of UNMAILABLE) assert.equal(await refusedPath({ buyer: { email } }), '$.checkout.buyer.email', email);
      const taken = await create({ buyer: { email: ' First.Last+tag@Sub.Example.CO.uk ' }, fulfillment: shipTo(ADDRESS) });
      assert.equal(taken.body.result?.structuredContent?.buyer?.email, 'First.Last+tag@sub.example.co.uk', taken.text);
    });

    it('a name too long answers -32602; it is never cut', async () => {
      assert.equal(await refusedPath({ buyer: { email: 'ann@example.com', last_name: 'x'.repeat(101) } }), '$.checkout.buyer.last_name');
      const kept = await create({ buyer: { email: 'ann@example.com', last_name: 'x'.repeat(100) } });
      assert.equal(kept.body.result?.structuredContent?.buyer?.last_name, 'x'.repeat(100), kept.text);
    });

    describe('the browser checkout form', () => {
      const form = (fields: Record<string, string>) => new URLSearchParams({ ...CHECKOUT_FORM, ...fields }).toString();
      async function refusedField(fields: Record<string, string>): Promise<string> {
        const buyer = await shopper(t);
        const before = await checkouts();
        const page = await buyer.send('POST', '/checkout', { form: form(fields), headers: FORM_POST });
        assert.equal(page.status, 422, page.raw.slice(0, 400));
        assert.equal(await checkouts(), before, 'nothing stored');
        const named = /<a href="#checkout-([a-z-]+)">/.exec(page.raw);
        assert.ok(named, 'the problem names its field');
        return named[1]!;
      }

      it('terminal escapes, bidi overrides and invisible characters: 422 beside the field', async () => {
        assert.equal(await refusedField({ first_name: ESCAPES.first_name }), 'first-name');
        assert.equal(await refusedField({ street_address: ESCAPES.street_address }), 'street-address');
        for (const street of BIDI) assert.equal(await refusedField({ street_address: street }), 'street-address', JSON.stringify(street));
        assert.equal(await refusedField({ city: 'Spring\u0085field' }), 'city');
      });

      it('every email the mailer cannot send to: 422 beside email; a usual one goes on to the approval page', async () => {
        for (const email of UNMAILABLE) assert.equal(await refusedField({ email }), 'email', email);
        const buyer = await shopper(t);
        const page = await buyer.send('POST', '/checkout', { form: form({ email: 'first.last+tag@sub.example.co.uk' }), headers: FORM_POST });
        assert.equal(page.status, 303, page.raw.slice(0, 400));
        assert.match(String(page.headers.location), /^\/checkout\/approve\//);
      });
    });
  });
}
