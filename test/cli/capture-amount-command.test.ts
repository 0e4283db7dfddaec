/**
 * `storefront orders capture ID [AMOUNT]` on both backends: a manual payment arriving in two parts is captured in
 * two commands (AMOUNT read as refund's is, dollars and cents), the order reads partly then fully paid, a third
 * capture and a capture of more than is owed are refused with nothing changed, and an AMOUNT that is not one is a
 * usage error. With the embedded database held by a running store, the AMOUNT reaches it through its control socket:
 * the store here serves the socket in this process, and the command runs in a process of its own, as a merchant's.
 * With PAYMENT_PROVIDER=stripe the command asks Stripe (here a port nothing listens on): a card hold is never recorded
 * as captured without the provider.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { controlSocketPath, serveControlSocket } from '../../src/cli/control-socket.js';
import { storeCommands } from '../../src/cli/merchant-commands.js';
import { loadConfig } from '../../src/config.js';
import type { Order } from '../../src/orders/orders.js';
import { openStore, type Store } from '../../src/store.js';
import { freePort } from '../helpers/browser.js';
import { cliScratch, cliTargets, commandSession, runCommand, storefrontArgs, type CliResult } from '../helpers/cli.js';
import { placeOrder } from '../helpers/orders.js';

const { scratch, databases } = cliScratch('sf-capture-amount');

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const pattern = (text: string) => text.replace(/[$.()]/g, '\\$&');

async function placeOne(store: Store, email: string): Promise<Order> {
  const variant = (handle: string) => store.catalog.snapshot.productByHandle(handle)!.variants[0]!.id;
  return placeOrder(store, [{ variantId: variant('espresso-capsules'), quantity: 2 }], { email });
}

/** `storefront ...args` in a process of its own (not spawnSync: the store answering its socket runs in this process). */
function runProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, storefrontArgs(...args), { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

for (const target of cliTargets(scratch, 'sf_capture_amount', databases)) {
  describe(`orders capture ID AMOUNT (${target.name})`, () => {
    let env: Record<string, string>;
    let order: Order;
    const session = commandSession(() => env);
    after(() => session.close());
    const { run: cli } = session;
    /** A command that must succeed: its stdout. */
    const ok = (...args: string[]) => cli(...args).then(({ code, stdout, stderr }) => (code === 0 ? stdout : assert.fail(`${args.join(' ')}: ${stderr}`)));

    before(async () => {
      env = { ...(await target.env()), BASE_URL: 'http://shop.test' };
      const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
      try {
        order = await placeOne(store, 'parts@example.com');
      } finally {
        await store.close();
      }
    });

    it('captures a manual payment in two parts; a third capture and more than is owed are refused, nothing changed', async () => {
      const id = `#${order.number}`;
      const first = await ok('orders', 'capture', id, '10.00');
      assert.match(first, /^Captured\s+\$10\.00$/m);
      assert.match(first, /^Payment\s+captured$/m);
      const left = order.total - 1000;
      assert.match(first, /^Payment: captured \(manual\), \$10\.00 captured$/m);

      const tooMuch = await cli('orders', 'capture', id, dollars(left + 1).slice(1));
      assert.equal(tooMuch.code, 1);
      assert.equal(tooMuch.stdout, '');
      assert.match(tooMuch.stderr, new RegExp(`a capture of ${pattern(dollars(left + 1))} is more than order #${order.number} has to capture: ${pattern(dollars(left))}; nothing was changed\\n$`));
      assert.equal(await ok('orders', 'show', id), first);

      const rest = await ok('orders', 'capture', id, dollars(left));
      assert.match(rest, new RegExp(`^Captured\\s+${pattern(dollars(order.total))}$`, 'm'));
      assert.match(rest, new RegExp(`^Payment: captured \\(manual\\), ${pattern(dollars(order.total))} captured$`, 'm'));

      const again = await cli('orders', 'capture', id, '1');
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already paid/);
      assert.equal(await ok('orders', 'show', id), rest);
    });

    it('an AMOUNT that is not dollars and cents, or an AMOUNT where none is taken: one line, exit 1', async () => {
      for (const [args, expected] of [
        [['orders', 'capture', order.id, '12.345'], /AMOUNT must be dollars and cents such as 12\.50, got "12\.345"/],
        [['orders', 'capture', order.id, '0'], /AMOUNT must be more than 0\.00/],
        [['orders', 'capture', order.id, '1', '2'], /usage: storefront orders capture ID \[AMOUNT\]/],
        [['orders', 'cancel', order.id, '1.00'], /usage: storefront orders cancel ID/],
      ] as const) {
        const result = await cli(...args);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
        assert.equal(result.stdout, '');
        assert.match(result.stderr, expected);
      }
      const help = await ok('help');
      assert.match(help, /^ {2}orders capture ID \[AMOUNT\] /m);
    });

    if (target.name === 'PostgreSQL') {
      it('with PAYMENT_PROVIDER=stripe the capture is asked of Stripe: one that does not answer captures nothing', async () => {
        const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
        let held: Order;
        try {
          held = await placeOne(store, 'card@example.com');
          // As a Stripe approval places it: the total held on the card under its PaymentIntent.
          await store.db.query(
            `update orders set payment_provider = 'stripe', payment_state = 'authorized', payment_authorized = total,
                    payment_authorized_until = now() + interval '7 days', payment_due_at = null, payment_reference = $2 where id = $1`,
            [held.id, `pi_cli_${held.number}`],
          );
          await store.db.query(`update payments set state = 'authorized' where order_id = $1`, [held.id]);
        } finally {
          await store.close();
        }
        const stripe = {
          ...env,
          PAYMENT_PROVIDER: 'stripe',
          STRIPE_SECRET_KEY: 'sk_test_cli',
          STRIPE_WEBHOOK_SECRET: 'whsec_cli',
          STRIPE_API_URL: `http://127.0.0.1:${await freePort()}`,
        };
        const result = await runCommand(['orders', 'capture', String(held.number), '5.00'], stripe);
        assert.equal(result.code, 1, result.stdout);
        assert.match(result.stderr, new RegExp(`the payment provider did not answer the capture of order #${held.number}`));
        assert.match(await ok('orders', 'show', held.id), /^Captured\s+\$0\.00$/m);
      });
    }

    if (target.name === 'embedded database') {
      it('while a store holds the embedded database, the AMOUNT reaches it through its control socket', async () => {
        await session.close();
        const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'silent' });
        const store = await openStore(config, { onBackgroundError: () => {} });
        const control = await serveControlSocket(controlSocketPath(config.dataDir), storeCommands(store));
        try {
          const another = await placeOne(store, 'socket@example.com');
          const result = await runProcess(['orders', 'capture', String(another.number), '3.50'], env);
          assert.equal(result.code, 0, result.stderr);
          assert.match(result.stdout, /^Captured\s+\$3\.50$/m);
          const now = await store.orders.capture(store.db, another.id, 50).then((o) => o.captured);
          assert.equal(now, 400, 'the store captured $3.50 of it, then 50 cents more');
        } finally {
          await control.close();
          await store.close();
        }
      });
    }
  });
}
