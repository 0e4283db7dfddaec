/**
 * The hourly code limit counts a mailbox, not an address (issue 35, finding 6): after the limit, `a+1@…`, `A+2@…`
 * and so on reach the same inbox and get no more codes. Through the buyer-proof service with a real SMTP server on
 * loopback, both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CODES_PER_EMAIL_PER_HOUR } from '../../src/checkout/buyer-proof.js';
import { readApproval } from '../../src/checkout/checkout-store.js';
import { loadConfig } from '../../src/config.js';
import { SHIP_TO } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`one mailbox's code limit (${backend.name})`, () => {
    let smtp: TestSmtpServer;
    let t: TestStore;
    before(async () => {
      smtp = await startSmtpServer();
      const config = loadConfig({ BASE_URL: 'http://localhost:3000', DATA_DIR: 'unused', APPROVAL_PROOF: 'code' });
      t = await startTestStore(backend, { config: { ...config, rateLimit: false, mail: { ...config.mail, smtpUrl: smtp.url } } });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    /** Asks for a code for a new checkout of `email`, as the approval page does. */
    async function askCode(email: string) {
      const { checkouts, db, buyerProof } = t.store;
      const variantId = t.store.catalog.snapshot.products[0]!.variants[0]!.id;
      const created = await checkouts.create(db, { lines: [{ variantId, quantity: 1 }], buyer: { email }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      const approval = await readApproval(db, asked.approval!.token);
      return buyerProof.sendCode(db, approval!, created.view.record.buyer.email!, { total: 100, items: 1 });
    }

    it(`${CODES_PER_EMAIL_PER_HOUR} +tag variants of one address share its limit; the next variant, in any case, is refused`, async () => {
      for (let i = 1; i <= CODES_PER_EMAIL_PER_HOUR; i++) assert.equal((await askCode(`shared+${i}@example.com`)).kind, 'sent', `code ${i}`);
      const mailed = smtp.messages.length;
      for (const email of ['shared@example.com', 'Shared+11@Example.COM', 'SHARED+x@example.com']) {
        const answer = await askCode(email);
        assert.equal(answer.kind, 'limited', email);
      }
      assert.equal(smtp.messages.length, mailed, 'nothing more was mailed');
      assert.equal((await askCode('other+1@example.com')).kind, 'sent', 'another mailbox has its own limit');
    });
  });
}
