/**
 * The merchant moves an order through its life from the command line, in processes of their own, on both
 * backends: capture, fulfil (in part, with tracking), refund (never more than was captured), cancel (what has not
 * shipped, its units back in stock once). A move the order's state does not allow is one line on stderr, exit 1,
 * and nothing changed (the order reads the same before and after). `outbox` lists what the changes will send.
 * With the embedded database held by a running store, the same commands run through its control socket.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { Order } from '../../src/orders/orders.js';
import { openStore } from '../../src/store.js';
import { freePort } from '../helpers/browser.js';
import { cliTargets, runCli, storefrontArgs } from '../helpers/cli.js';
import { POSTGRES_URL } from '../helpers/store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-order-life-'));
const databases: string[] = [];
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  if (databases.length === 0) return;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  for (const database of databases) await admin.query(`drop database if exists ${database} with (force)`).catch(() => {});
  await admin.end();
});

const ADDRESS = { street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** Orders placed through the checkout (an agent asks, the buyer approves), each of two lines: 3 espresso and 2 decaf. */
async function placeOrders(env: Record<string, string>, count: number): Promise<Order[]> {
  const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
  try {
    const variant = (handle: string) => store.catalog.snapshot.productByHandle(handle)!.variants[0]!.id;
    const orders: Order[] = [];
    for (let index = 0; index < count; index++) {
      const created = await store.checkouts.create(
        store.db,
        {
          lines: [
            { variantId: variant('espresso-capsules'), quantity: 3 },
            { variantId: variant('decaf-capsules'), quantity: 2 },
          ],
          buyer: { email: `buyer${index}@example.com` },
          destination: ADDRESS,
          shippingOption: 'standard',
        },
        'agent',
        'agent',
      );
      const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      const outcome = await store.checkouts.approve(store.db, asked.approval!.token, asked.approval!.formSecret, asked.approval!.digest);
      assert.equal(outcome.kind, 'placed');
      if (outcome.kind === 'placed') orders.push(outcome.order);
    }
    return orders;
  } finally {
    await store.close();
  }
}

