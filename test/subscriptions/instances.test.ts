/**
 * Issue 39, "Done when" 2, with real processes on one PostgreSQL database (PostgreSQL only: this is about instances
 * sharing a server). Subscriptions are made as buyers make them (orders with a line on the demo's "Delivery every
 * month", placed through the domain in this process), then brought within the notice days of the real now.
 *   - Two `storefront serve` processes, each running the schedule at its start: both are held at their first renewal
 *     (a SHARE lock on subscription_renewals, taken before they start, stops the insert of each) and let go together,
 *     so both produce at once. Every subscription then has exactly one renewal for its date, one renewal checkout and
 *     one renewal mail in the outbox, and the buyer receives that one mail (SMTP on loopback).
 *   - `storefront subscriptions run`, SIGKILLed once some but not all renewals exist (with one of its transactions
 *     open), leaves nothing half-made: no renewal checkout without its renewal, no renewal without its mail; run again
 *     to completion, it produces the rest, each once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { freePort } from '../helpers/browser.js';
import { runCli, storefrontArgs } from '../helpers/cli.js';
import { placeOrder } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { ALL_BACKENDS, dropTestDatabases, POSTGRES_URL, startTestStore } from '../helpers/store.js';

/** This file's setups name their backend: instances sharing a server is PostgreSQL's. */
const postgres = ALL_BACKENDS.find((backend) => backend.name === 'postgres')!;
const RENEWAL_MAIL = 'approve your delivery';
const RENEWAL_CHECKOUT = 'the renewal of subscription %';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-sub-instances-'));
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await dropTestDatabases();
});

const databaseUrl = (database: string) => Object.assign(new URL(POSTGRES_URL), { pathname: `/${database}` }).toString();

/** Polls until `check` holds; how long that took (ms), or fails after `limitMs` saying what was awaited and `context()`. */
async function until(what: string, check: () => Promise<boolean>, limitMs: number, context: () => string = () => ''): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > limitMs) assert.fail(`${what}: not within ${limitMs} ms ${context()}`);
    await sleep(20);
  }
  return Date.now() - start;
}

/**
 * A fresh database with the demo catalog and `orders` orders, each by its own buyer (`${prefix}-N@…`) of one unit on
 * every plan the demo sells (the espresso capsules and the hydration stick, every month and every 2 months): four
 * subscriptions per order. Their next delivery is then a day from now. The store that placed them is closed: only
 * the processes the test starts work on the database afterwards.
 */
async function databaseWithDueSubscriptions(t: TestContext, orders: number, prefix: string): Promise<{ database: string; subscriptions: number }> {
  const started = Date.now();
  const maker = await startTestStore(postgres);
  try {
    const lines = ['espresso-capsules', 'hydration-drink-stick'].flatMap((handle) => {
      const product = maker.store.catalog.snapshot.productByHandle(handle)!;
      return product.sellingPlanGroups.flatMap((group) => group.plans).map((plan) => ({ variantId: product.variants[0]!.id, quantity: 1, sellingPlanId: plan.id }));
    });
    assert.equal(new Set(lines.map((line) => line.sellingPlanId)).size, 4, 'four plans');
    // A few buyers at a time (the stock's rows are shared, and waited for).
    let next = 0;
    const buyer = async () => {
      for (let i = next++; i < orders; i = next++) await placeOrder(maker.store, lines, { email: `${prefix}-${i}@example.com` });
    };
    await Promise.all(Array.from({ length: 4 }, buyer));
    const [made] = await maker.store.db.query<{ n: number }>("select count(*)::int as n from subscriptions where state = 'active'");
    assert.equal(made!.n, orders * lines.length, 'one subscription per plan line');
    // With microseconds, as SQL writes a date (the store writes milliseconds): each is still renewed once.
    await maker.store.db.query("update subscriptions set next_at = now() + interval '1 day'");
    t.diagnostic(`${made!.n} subscriptions made by ${orders} orders in ${Date.now() - started} ms`);
    return { database: maker.database!, subscriptions: made!.n };
  } finally {
    await maker.close();
  }
}

/** A process of the storefront CLI, its output kept (for the failure messages), and its exit awaited. */
function start(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, storefrontArgs(...args), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output.slice(-4000), exited };
}

/** What the renewals of the database's subscriptions are, each subscription's row of counts. */
interface RenewalCounts {
  subscriptionId: number;
  email: string;
  /** Renewals for its next date (not replaced). */
  forNextDate: number;
  renewals: number;
  /** Its renewals' checkouts, as the run made them (their first transition names the subscription). */
  checkouts: number;
  /** Renewal mails in the outbox carrying the link of one of its renewals. */
  mails: number;
}

