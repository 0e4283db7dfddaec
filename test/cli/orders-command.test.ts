/**
 * The merchant's order commands as a merchant runs them: `storefront orders` and `storefront orders show ID`
 * through the function the binary runs (argument errors and help in a process of their own), on both backends.
 * Orders are placed through the domain in-process (an agent asks to complete, the buyer approves), on the database
 * the command then reads. With the embedded database held by a running store, the same commands answer through its
 * control socket, and print exactly what they print when they read the database themselves.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { describeOrder, describeOrders, type OrderDetails } from '../../src/cli/merchant-commands.js';
import { loadConfig } from '../../src/config.js';
import type { Order } from '../../src/orders/orders.js';
import { openStore } from '../../src/store.js';
import { cliScratch, cliTargets, commandSession, runCli, storefrontArgs } from '../helpers/cli.js';
import { freePort } from '../helpers/browser.js';

const { scratch, databases } = cliScratch('sf-orders');

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ADDRESS = { firstName: 'Lee', lastName: 'Park', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };

/**
 * Places an order as the checkout's flow does: an agent makes the checkout and asks to complete (escalated to the
 * buyer), and the buyer approves what the page showed. The store is opened on the database the CLI reads, and closed.
 */
async function placeOrders(env: Record<string, string>, buyers: { email: string; handle: string; quantity: number }[]): Promise<Order[]> {
  // A sales tax in Illinois, so the order's tax is not zero.
  const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent', TAX_RATES: 'IL=6.25' }), { onBackgroundError: () => {} });
  try {
    const orders: Order[] = [];
    for (const buyer of buyers) {
      const variantId = store.catalog.snapshot.productByHandle(buyer.handle)!.variants[0]!.id;
      const created = await store.checkouts.create(
        store.db,
        { lines: [{ variantId, quantity: buyer.quantity }], buyer: { email: buyer.email }, destination: ADDRESS, shippingOption: 'standard' },
        'agent',
        'agent',
      );
      const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      assert.equal(asked.view.record.status, 'requires_escalation');
      const outcome = await store.checkouts.approve(store.db, asked.approval!.token, asked.approval!.formSecret, asked.approval!.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed', JSON.stringify(outcome));
      if (outcome.kind === 'placed') orders.push(outcome.order);
    }
    return orders;
  } finally {
    await store.close();
  }
}


async function within(limitMs: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > limitMs) assert.fail(`${what}: not seen within ${limitMs} ms`);
    await sleep(100);
  }
}

const targets = cliTargets(scratch, 'sf_orders', databases);

