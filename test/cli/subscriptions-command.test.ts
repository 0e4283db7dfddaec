/**
 * `storefront subscriptions` as a merchant runs it, on both backends: the list (by state, by buyer), one subscription
 * shown (lines, plan terms, address, the next delivery priced now, renewals, events), `run --as-of` producing what is
 * due once however often it runs, and cancel (audited as the terminal, the buyer mailed). Subscriptions are made as a
 * buyer makes them: orders with lines bought on a plan (the order-placed hook starts them). Times are in the store's
 * zone (STORE_TIMEZONE); text stored before the fields refused control characters is printed inert.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAsOf } from '../../src/cli/subscription-commands.js';
import { formatMoney, planUnitPrice, type Product } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { momentsIn } from '../../src/markup/moments.js';
import type { Order } from '../../src/orders/orders.js';
import { openStore, type Store } from '../../src/store.js';
import { cliScratch, cliTargets, runCli, runCommand } from '../helpers/cli.js';
import { placeOrder } from '../helpers/orders.js';

const { scratch, databases } = cliScratch('sf-subs');
const ZONE = 'Europe/Berlin';
const moments = momentsIn(ZONE);
const DAY_MS = 24 * 3600 * 1000;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const short = (at: Date) => `${moments.dayKey(at)} ${moments.time(at)}`;

function plans(store: Store, handle: string): { product: Product; monthly: number; bimonthly: number } {
  const product = store.catalog.snapshot.productByHandle(handle)!;
  const [monthly, bimonthly] = product.sellingPlanGroups[0]!.plans;
  return { product, monthly: monthly!.id, bimonthly: bimonthly!.id };
}

/**
 * Ann buys the hydration stick monthly (2 units) with a one-time energy stick; Bob the hydration stick every 2 months.
 * A store is opened on the database the CLI reads (`db`, left open), and closed.
 */
async function placeSubscriptionOrders(env: Record<string, string>, db: Database): Promise<{ ann: Order; bob: Order }> {
  const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { db: { ...db, close: async () => {} }, onBackgroundError: () => {} });
  try {
    const hydration = plans(store, 'hydration-drink-stick');
    const energy = store.catalog.snapshot.productByHandle('energy-drink-stick')!;
    const variant = hydration.product.variants[0]!.id;
    const ann = await placeOrder(
      store,
      [
        { variantId: variant, quantity: 2, sellingPlanId: hydration.monthly },
        { variantId: energy.variants[0]!.id, quantity: 1 },
      ],
      { email: 'ann@example.com' },
    );
    const bob = await placeOrder(store, [{ variantId: variant, quantity: 1, sellingPlanId: hydration.bimonthly }], { email: 'bob@example.com' });
    return { ann, bob };
  } finally {
    await store.close();
  }
}

const targets = cliTargets(scratch, 'sf_subs', databases);