async function renewalCounts(db: pg.Client): Promise<RenewalCounts[]> {
  const { rows } = await db.query<{ id: string; email: string; for_next_date: number; renewals: number; checkouts: number; mails: number }>(
    `select s.id, s.buyer_email as email,
            (select count(*)::int from subscription_renewals r where r.subscription_id = s.id and r.due_at = date_trunc('milliseconds', s.next_at) and r.state <> 'replaced') as for_next_date,
            (select count(*)::int from subscription_renewals r where r.subscription_id = s.id) as renewals,
            (select count(*)::int from checkout_transitions ct
              where ct.from_status is null and ct.reason = 'the renewal of subscription ' || s.id) as checkouts,
            (select count(*)::int from outbox o join subscription_renewals r on position(r.link_token in o.payload->>'text') > 0
              where r.subscription_id = s.id and o.kind = 'mail' and o.topic = 'subscription' and o.payload->>'to' = s.buyer_email
                and position($1 in o.payload->>'subject') > 0) as mails
       from subscriptions s order by s.id`,
    [RENEWAL_MAIL],
  );
  return rows.map((row) => ({ subscriptionId: Number(row.id), email: row.email, forNextDate: row.for_next_date, renewals: row.renewals, checkouts: row.checkouts, mails: row.mails }));
}

const renewalsMade = async (db: pg.Client) => (await db.query<{ n: number }>('select count(*)::int as n from subscription_renewals')).rows[0]!.n;

/**
 * Nothing half-made: every renewal checkout has its renewal row (and every renewal its checkout), every renewal its
 * mail, none more than once. Returns how many subscriptions have their renewal.
 */
async function assertNothingHalfMade(db: pg.Client): Promise<number> {
  const [orphans] = (
    await db.query<{ checkouts: number; renewals: number }>(
      `select (select count(*)::int from checkout_transitions ct
                where ct.from_status is null and ct.reason like $1
                  and not exists (select 1 from subscription_renewals r where r.checkout_id = ct.checkout_id)) as checkouts,
              (select count(*)::int from subscription_renewals r
                where not exists (select 1 from checkout_transitions ct where ct.checkout_id = r.checkout_id and ct.from_status is null and ct.reason like $1)) as renewals`,
      [RENEWAL_CHECKOUT],
    )
  ).rows;
  assert.equal(orphans!.checkouts, 0, 'no renewal checkout without its renewal');
  assert.equal(orphans!.renewals, 0, 'no renewal without its checkout');
  const [mails] = (
    await db.query<{ n: number }>("select count(*)::int as n from outbox where kind = 'mail' and topic = 'subscription' and position($1 in payload->>'subject') > 0", [RENEWAL_MAIL])
  ).rows;
  assert.equal(mails!.n, await renewalsMade(db), 'no renewal mail but the one of each renewal');
  const counts = await renewalCounts(db);
  for (const row of counts) {
    assert.ok(row.renewals <= 1, `subscription ${row.subscriptionId}: ${row.renewals} renewals`);
    assert.equal(row.forNextDate, row.renewals, `subscription ${row.subscriptionId}: its renewal is for its next date`);
    assert.equal(row.checkouts, row.renewals, `subscription ${row.subscriptionId}: a checkout per renewal`);
    assert.equal(row.mails, row.renewals, `subscription ${row.subscriptionId}: a mail per renewal (${row.mails} mails, ${row.renewals} renewals)`);
  }
  return counts.filter((row) => row.renewals === 1).length;
}

/** Every subscription has exactly one renewal for its date, one renewal checkout and one renewal mail. */
async function assertEachRenewedOnce(db: pg.Client, expected: number): Promise<void> {
  const counts = await renewalCounts(db);
  assert.equal(counts.length, expected);
  const wrong = counts.filter((row) => row.forNextDate !== 1 || row.renewals !== 1 || row.checkouts !== 1 || row.mails !== 1);
  assert.deepEqual(wrong, [], 'each subscription: one renewal for its date, one checkout, one mail');
}