for (const target of targets) {
  describe(`storefront orders (${target.name})`, () => {
    let env: Record<string, string>;
    let placed: Order[];
    const session = commandSession(() => env);
    after(() => session.close());
    const storefront = (args: string[]) => session.run(...args);

    before(async () => {
      env = await target.env();
    });

    it('with no orders, `orders` says "no orders yet"', async () => {
      const result = await storefront(['orders']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'no orders yet\n');
    });

    it('`orders` lists the orders newest first: number, id, time, buyer email, total, payment, fulfilment, channel, what needs the merchant', async () => {
      await session.close();
      placed = await placeOrders(env, [
        { email: 'ann@example.com', handle: 'decaf-capsules', quantity: 2 },
        { email: 'bob@example.com', handle: 'hydration-drink-stick', quantity: 3 },
      ]);
      const [ann, bob] = placed as [Order, Order];
      assert.equal(bob.number, ann.number + 1);

      const result = await storefront(['orders']);
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 3, result.stdout);
      assert.match(lines[0]!, /^ORDER\s+ID\s+PLACED \(UTC\)\s+BUYER EMAIL\s+TOTAL\s+PAYMENT\s+FULFILMENT\s+CHANNEL\s+NEEDS$/);
      for (const [line, order] of [
        [lines[1]!, bob],
        [lines[2]!, ann],
      ] as const) {
        assert.match(
          line,
          new RegExp(
            `^#${order.number}\\s+${escape(order.id)}\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+${escape(order.buyerEmail)}\\s+${escape(dollars(order.total))}\\s+pending\\s+unfulfilled\\s+agent\\s+-$`,
          ),
        );
      }
      // Aligned: every row's columns start where the header's do.
      for (const heading of ['ID', 'BUYER EMAIL', 'PAYMENT', 'FULFILMENT', 'CHANNEL', 'NEEDS']) {
        const at = lines[0]!.indexOf(heading);
        for (const line of lines.slice(1)) assert.match(line.slice(at - 2, at), /^ {2}$/, `${heading} column in "${line}"`);
      }
    });

    it('`orders show` prints the order: lines, totals, address, option, payment and the checkout\'s history', async () => {
      const ann = placed[0]!;
      const result = await storefront(['orders', 'show', ann.id]);
      assert.equal(result.code, 0, result.stderr);
      const out = result.stdout;
      assert.match(out, new RegExp(`^Order\\s+#${ann.number}  ${escape(ann.id)}$`, 'm'));
      assert.match(out, /^Placed\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(UTC\)$/m);
      assert.match(out, /^Channel\s+agent$/m);
      assert.match(out, /^Status\s+placed$/m);
      assert.match(out, /^Buyer\s+ann@example\.com$/m);
      assert.match(out, /^Ship to\s+Lee Park\n\s+1 Main St\n\s+Springfield, IL 62701\n\s+US$/m);
      assert.match(out, new RegExp(`^Shipping option\\s+${escape(ann.shippingOption.title)} \\(standard\\), ${escape(dollars(ann.shippingOption.amount))}$`, 'm'));

      const line = ann.lines[0]!;
      assert.equal(line.quantity, 2);
      assert.match(out, /^ {2}LINE\s+TITLE\s+SKU\s+QTY\s+SHIPPED\s+CANCELED\s+BACKORDERED\s+UNIT PRICE\s+LINE TOTAL$/m);
      assert.match(out, new RegExp(`^  ${line.id}\\s+${escape(line.title)}\\s+ESP-DEC-10\\s+2\\s+0\\s+0\\s+-\\s+${escape(dollars(line.unitPrice))}\\s+${escape(dollars(line.unitPrice * 2))}$`, 'm'));
      assert.equal(ann.subtotal, line.unitPrice * 2);
      for (const [label, cents] of [
        ['Subtotal', ann.subtotal],
        ['Shipping', ann.shipping],
        ['Tax', ann.tax],
        ['Total', ann.total],
      ] as const) {
        assert.match(out, new RegExp(`^${label}\\s+${escape(dollars(cents))}$`, 'm'));
      }
      assert.ok(ann.tax > 0);
      assert.equal(ann.total, ann.subtotal + ann.shipping + ann.tax);
      assert.match(out, /^Payment\s+pending$/m);
      assert.match(out, /^Fulfilment\s+unfulfilled$/m);
      const due = ann.payment.dueAt!.toISOString().replace(/\.\d+Z$/, 'Z');
      assert.match(out, new RegExp(`^Payment: pending \\(manual\\), ${escape(dollars(ann.total))} due by ${due}$`, 'm'));
      assert.match(out, /^Payment instructions given to the buyer:\n {2}Reply to your order confirmation email and the store will send you its payment details\.$/m);

      // The checkout's every change of status, in order: when, from, to, by whom, why.
      const history = out.slice(out.indexOf(`Checkout ${ann.checkoutId}`)).trimEnd().split('\n').slice(2);
      const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';
      assert.equal(history.length, 4, out);
      assert.match(history[0]!, new RegExp(`^  ${time}\\s+\\(new\\)\\s+→\\s+ready_for_complete\\s+agent\\s+created$`));
      assert.match(history[1]!, new RegExp(`^  ${time}\\s+ready_for_complete\\s+→\\s+requires_escalation\\s+agent\\s+The buyer must approve`));
      assert.match(history[2]!, new RegExp(`^  ${time}\\s+requires_escalation\\s+→\\s+complete_in_progress\\s+buyer\\s+approved by the buyer on the approval page \\(no proof asked\\)$`));
      assert.match(history[3]!, new RegExp(`^  ${time}\\s+complete_in_progress\\s+→\\s+completed\\s+system\\s+order #${ann.number} placed$`));

      // The order's number finds the same order.
      const byNumber = await storefront(['orders', 'show', `#${ann.number}`]);
      assert.equal(byNumber.code, 0, byNumber.stderr);
      assert.equal(byNumber.stdout, out);
    });

    it('an unknown order: one line on stderr, exit 1', async () => {
      for (const id of ['ord_nosuchorder', '42']) {
        const result = await storefront(['orders', 'show', id]);
        assert.equal(result.code, 1, result.stdout);
        assert.equal(result.stdout, '');
        assert.equal(result.stderr, `storefront: no order has the id or number ${JSON.stringify(id)}\n`);
      }
    });

    if (target.name === 'embedded database') {
      describe('while a store serves the embedded database', () => {
        let server: ChildProcess;
        let direct: { list: string; show: string };

        before(async () => {
          direct = { list: (await storefront(['orders'])).stdout, show: (await storefront(['orders', 'show', `#${placed[1]!.number}`])).stdout };
          await session.close();
          const port = await freePort();
          const origin = `http://127.0.0.1:${port}`;
          server = spawn(process.execPath, storefrontArgs('serve'), {
            env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: origin, RATE_LIMIT: 'off' },
            stdio: 'inherit',
          });
          await within(60_000, 'the store starting', async () => (await fetch(`${origin}/healthz`).catch(() => undefined))?.status === 200);
        });
        after(async () => {
          server.kill('SIGTERM');
          await new Promise((resolve) => server.once('exit', resolve));
        });

        it('`orders` and `orders show` answer through the control socket, exactly as they read the database', async () => {
          const list = await storefront(['orders']);
          assert.equal(list.code, 0, list.stderr);
          assert.equal(list.stdout, direct.list);
          const show = await storefront(['orders', 'show', `#${placed[1]!.number}`]);
          assert.equal(show.code, 0, show.stderr);
          assert.equal(show.stdout, direct.show);
          const unknown = await storefront(['orders', 'show', '#999999']);
          assert.equal(unknown.code, 1);
          assert.equal(unknown.stderr, 'storefront: no order has the id or number "#999999"\n');
        });
      });
    }
  });
}