for (const target of cliTargets(scratch, 'sf_order_life', databases)) {
  describe(`the order's life from the CLI (${target.name})`, () => {
    let env: Record<string, string>;
    let orders: Order[];
    const cli = (...args: string[]) => runCli(args, env);
    const ok = (...args: string[]) => {
      const result = cli(...args);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    /** A refused move: one line naming why, exit 1, and the order as it was. */
    const refused = (pattern: RegExp, ...args: string[]) => {
      const before = ok('orders', 'show', args[2]!);
      const result = cli(...args);
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, pattern);
      assert.match(result.stderr, /; nothing was changed\n$/);
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
      assert.equal(ok('orders', 'show', args[2]!), before);
    };
    const onHand = (sku: string) => {
      const line = ok('stock').split('\n').find((l) => l.startsWith(`${sku} `))!;
      return Number(/\s(\d+)(?: \(.*\))?$/.exec(line)![1]);
    };

    before(async () => {
      env = { ...(await target.env()), BASE_URL: 'http://shop.test' };
      orders = await placeOrders(env, 2);
    });

    it('capture, a partial shipment with tracking, a partial refund: each shown by orders show', () => {
      const order = orders[0]!;
      const id = `#${order.number}`;
      const captured = ok('orders', 'capture', id);
      assert.match(captured, new RegExp(`^Captured\\s+${dollars(order.total).replace('$', '\\$')}$`, 'm'));
      assert.match(captured, /^Paid\.$/m);
      refused(/already paid/, 'orders', 'capture', id);

      const shipped = ok('orders', 'fulfill', id, '--lines', 'ESP-RIS-10=2', '--tracking-number', '1Z999', '--carrier', 'UPS', '--tracking-url', 'https://carrier.example/t/1Z999');
      assert.match(shipped, /^ {2}li_1\s+.+\s+ESP-RIS-10\s+3\s+2\s+0\s+-/m);
      assert.match(shipped, /^Shipments:\n {2}\S+ {2}shipped 2 × .+ via UPS, tracking 1Z999 \(https:\/\/carrier\.example\/t\/1Z999\)$/m);
      assert.match(shipped, /^3 units still to ship\.$/m);
      refused(/has 1 unit left to ship, not 5/, 'orders', 'fulfill', id, '--lines', 'li_1=5');
      refused(/has no line "NOPE-1"/, 'orders', 'fulfill', id, '--lines', 'NOPE-1=1');

      const refunded = ok('orders', 'refund', id, '5.25', '--reason', 'dented box');
      assert.match(refunded, /^Refunded\s+\$5\.25$/m);
      assert.match(refunded, /refunded \$5\.25: dented box$/m);
      assert.match(refunded, /^Paid, partly refunded\.$/m);
      const left = order.total - 525;
      refused(new RegExp(`${dollars(left).replace('$', '\\$')} of ${dollars(order.total).replace('$', '\\$')} captured is not refunded yet`), 'orders', 'refund', id, dollars(left + 1).slice(1));
      const rest = ok('orders', 'refund', id, dollars(left).slice(1));
      assert.match(rest, /^Refunded\.$/m);
    });

    it('cancel puts back what was taken and not shipped, once; a second cancel is refused', () => {
      const order = orders[1]!;
      const id = order.id;
      const espresso = onHand('ESP-RIS-10');
      const decaf = onHand('ESP-DEC-10');
      ok('orders', 'fulfill', id, '--lines', 'li_2=1');
      const canceled = ok('orders', 'cancel', id, '--reason', 'buyer asked');
      assert.match(canceled, /^Status\s+canceled$/m);
      assert.match(canceled, /^Canceled \S+: buyer asked$/m);
      assert.match(canceled, /^No payment: the order was canceled before it was paid\.$/m);
      assert.equal(onHand('ESP-RIS-10'), espresso + 3);
      assert.equal(onHand('ESP-DEC-10'), decaf + 1);
      refused(/is already canceled/, 'orders', 'cancel', id);
      assert.equal(onHand('ESP-RIS-10'), espresso + 3);
      refused(/is canceled; nothing can ship/, 'orders', 'fulfill', id);
      refused(/has no captured payment to refund/, 'orders', 'refund', id, '1.00');
    });

    it('outbox lists the messages the changes wrote, waiting for a running store to deliver them', () => {
      const listed = ok('outbox');
      assert.match(listed, /^ID\s+KIND\s+TOPIC\s+ORDER\s+STATE/m);
      for (const topic of ['order.placed', 'order.fulfilled', 'order.refunded', 'order.canceled']) assert.match(listed, new RegExp(`\\smail\\s+${topic.replace('.', '\\.')}\\s`));
      assert.doesNotMatch(listed, /order\.captured/);
      const unknown = cli('outbox', 'retry', '999999');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no outbox message has the id 999999/);
    });

    it('arguments the commands cannot read: a usage line, exit 1', () => {
      for (const [args, pattern] of [
        [['orders', 'refund', '#1'], /usage: storefront orders refund ID AMOUNT/],
        [['orders', 'refund', orders[0]!.id, '12.345'], /AMOUNT must be dollars and cents/],
        [['orders', 'fulfill', orders[0]!.id, '--lines', 'li_1'], /--lines takes LINE=QTY pairs/],
        [['orders', 'fulfill', orders[0]!.id, '--colour', 'red'], /unknown option --colour/],
        [['orders', 'cancel', orders[0]!.id, '--reason'], /--reason needs a value/],
        [['outbox', 'retry', 'x'], /usage: storefront outbox, or storefront outbox retry ID/],
      ] as const) {
        const result = cli(...args);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
        assert.match(result.stderr, pattern);
      }
    });

    if (target.name === 'embedded database') {
      describe('while a store serves the embedded database', () => {
        let server: ChildProcess;
        let more: Order[];
        before(async () => {
          more = await placeOrders(env, 1);
          const port = await freePort();
          const origin = `http://127.0.0.1:${port}`;
          server = spawn(process.execPath, storefrontArgs('serve'), {
            env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: origin, RATE_LIMIT: 'off' },
            stdio: 'inherit',
          });
          const start = Date.now();
          while ((await fetch(`${origin}/healthz`).catch(() => undefined))?.status !== 200) {
            if (Date.now() - start > 60_000) assert.fail('the store did not start within 60 s');
            await sleep(100);
          }
        });
        after(async () => {
          server.kill('SIGTERM');
          await new Promise((resolve) => server.once('exit', resolve));
        });

        it('the moves run in the store, through its control socket: the same answers, the same refusals', () => {
          const id = `#${more[0]!.number}`;
          assert.match(ok('orders', 'capture', id), /^Paid\.$/m);
          refused(/already paid/, 'orders', 'capture', id);
          assert.match(ok('orders', 'fulfill', id), /^Shipped in full\.$/m);
          refused(/shipped in full; nothing is left to cancel/, 'orders', 'cancel', id);
          assert.match(ok('orders', 'refund', id, '1'), /^Refunded\s+\$1\.00$/m);
        });
      });
    }
  });
}