describe('renewals produced by processes on one PostgreSQL database', () => {
  let smtp: TestSmtpServer;
  before(async () => {
    smtp = await startSmtpServer();
  });
  after(() => smtp?.close());

  it('two serving instances, each running the schedule at its start and held to produce at the same moment, produce each renewal once', { timeout: 180_000 }, async (t) => {
    const { database, subscriptions: N } = await databaseWithDueSubscriptions(t, 10, 'two');
    const url = databaseUrl(database);
    const observer = new pg.Client({ connectionString: url });
    const gate = new pg.Client({ connectionString: url });
    await observer.connect();
    await gate.connect();
    const instances: ReturnType<typeof start>[] = [];
    const outputs = () => instances.map((instance, i) => `\n--- instance ${i + 1}:\n${instance.output()}`).join('');
    try {
      // Held before they start: each instance's run claims a subscription, makes its checkout, and waits at the insert of its renewal.
      await gate.query('begin');
      await gate.query('lock table subscription_renewals in share mode');
      for (const name of ['a', 'b']) {
        const port = await freePort();
        instances.push(
          start(['serve'], {
            DATABASE_URL: url,
            DATA_DIR: path.join(scratch, name),
            PORT: String(port),
            HOST: '127.0.0.1',
            BASE_URL: `http://localhost:${port}`,
            RATE_LIMIT: 'off',
            LOG_LEVEL: 'warn',
            SMTP_URL: smtp.url,
          }),
        );
      }
      const waiting = async () =>
        (
          await observer.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and query ilike 'insert into subscription_renewals%'`,
            [database],
          )
        ).rows[0]!.n;
      // One run at a time in an instance, one renewal at a time in a run: two inserts waiting are the two instances'.
      const held = await until('both instances waiting at their first renewal', async () => (await waiting()) === 2, 90_000, outputs);
      t.diagnostic(`both instances held at their first renewal ${held} ms after they were started`);
      await gate.query('commit');

      const took = await until('every subscription renewed', async () => (await renewalsMade(observer)) >= N, 60_000, outputs);
      t.diagnostic(`${N} renewals produced ${took} ms after the instances were let go`);
      // Let both finish their runs (nothing more is due), then count.
      await sleep(500);
      await assertNothingHalfMade(observer);
      await assertEachRenewedOnce(observer, N);
      const runs = (await observer.query<{ n: number }>('select count(distinct produced_at)::int as n from subscription_renewals')).rows[0]!.n;
      assert.equal(runs, 2, 'both instances produced renewals (each run stamps its renewals with its own time)');

      // The mails leave, each once (both instances deliver the outbox), with the link of its renewal.
      const tokens = (await observer.query<{ link_token: string }>('select link_token from subscription_renewals')).rows.map((row) => row.link_token);
      const renewalMails = () => smtp.messages.filter((m) => (m.subject ?? '').includes(RENEWAL_MAIL));
      await until('every renewal mail received', async () => renewalMails().length >= N, 30_000, outputs);
      await sleep(300);
      const linked = renewalMails().map((m) => /\/subscriptions\/renewals\/([A-Za-z0-9_-]+)/.exec(m.text ?? '')?.[1]);
      assert.deepEqual(linked.sort(), tokens.sort(), 'one mail per renewal, with its link');

      for (const instance of instances) instance.child.kill('SIGTERM');
      const codes = await Promise.all(instances.map((instance) => instance.exited));
      assert.deepEqual(codes, [0, 0], `both stopped cleanly${outputs()}`);
      assert.doesNotMatch(outputs(), /"level":(50|60)|failed/, 'nothing logged at error level, no run or delivery failed');
    } finally {
      for (const instance of instances) instance.child.kill('SIGKILL');
      await gate.end().catch(() => {});
      await observer.end();
    }
  });

  it('`storefront subscriptions run` SIGKILLed while producing leaves nothing half-made; run again, it produces each renewal once', { timeout: 180_000 }, async (t) => {
    const { database, subscriptions: M } = await databaseWithDueSubscriptions(t, 38, 'kill');
    const url = databaseUrl(database);
    const env = { DATABASE_URL: url, DATA_DIR: path.join(scratch, 'cli'), LOG_LEVEL: 'silent' };
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    const othersConnected = async () =>
      (await observer.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database])).rows[0]!.n;
    const run = start(['subscriptions', 'run'], env);
    let stopped = false;
    void run.exited.then(() => (stopped = true));
    try {
      // Killed once some renewals exist, while the process has a transaction open (producing the next one).
      const threshold = 20;
      let atKill = { renewals: 0, open: 0 };
      await until(
        `${threshold} renewals made, with a transaction of the run open`,
        async () => {
          if (stopped) assert.fail(`the run ended before it could be killed: ${run.output()}`);
          const [row] = (
            await observer.query<{ renewals: number; open: number }>(
              `select (select count(*)::int from subscription_renewals) as renewals,
                      (select count(*)::int from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and xact_start is not null and backend_xid is not null) as open`,
              [database],
            )
          ).rows;
          atKill = row!;
          if (atKill.renewals < threshold || atKill.open === 0) return false;
          run.child.kill('SIGKILL');
          return true;
        },
        90_000,
        run.output,
      );
      assert.equal(await run.exited, null, 'killed');
      // The server ends the dead client's sessions (rolling back what they had not committed) once it notices.
      await until('the killed process disconnected', async () => (await othersConnected()) === 0, 30_000);
      const produced = await assertNothingHalfMade(observer);
      t.diagnostic(`killed with ${atKill.renewals} renewals seen and ${atKill.open} transaction(s) writing; ${produced} renewals kept`);
      assert.ok(produced >= threshold && produced < M, `some but not all renewals: ${produced} of ${M}`);

      const rerun = Date.now();
      const again = runCli(['subscriptions', 'run'], env);
      t.diagnostic(`run again: ${M - produced} renewals in ${Date.now() - rerun} ms (the process's start included)`);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stderr, '');
      assert.match(again.stdout, new RegExp(`^  ${M - produced} renewals? produced`, 'm'), again.stdout);
      await assertNothingHalfMade(observer);
      await assertEachRenewedOnce(observer, M);
    } finally {
      run.child.kill('SIGKILL');
      await observer.end();
    }
  });
});