// What only a process shows: the exit code and stderr of a command whose arguments cannot be read, and help.
describe('storefront orders: arguments and help', () => {
  it('`orders show` without an id, or an unknown orders command: a usage line, exit 1', () => {
    const env = { DATA_DIR: path.join(scratch, 'never-opened') };
    const missing = runCli(['orders', 'show'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^storefront: usage: storefront orders show ID.*\n$/);
    const unknown = runCli(['orders', 'xyz'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^storefront: unknown orders command "xyz"; use: storefront orders, or storefront orders show, capture, fulfill, cancel or refund ID\n$/);
    const extra = runCli(['orders', 'show', '1001', '1002'], env);
    assert.equal(extra.code, 1);
    assert.match(extra.stderr, /^storefront: usage: storefront orders show ID/);
  });

  it('--help lists both commands', () => {
    const result = runCli(['--help'], {});
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^ {2}orders {2,}list the 50 newest orders/m);
    assert.match(result.stdout, /^ {2}orders show ID {2,}one order/m);
  });
});

describe('describeOrders and describeOrder', () => {
  const order: OrderDetails['order'] = {
    id: 'ord_x',
    number: 1007,
    checkoutId: 'chk_y',
    status: 'placed',
    channel: 'browser',
    currency: 'USD',
    buyerEmail: 'cy@example.com',
    buyer: { email: 'cy@example.com', firstName: 'Cy', lastName: 'Young' },
    shippingAddress: { firstName: 'Cy', lastName: 'Young', streetAddress: '2 Elm St', extendedAddress: 'Apt 4', locality: 'Austin', region: 'TX', postalCode: '78701', country: 'US' },
    shippingOption: { id: 'express', title: 'Express', amount: 1500 },
    subtotal: 120005,
    shipping: 1500,
    tax: 9,
    total: 121514,
    paymentState: 'pending',
    paymentHandler: 'local.storefront.manual_capture',
    paymentSummary: 'Payment pending: the store collects payment after the order is placed.',
    captured: 0,
    refunded: 0,
    payment: {
      provider: 'manual',
      state: 'pending',
      amount: 121514,
      authorized: 0,
      authorizedUntil: null,
      dueAt: '2026-02-07T09:05:00.123Z',
      instructions: 'Wire to IBAN DE00 0000 0000 0000 0000 00,\nquoting the order number.',
      captured: 0,
      refunded: 0,
      disputed: false,
    },
    canceledAt: null,
    cancelReason: null,
    webhookUrl: null,
    createdAt: '2026-01-31T09:05:00.123Z',
    lines: [
      { id: 'li_1', position: 0, variantId: 1, productId: 1, sku: null, productTitle: 'Mug', variantTitle: 'Default Title', title: 'Mug', quantity: 12, unitPrice: 5, lineTotal: 60, sellingPlanId: null, properties: {}, fulfilled: 0, canceled: 0, backordered: 0 },
      { id: 'li_2', position: 1, variantId: 2, productId: 2, sku: 'KET-1', productTitle: 'Kettle', variantTitle: 'Red', title: 'Kettle - Red', quantity: 1, unitPrice: 119945, lineTotal: 119945, sellingPlanId: null, properties: {}, fulfilled: 0, canceled: 0, backordered: 0 },
    ],
    fulfillments: [],
    adjustments: [],
  };

  it('money from integer cents, times in UTC to the second, money right-aligned, the browser channel', () => {
    assert.equal(describeOrders([]), 'no orders yet');
    const listed = describeOrders([
      { id: 'ord_x', number: 1007, createdAt: order.createdAt, buyerEmail: order.buyerEmail, total: 121514, currency: 'USD', status: 'placed', channel: 'browser', payment: 'partially_refunded', fulfilment: 'fulfilled', flags: [] },
      { id: 'ord_w', number: 1006, createdAt: '2026-01-30T23:59:59.000Z', buyerEmail: 'd@example.com', total: 5, currency: 'USD', status: 'canceled', channel: 'agent', payment: 'voided', fulfilment: 'canceled', flags: [] },
      { id: 'ord_v', number: 1005, createdAt: '2026-01-20T10:00:00.000Z', buyerEmail: 'e@example.com', total: 700, currency: 'USD', status: 'placed', channel: 'agent', payment: 'pending', fulfilment: 'unfulfilled', flags: ['payment overdue since 2026-01-27T10:00:00Z'] },
    ]).split('\n');
    assert.equal(listed[0], 'ORDER  ID     PLACED (UTC)          BUYER EMAIL         TOTAL  PAYMENT             FULFILMENT   CHANNEL  NEEDS');
    // A paid, shipped and partly refunded order is listed as such, not as "placed".
    assert.equal(listed[1], '#1007  ord_x  2026-01-31T09:05:00Z  cy@example.com  $1,215.14  partially refunded  fulfilled    browser  -');
    assert.equal(listed[2], '#1006  ord_w  2026-01-30T23:59:59Z  d@example.com       $0.05  voided              canceled     agent    -');
    assert.equal(listed[3], '#1005  ord_v  2026-01-20T10:00:00Z  e@example.com       $7.00  pending             unfulfilled  agent    payment overdue since 2026-01-27T10:00:00Z');

    const shown = describeOrder(order, [
      { from: null, to: 'incomplete', actor: 'buyer', reason: 'created', at: '2026-01-31T09:00:00.000Z' },
      { from: 'incomplete', to: 'canceled', actor: 'merchant', reason: null, at: '2026-01-31T09:01:00.000Z' },
    ]);
    assert.match(shown, /^Buyer\s+cy@example\.com \(Cy Young\)$/m);
    assert.match(shown, /^Ship to\s+Cy Young\n\s+2 Elm St\n\s+Apt 4\n\s+Austin, TX 78701\n\s+US$/m);
    assert.match(shown, /^Shipping option\s+Express \(express\), \$15\.00$/m);
    assert.match(shown, /^ {2}li_1\s+Mug\s+-\s+12\s+0\s+0\s+-\s+\$0\.05\s+\$0\.60$/m);
    assert.match(shown, /^ {2}li_2\s+Kettle - Red\s+KET-1\s+1\s+0\s+0\s+-\s+\$1,199\.45\s+\$1,199\.45$/m);
    assert.match(shown, /^13 units still to ship\.$/m);
    assert.match(shown, /^Tax\s+\$0\.09$/m);
    assert.match(shown, /^Total\s+\$1,215\.14$/m);
    // The payment in the list's words: state, provider, what is due by when, and the instructions as the buyer got them.
    assert.match(shown, /^Payment\s+pending$/m);
    assert.match(shown, /^Fulfilment\s+unfulfilled$/m);
    assert.match(shown, /^Payment: pending \(manual\), \$1,215\.14 due by 2026-02-07T09:05:00Z \(overdue\)$/m);
    assert.match(shown, /^Payment instructions given to the buyer:\n {2}Wire to IBAN DE00 0000 0000 0000 0000 00,\n {2}quoting the order number\.$/m);
    const held = describeOrder(
      { ...order, paymentState: 'authorized', payment: { ...order.payment, provider: 'stripe', state: 'authorized', authorized: 121514, authorizedUntil: '2026-02-07T09:05:00.000Z', dueAt: null, instructions: null } },
      [],
    );
    assert.match(held, /^Payment: authorized \(stripe\), \$1,215\.14 authorized until 2026-02-07T09:05:00Z$/m);
    assert.doesNotMatch(held, /instructions/);
    assert.match(shown, /^ {2}2026-01-31T09:00:00Z\s+\(new\)\s+→\s+incomplete\s+buyer\s+created$/m);
    assert.match(shown, /^ {2}2026-01-31T09:01:00Z\s+incomplete\s+→\s+canceled\s+merchant$/m);
  });
});