for (const target of targets) {
  describe(`storefront subscriptions (${target.name})`, () => {
    let env: Record<string, string>;
    let ann: Order;
    let annId: number;
    let bobId: number;
    /** The database the commands run on, held open from one to the next (an embedded one takes a second to open). */
    let db: Database;
    const storefront = (...args: string[]) => runCommand(args, env, db);
    const query = <T extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => db.query<T>(sql, params);

    before(async () => {
      env = { ...(await target.env()), STORE_TIMEZONE: ZONE };
      db = await openDatabase(loadConfig({ ...process.env, LOG_LEVEL: 'silent', ...env }));
    });
    after(() => db?.close());

    it('with none, `subscriptions` says so', async () => {
      const result = await storefront('subscriptions');
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'no subscriptions yet\n');
    });

    it('`subscriptions` lists them newest first: id, state, buyer, what, plan, next delivery in the store\'s zone; --state and --email narrow it', async () => {
      ({ ann } = await placeSubscriptionOrders(env, db));
      const rows = await query<{ id: string | number; buyer_email: string; next_at: Date | string }>('select id, buyer_email, next_at from subscriptions order by id');
      assert.equal(rows.length, 2, 'one subscription per order bought on a plan; the one-time line starts none');
      [annId, bobId] = rows.map((row) => Number(row.id)) as [number, number];

      const result = await storefront('subscriptions');
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 3, result.stdout);
      assert.match(lines[0]!, new RegExp(`^ID\\s+STATE\\s+BUYER EMAIL\\s+WHAT\\s+PLAN\\s+NEXT DELIVERY \\(${escape(ZONE)}\\)$`));
      const title = ann.lines[0]!.title;
      const next = (index: number) => short(new Date(rows[index]!.next_at));
      assert.match(lines[1]!, new RegExp(`^${bobId}\\s+active\\s+bob@example\\.com\\s+${escape(title)}\\s+Delivery every 2 months \\(every 2 months, save 10%\\)\\s+${escape(next(1))}$`));
      assert.match(lines[2]!, new RegExp(`^${annId}\\s+active\\s+ann@example\\.com\\s+2 × ${escape(title)}\\s+Delivery every month \\(every month, save 10%\\)\\s+${escape(next(0))}$`));
      assert.match(next(0), /^\d{4}-\d\d-\d\d \d\d:\d\d CES?T$/, 'a time in Berlin, its zone named');

      const byEmail = await storefront('subscriptions', '--email', 'ann@example.com');
      assert.equal(byEmail.code, 0, byEmail.stderr);
      assert.deepEqual(byEmail.stdout.trimEnd().split('\n').slice(1).map((line) => line.split(/\s+/)[0]), [String(annId)]);
      const active = await storefront('subscriptions', '--state=active');
      assert.equal(active.stdout.trimEnd().split('\n').length, 3);
      const paused = await storefront('subscriptions', '--state', 'paused');
      assert.equal(paused.code, 0, paused.stderr);
      assert.equal(paused.stdout, 'no subscription matches\n');
    });

    it('`subscriptions show ID`: lines, plan terms and whether still offered, address, the next delivery priced now, events', async () => {
      const result = await storefront('subscriptions', 'show', String(annId));
      assert.equal(result.code, 0, result.stderr);
      const out = result.stdout;
      const line = ann.lines[0]!;
      assert.match(out, new RegExp(`^Subscription\\s+${annId}$`, 'm'));
      assert.match(out, /^State\s+active$/m);
      assert.match(out, /^Buyer\s+ann@example\.com$/m);
      assert.match(out, /^Plan\s+Delivery every month \(every month, save 10%\), of Subscribe & save$/m);
      assert.match(out, /^\s+still offered by the catalog$/m);
      assert.match(out, /^Ship to\s+Sam Reed\n\s+1 Main St\n\s+Springfield, IL 62701\n\s+United States$/m);
      assert.match(out, /^Shipping option\s+standard$/m);
      assert.match(out, new RegExp(`^Started\\s+.+, order #${ann.number}$`, 'm'));
      assert.match(out, new RegExp(`^Times\\s+${escape(ZONE)}$`, 'm'));
      // Priced now: today's price less the plan's 10%.
      const full = line.sellingPlan!.fullUnitPrice;
      const unit = planUnitPrice(full, 10);
      assert.equal(unit, line.unitPrice);
      assert.match(out, new RegExp(`^  \\s*2  ${escape(line.title)}\\s+${escape(formatMoney(unit))}\\s+${escape(formatMoney(full))}\\s+${escape(formatMoney(unit * 2))}$`, 'm'));
      assert.match(out, new RegExp(`^  Subtotal ${escape(formatMoney(unit * 2))} \\(before shipping and tax\\)$`, 'm'));
      assert.match(out, /^Renewals, newest first:\n {2}\(none yet\)$/m);
      assert.match(out, new RegExp(`^Orders:\\n  ORDER\\s+PLACED\\s+TOTAL\\n  #${ann.number}\\s`, 'm'));
      assert.match(out, new RegExp(`^What happened, newest first:\\n  TIME\\s+BY\\s+WHAT\\s+DETAIL\\n  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d CES?T\\s+buyer\\s+created\\s+order #${ann.number}$`, 'm'));

      const unknown = await storefront('subscriptions', 'show', '999999');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^storefront: no subscription has the id 999999/);
      const notAnId = await storefront('subscriptions', 'show', 'abc');
      assert.equal(notAnId.code, 1);
      assert.match(notAnId.stderr, /^storefront: usage: storefront subscriptions show ID\n/);
    });

    it('`subscriptions run --as-of DATE` produces the renewals due by then once, however often it runs; a bad date is refused', async () => {
      for (const bad of ['tomorrow', '2027-02-30', '2027-01-15T09:00', '15/01/2027', '']) {
        const refused = await storefront('subscriptions', 'run', '--as-of', bad);
        assert.equal(refused.code, 1, `--as-of ${bad}`);
        assert.equal(refused.stdout, '');
        assert.match(refused.stderr, /^storefront: --as-of takes a date such as 2027-01-15 or a time with its zone such as 2027-01-15T09:00:00Z, got ".*"\n/);
      }
      assert.equal((await query('select 1 from subscription_renewals')).length, 0, 'a refused run produced nothing');

      // 35 days on: Ann's monthly delivery is due (within the notice days), Bob's every-2-months one is not.
      const day = moments.dayKey(new Date(Date.now() + 35 * DAY_MS));
      const asOf = parseAsOf(day, ZONE)!;
      const first = await storefront('subscriptions', 'run', '--as-of', day);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(
        first.stdout,
        `as of ${moments.moment(asOf)}:\n  1 renewal produced (the buyer mailed a link to approve it)\n  0 renewals reminded\n  0 renewals skipped (not approved in time; the subscription goes on)\n`,
      );
      const again = await storefront('subscriptions', 'run', `--as-of=${day}`);
      assert.match(again.stdout, /^ {2}0 renewals produced/m);
      const renewals = await query<{ subscription_id: string | number; state: string }>('select subscription_id, state from subscription_renewals');
      assert.deepEqual(
        renewals.map((row) => [Number(row.subscription_id), row.state]),
        [[annId, 'pending']],
      );
      const shown = await storefront('subscriptions', 'show', String(annId));
      assert.match(shown.stdout, /^Renewals, newest first:\n {2}DELIVERY\s+STATE\s+ORDER\s+MAILED\s+REMINDED\s+WHY\n {2}\S+ \S+ CES?T\s+waiting for the buyer\s+-\s+/m);
    });

    it('`subscriptions cancel ID --reason TEXT` cancels as the terminal: audited, the waiting renewal withdrawn, the buyer mailed; twice is refused', async () => {
      const mailsBefore = (await query("select 1 from outbox where topic = 'subscription'")).length;
      const result = await storefront('subscriptions', 'cancel', String(annId), '--reason', 'moving abroad');
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^subscription ${annId} canceled: no renewal will be produced; the buyer is mailed\\n`));
      assert.match(result.stdout, /^State\s+canceled \d{4}-\d\d-\d\d \d\d:\d\d CES?T: moving abroad$/m);
      assert.match(result.stdout, /^No next delivery: canceled\.$/m);
      const [row] = await query<{ state: string; cancel_reason: string }>('select state, cancel_reason from subscriptions where id = $1', [annId]);
      assert.deepEqual({ ...row }, { state: 'canceled', cancel_reason: 'moving abroad' });
      const audit = await query<{ actor: string; action: string; staff_id: string | null }>("select actor, action, staff_id from audit_log where action like 'subscription.%'");
      assert.deepEqual(audit.map((entry) => ({ ...entry })), [{ actor: 'terminal', action: 'subscription.canceled', staff_id: null }]);
      assert.deepEqual(
        (await query<{ state: string }>('select state from subscription_renewals where subscription_id = $1', [annId])).map((r) => r.state),
        ['skipped'],
        'the renewal waiting for approval is closed',
      );
      assert.ok((await query("select 1 from outbox where topic = 'subscription'")).length > mailsBefore, 'the buyer is mailed');
      // Bob's goes on.
      const list = await storefront('subscriptions', '--state', 'active');
      assert.deepEqual(list.stdout.trimEnd().split('\n').slice(1).map((line) => line.split(/\s+/)[0]), [String(bobId)]);

      const twice = await storefront('subscriptions', 'cancel', String(annId));
      assert.equal(twice.code, 1);
      assert.equal(twice.stderr, 'storefront: This subscription is already canceled.; nothing was changed\n');
      assert.equal((await query("select 1 from audit_log where action like 'subscription.%'")).length, 1, 'nothing more audited');
    });

    it('what buyers and the catalog wrote is printed inert (text stored before the fields refused control characters)', async () => {
      await query(
        `update subscriptions set lines = jsonb_set(lines, '{0,title}', to_jsonb($2::text)), shipping_address = jsonb_set(shipping_address, '{streetAddress}', to_jsonb($3::text)) where id = $1`,
        [bobId, 'Stick\u001b[2J\u202eevil', '1 Main\nSt\u0007'],
      );
      const list = await storefront('subscriptions');
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/.test(list.stdout), 'no control character reaches the terminal');
      assert.match(list.stdout, /Stick\\u001b\[2J\\u202eevil/);
      const shown = await storefront('subscriptions', 'show', String(bobId));
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/.test(shown.stdout));
      assert.match(shown.stdout, /^\s+1 Main\\u000aSt\\u0007$/m, 'a stored line break starts no line of its own');
    });
  });
}

describe('storefront subscriptions: arguments and help', () => {
  const env = { DATA_DIR: path.join(scratch, 'never-opened') };

  it('an unknown subcommand or option, or a missing ID: a usage line, exit 1, before any database is opened', async () => {
    const unknown = await runCommand(['subscriptions', 'pause', '1'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^storefront: unknown subscriptions command "pause"\nusage: storefront subscriptions \[--state active\|paused\|canceled\]/);
    const state = await runCommand(['subscriptions', '--state', 'gone'], env);
    assert.equal(state.code, 1);
    assert.match(state.stderr, /^storefront: --state is active, paused or canceled\n/);
    const missing = await runCommand(['subscriptions', 'cancel'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^storefront: usage: storefront subscriptions cancel ID \[--reason TEXT\]\n/);
    const noValue = await runCommand(['subscriptions', 'run', '--as-of'], env);
    assert.equal(noValue.code, 1);
    assert.match(noValue.stderr, /^storefront: --as-of needs a value\n/);
  });

  it('a bad --as-of in a process of its own: one line on stderr, exit 1', () => {
    const result = runCli(['subscriptions', 'run', '--as-of', '2027-02-30'], env);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^storefront: --as-of takes a date such as 2027-01-15 .*, got "2027-02-30"\n/);
  });

  it('--help lists the commands', () => {
    const result = runCli(['--help'], {});
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^ {2}subscriptions \[--state active\|paused\|canceled\] \[--email EMAIL\]$/m);
    assert.match(result.stdout, /^ {2}subscriptions show ID {2,}one subscription/m);
    assert.match(result.stdout, /^ {2}subscriptions run \[--as-of DATE\]$/m);
  });
});

describe('parseAsOf', () => {
  it('a date is the start of that day in the store\'s zone; a time needs its zone; a day that does not exist is none', () => {
    assert.equal(parseAsOf('2027-01-15', 'Europe/Berlin')?.toISOString(), '2027-01-14T23:00:00.000Z');
    assert.equal(parseAsOf('2027-07-01', 'Europe/Berlin')?.toISOString(), '2027-06-30T22:00:00.000Z');
    assert.equal(parseAsOf('2027-07-01', 'America/New_York')?.toISOString(), '2027-07-01T04:00:00.000Z');
    assert.equal(parseAsOf('2027-03-28', 'Europe/Berlin')?.toISOString(), '2027-03-27T23:00:00.000Z', 'the day summer time starts');
    assert.equal(parseAsOf('2027-01-15', 'UTC')?.toISOString(), '2027-01-15T00:00:00.000Z');
    assert.equal(parseAsOf('2027-01-15T09:00:00Z', 'Europe/Berlin')?.toISOString(), '2027-01-15T09:00:00.000Z');
    assert.equal(parseAsOf('2027-01-15T09:00+01:00', 'UTC')?.toISOString(), '2027-01-15T08:00:00.000Z');
    for (const bad of ['2027-02-30', '2027-13-01', '2027-01-15T09:00', '2027-02-30T09:00:00Z', '2027-1-5', 'now', '']) {
      assert.equal(parseAsOf(bad, 'Europe/Berlin'), undefined, bad);
    }
  });
});
