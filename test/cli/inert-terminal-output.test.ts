/**
 * What the CLI prints cannot steer the merchant's terminal, on both backends: an order stored before the fields refused
 * such text (written here straight into its row, past every door) whose buyer name clears the screen, whose street
 * sets the clipboard (OSC 52), whose address lines are reordered by a bidirectional override or start a line of their
 * own, is printed by `orders show` and `orders` with each of those characters as its escape (`\u001b`, `\u202e`),
 * and so is what the merchant typed when an error quotes it.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { Order } from '../../src/orders/orders.js';
import { openStore } from '../../src/store.js';
import { cliScratch, cliTargets, runCommand } from '../helpers/cli.js';
import { placeOrder } from '../helpers/orders.js';

const { scratch, databases } = cliScratch('sf-inert');

const CLEAR_SCREEN = '\u001b[2J\u001b[HAll orders paid';
const SET_CLIPBOARD = '1 Main St\u001b]52;c;cm0gLXJmIH4K\u0007';
const REVERSED = '\u202eteertS kaO 21';
const ISOLATED = 'Apt 1\u2066 5$ eef gnildnah\u2069';
const OWN_LINE = 'Suite 9\nShipped in full.';
const HIDDEN_EMAIL = 'ann\u200b@example.com\u009b2J';

/** A character that steers a terminal (C0 but the line break, DEL, C1), reorders text or hides. */
const STEERING = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u202a-\u202e\u2066-\u2069]/u;

for (const target of cliTargets(scratch, 'sf_inert', databases)) {
  describe(`what the CLI prints is inert on a terminal (${target.name})`, () => {
    let env: Record<string, string>;
    let order: Order;

    before(async () => {
      env = await target.env();
      const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
      try {
        const variantId = store.catalog.snapshot.productByHandle('espresso-capsules')!.variants[0]!.id;
        order = await placeOrder(store, [{ variantId, quantity: 2 }], { email: 'ann@example.com' });
        // As a row stored before the fields refused such text: written straight into the table, past every door.
        const address = { firstName: CLEAR_SCREEN, streetAddress: SET_CLIPBOARD, extendedAddress: OWN_LINE, locality: REVERSED, phoneNumber: ISOLATED };
        await store.db.query(
          `update orders set buyer_email = $1, buyer = buyer || $2::jsonb, shipping_address = shipping_address || $3::jsonb where id = $4`,
          [HIDDEN_EMAIL, JSON.stringify({ firstName: CLEAR_SCREEN }), JSON.stringify(address), order.id],
        );
        await store.db.query(`update order_lines set title = $1 where order_id = $2`, [CLEAR_SCREEN, order.id]);
      } finally {
        await store.close();
      }
    });

    it('`orders show` prints stored escape sequences, bidi controls and line breaks as escapes', async () => {
      const shown = await runCommand(['orders', 'show', order.id], env);
      assert.equal(shown.code, 0, shown.stderr);
      assert.doesNotMatch(shown.stdout, STEERING);
      assert.match(shown.stdout, /^Buyer\s+ann\\u200b@example\.com\\u009b2J \(\\u001b\[2J\\u001b\[HAll orders paid\)$/m);
      assert.ok(shown.stdout.includes('1 Main St\\u001b]52;c;cm0gLXJmIH4K\\u0007'), shown.stdout);
      assert.match(shown.stdout, /^\s+\\u202eteertS kaO 21, IL 62701$/m);
      assert.match(shown.stdout, /^\s+Apt 1\\u2066 5\$ eef gnildnah\\u2069$/m);
      // A stored line break is shown as one: it cannot print a line that reads as the CLI's own.
      assert.ok(shown.stdout.includes('Suite 9\\u000aShipped in full.'), shown.stdout);
      assert.doesNotMatch(shown.stdout, /^Shipped in full\.$/m);
      assert.match(shown.stdout, /^2 units still to ship\.$/m);
      // The line's title is laid out at the width it prints: the line total still ends the row.
      assert.match(shown.stdout, /^ {2}li_1\s+\\u001b\[2J\\u001b\[HAll orders paid\s+ESP-RIS-10\s+2\s+0\s+0\s+-\s+\S+\s+\S+$/m);
    });

    it('`orders` lists a stored email with its hidden characters escaped', async () => {
      const listed = await runCommand(['orders'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.doesNotMatch(listed.stdout, STEERING);
      assert.match(listed.stdout, /\sann\\u200b@example\.com\\u009b2J\s/);
    });

    it('an error quoting what the merchant typed prints it inert, on one line', async () => {
      const unknown = await runCommand(['orders', 'show', '\u001b[2J\u202e1001\n#1002'], env);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr, 'storefront: no order has the id or number "\\u001b[2J\\u202e1001\\n#1002"\n');
      const unreadable = await runCommand(['import', 'catalog\u001b]52;c;eA==\u0007.json'], env);
      assert.equal(unreadable.code, 1);
      assert.equal(unreadable.stderr, 'storefront: cannot read catalog\\u001b]52;c;eA==\\u0007.json\n');
      const option = await runCommand(['orders', 'cancel', order.id, '--\u001b[31mreason\nx', 'y'], env);
      assert.equal(option.code, 1);
      assert.match(option.stderr, /^storefront: unknown option --\\u001b\[31mreason\\u000ax\nusage: storefront orders cancel ID/);
      assert.doesNotMatch(unknown.stderr + unreadable.stderr + option.stderr, STEERING);
    });
  });
}
