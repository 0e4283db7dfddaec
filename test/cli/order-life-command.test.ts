/**
 * The merchant moves an order through its life from the command line (through the function the binary runs), on
 * both backends: capture, fulfil (in part, with tracking), refund (never more than was captured), cancel (what has not
 * shipped, its units back in stock once). A move the order's state does not allow is one line on stderr, exit 1,
 * and nothing changed (the order reads the same before and after). `outbox` lists what the changes will send.
 * With the embedded database held by a running store, the same commands run through its control socket.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { Order } from '../../src/orders/orders.js';
import { openStore } from '../../src/store.js';
import { freePort } from '../helpers/browser.js';
import { cliScratch, cliTargets, commandSession, storefrontArgs } from '../helpers/cli.js';
import { placeOrder } from '../helpers/orders.js';

const { scratch, databases } = cliScratch('sf-order-life');

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** Orders placed through the checkout (an agent asks, the buyer approves), each of two lines: 3 ristretto and 2 decaf. */
async function placeOrders(env: Record<string, string>, count: number): Promise<Order[]> {
  const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
  try {
    const variant = (handle: string) => store.catalog.snapshot.productByHandle(handle)!.variants[0]!.id;
    const orders: Order[] = [];
    for (let index = 0; index < count; index++) {
      const lines = [
        { variantId: variant('espresso-capsules'), quantity: 3 },
        { variantId: variant('decaf-capsules'), quantity: 2 },
      ];
      orders.push(await placeOrder(store, lines, { email: `buyer${index}@example.com` }));
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
    const session = commandSession(() => env);
    after(() => session.close());
    const cli = (...args: string[]) => session.run(...args);
    const ok = async (...args: string[]) => {
      const result = await cli(...args);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    /**
     * A refused move: one line naming why, exit 1; given the order as the last move printed it, the order reads the
     * same afterwards (nothing changed).
     */
    const refused = async (pattern: RegExp, args: string[], unchanged?: string) => {
      const result = await cli(...args);
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, pattern);
      assert.match(result.stderr, /; nothing was changed\n$/);
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
      if (unchanged !== undefined) assert.equal(await ok('orders', 'show', args[2]!), unchanged);
    };
    const stock = () => ok('stock');
    const onHand = (listing: string, sku: string) => {
      const line = listing.split('\n').find((l) => l.startsWith(`${sku} `))!;
      return Number(/\s(\d+)(?: \(.*\))?$/.exec(line)![1]);
    };

    before(async () => {
      env = { ...(await target.env()), BASE_URL: 'http://shop.test' };
      orders = await placeOrders(env, 2);
    });

    it('capture, a partial shipment with tracking, a partial refund: each shown by orders show', async () => {
      const order = orders[0]!;
      const id = `#${order.number}`;
      const captured = await ok('orders', 'capture', id);
      assert.match(captured, new RegExp(`^Captured\\s+${dollars(order.total).replace('$', '\\$')}$`, 'm'));
      assert.match(captured, /^Payment\s+captured$/m);
      assert.match(captured, new RegExp(`^Payment: captured \\(manual\\), ${dollars(order.total).replace('$', '\\$')} captured$`, 'm'));
      await refused(/already paid/, ['orders', 'capture', id]);

      const shipped = await ok('orders', 'fulfill', id, '--lines', 'ESP-RIS-10=2', '--tracking-number', '1Z999', '--carrier', 'UPS', '--tracking-url', 'https://carrier.example/t/1Z999');
      assert.match(shipped, /^ {2}li_1\s+.+\s+ESP-RIS-10\s+3\s+2\s+0\s+-/m);
      assert.match(shipped, /^Shipments:\n {2}\S+ {2}shipped 2 × .+ via UPS, tracking 1Z999 \(https:\/\/carrier\.example\/t\/1Z999\)$/m);
      assert.match(shipped, /^3 units still to ship\.$/m);
      await refused(/has 1 unit left to ship, not 5/, ['orders', 'fulfill', id, '--lines', 'li_1=5']);
      await refused(/has no line "NOPE-1"/, ['orders', 'fulfill', id, '--lines', 'NOPE-1=1']);

      const refunded = await ok('orders', 'refund', id, '5.25', '--reason', 'dented box');
      assert.match(refunded, /^Refunded\s+\$5\.25$/m);
      assert.match(refunded, /refunded \$5\.25: dented box$/m);
      assert.match(refunded, /^Payment\s+partially refunded$/m);
      assert.match(refunded, /^Payment: partially refunded \(manual\), \S+ captured, \$5\.25 refunded$/m);
      assert.match(refunded, /^Fulfilment\s+partially fulfilled$/m);
      const left = order.total - 525;
      await refused(
        new RegExp(`${dollars(left).replace('$', '\\$')} of ${dollars(order.total).replace('$', '\\$')} captured is not refunded yet`),
        ['orders', 'refund', id, dollars(left + 1).slice(1)],
        refunded,
      );
      const rest = await ok('orders', 'refund', id, dollars(left).slice(1));
      assert.match(rest, /^Payment\s+refunded$/m);
    });

    // The rest runs on the embedded database only: on PostgreSQL the commands run the same code on a server, which
    // the test above shows works from the CLI, and test/orders/order-actions.test.ts covers on both backends.
    const embeddedOnly = (name: string, fn: () => Promise<void>) => {
      if (target.name === 'embedded database') it(name, fn);
    };

    embeddedOnly('cancel puts back what was taken and not shipped, once; a second cancel is refused', async () => {
      const order = orders[1]!;
      const id = order.id;
      const before = await stock();
      await ok('orders', 'fulfill', id, '--lines', 'li_2=1');
      const canceled = await ok('orders', 'cancel', id, '--reason', 'buyer asked');
      assert.match(canceled, /^Status\s+canceled$/m);
      assert.match(canceled, /^Canceled \S+: buyer asked$/m);
      // One unit shipped before the cancel: it is still to be paid for, so the payment is not void.
      assert.match(canceled, /^Payment\s+pending$/m);
      assert.match(canceled, /^Fulfilment\s+partially canceled$/m);
      // What is due is what shipped (one decaf unit, the shipping and its tax share), not the canceled units.
      const shippedUnit = order.lines[1]!.unitPrice;
      const due = shippedUnit + order.shipping + Math.floor((order.tax * shippedUnit) / order.subtotal);
      assert.match(canceled, new RegExp(`^Payment: pending \\(manual\\), ${dollars(due).replace('$', '\\$')} due by \\S+$`, 'm'));
      const after = await stock();
      assert.equal(onHand(after, 'ESP-RIS-10'), onHand(before, 'ESP-RIS-10') + 3);
      assert.equal(onHand(after, 'ESP-DEC-10'), onHand(before, 'ESP-DEC-10') + 1);
      await refused(/is already canceled/, ['orders', 'cancel', id], canceled);
      assert.equal(await stock(), after);
      await refused(/is canceled; nothing can ship/, ['orders', 'fulfill', id]);
      await refused(/has no captured payment to refund/, ['orders', 'refund', id, '1.00']);
    });

    embeddedOnly('outbox lists the messages the changes wrote, waiting for a running store to deliver them', async () => {
      const listed = await ok('outbox');
      assert.match(listed, /^ID\s+KIND\s+TOPIC\s+ORDER\s+STATE/m);
      for (const topic of ['order.placed', 'order.fulfilled', 'order.refunded', 'order.canceled']) assert.match(listed, new RegExp(`\\smail\\s+${topic.replace('.', '\\.')}\\s`));
      assert.doesNotMatch(listed, /order\.captured/);
      const unknown = await cli('outbox', 'retry', '999999');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no outbox message has the id 999999/);
    });

    embeddedOnly('arguments the commands cannot read: a usage line, exit 1', async () => {
      for (const [args, pattern] of [
        [['orders', 'refund', '#1'], /usage: storefront orders refund ID AMOUNT/],
        [['orders', 'refund', orders[0]!.id, '12.345'], /AMOUNT must be dollars and cents/],
        [['orders', 'fulfill', orders[0]!.id, '--lines', 'li_1'], /--lines takes LINE=QTY pairs/],
        [['orders', 'fulfill', orders[0]!.id, '--colour', 'red'], /unknown option --colour/],
        [['outbox', 'retry', 'x'], /usage: storefront outbox, or storefront outbox retry ID/],
        [['signing-key', 'show'], /usage: storefront signing-key rotate/],
        [['import', 'test/fixtures'], /cannot read test\/fixtures: it is a directory/],
      ] as const) {
        const result = await cli(...args);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
        assert.match(result.stderr, pattern);
      }
    });

    if (target.name === 'embedded database') {
      describe('while a store serves the embedded database', () => {
        let server: ChildProcess;
        let more: Order[];
        let origin: string;
        before(async () => {
          await session.close();
          more = await placeOrders(env, 1);
          const port = await freePort();
          origin = `http://127.0.0.1:${port}`;
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

        it('the moves run in the store, through its control socket: the same answers, the same refusals', async () => {
          const id = `#${more[0]!.number}`;
          assert.match(await ok('orders', 'capture', id), /^Payment\s+captured$/m);
          const shipped = await ok('orders', 'fulfill', id);
          assert.match(shipped, /^Shipped in full\.$/m);
          await refused(/shipped in full; nothing is left to cancel/, ['orders', 'cancel', id], shipped);
          assert.match(await ok('orders', 'refund', id, '1'), /^Refunded\s+\$1\.00$/m);
        });

        it('signing-key rotate: the store signs with a new key at once, and its profile still publishes the old one', async () => {
          const kids = async () => ((await (await fetch(`${origin}/.well-known/ucp`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
          const before = await kids();
          assert.equal(before.length, 1);
          const rotated = await ok('signing-key', 'rotate');
          const match = /^signing with key (\S+); (\S+) retired, published 7 more days\n$/.exec(rotated);
          assert.ok(match, rotated);
          assert.equal(match[2], before[0]);
          assert.deepEqual(new Set(await kids()), new Set([match[1], before[0]]));
        });
      });
    }
  });
}
