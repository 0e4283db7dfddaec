/**
 * The merchant's admin over many orders: GET /admin (the dashboard) and GET /admin/orders (the orders list, its first
 * page and a filtered, searched one) with a signed-in session, on the embedded database holding BENCH_ADMIN_ORDERS
 * orders (default 10,000) seeded by bulk SQL (two months of orders: browsers and three agent platforms, every
 * payment state, most shipped, some refunded, canceled, overdue or with a hold about to lapse; failed deliveries),
 * leaving the store's sweeps nothing to do (no hold lapsed or unwarned, no delivered message to purge): the loads
 * measure the pages, not a one-off sweep.
 * Each is measured beside bare node:http answering a body of the same size, in the same run: p50, p99 and the ratio.
 * Goal: p99 under 200 ms each. A merchant's admin has a few people at once, not fifty: BENCH_ADMIN_CONNECTIONS
 * (default 4) requests at a time.
 *   node --import tsx bench/admin.ts [SECONDS]          (alone)
 *   node --import tsx bench/admin.ts serve ORDERS        (the child: prints "READY <port> <cookie>")
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { processCpuSeconds } from './harness.js';

export const ADMIN_ORDERS = Number(process.env.BENCH_ADMIN_ORDERS ?? 10_000);
export const ADMIN_CONNECTIONS = Number(process.env.BENCH_ADMIN_CONNECTIONS ?? 4);
const WARMUP_SECONDS = 2;
const P99_GOAL_MS = 200;

/**
 * Two months of orders in a few statements: checkouts, orders (a third from browsers, the rest from agents of three
 * platforms), one to three lines each on the catalog's variants, payments, refunds, and failed deliveries.
 */
export async function seedOrders(db: { exec(sql: string): Promise<void> }, orders: number): Promise<void> {
  const spacingSeconds = Math.floor((60 * 86_400) / orders);
  await db.exec(`
    create temporary table bench_variants as
      select row_number() over (order by v.id) - 1 as n, v.id as variant_id, v.product_id, p.title as product_title, v.title as variant_title,
             v.sku, v.price_cents
        from variants v join products p on p.id = v.product_id where v.archived_at is null;

    create temporary table bench_orders as
      select g,
             'ord_bench_' || g as id,
             'chk_bench_' || g as checkout_id,
             now() - make_interval(secs => g * ${spacingSeconds}) as created_at,
             case when g % 3 = 0 then 'browser' else 'agent' end as channel,
             case when g % 3 = 0 then null when g % 3 = 1 then 'chat.example' when g % 7 = 2 then 'assistant.example' else 'agents.example:8443' end as agent_platform,
             case when g % 97 = 0 then 'canceled' else 'placed' end as status,
             1 + g % 3 as line_count
        from generate_series(1, ${orders}) g;

    insert into checkouts (id, status, lines, buyer, channel, expires_at, created_at, updated_at, agent_platform)
      select checkout_id, 'completed', '[]', '{}', channel, created_at, created_at, created_at, agent_platform from bench_orders;

    create temporary table bench_lines as
      select o.id as order_id, l as position, v.*, 1 + (o.g + l) % 3 as quantity, o.g, o.status
        from bench_orders o cross join generate_series(0, 2) l
        join bench_variants v on v.n = (o.g * 7 + l * 13) % (select count(*) from bench_variants)
       where l < o.line_count;

    insert into orders (id, checkout_id, status, channel, currency, buyer_email, buyer, shipping_address, shipping_option,
                        subtotal, shipping, tax, total, payment_state, created_at, agent_platform, payment_provider,
                        payment_due_at, payment_authorized, payment_authorized_until, payment_expiry_warned_at, captured, refunded, canceled_at, cancel_reason)
      select o.id, o.checkout_id, o.status, o.channel, 'USD', 'buyer' || (o.g % 2500) || '@example.com',
             jsonb_build_object('email', 'buyer' || (o.g % 2500) || '@example.com', 'firstName', 'Sam', 'lastName', 'Reed'),
             '{"firstName":"Sam","lastName":"Reed","streetAddress":"1 Main St","locality":"Springfield","region":"IL","postalCode":"62701","country":"US"}',
             '{"id":"standard","title":"Standard shipping","amount":500}',
             t.subtotal, 500, 0, t.subtotal + 500, s.payment_state, o.created_at, o.agent_platform,
             case when s.payment_state in ('authorized') then 'stripe' else 'manual' end,
             case when s.payment_state = 'pending' then o.created_at + interval '7 days' end,
             case when s.payment_state = 'authorized' then t.subtotal + 500 else 0 end,
             case when s.payment_state = 'authorized' then o.created_at + interval '7 days' end,
             case when s.payment_state = 'authorized' then o.created_at + interval '6 days' end,
             case when s.payment_state in ('captured', 'partially_refunded') then t.subtotal + 500 else 0 end,
             case when s.payment_state = 'partially_refunded' then 500 else 0 end,
             case when o.status = 'canceled' then o.created_at + interval '1 hour' end,
             case when o.status = 'canceled' then 'the buyer asked' end
        from bench_orders o
        join (select order_id, sum(quantity * price_cents) as subtotal from bench_lines group by order_id) t on t.order_id = o.id
        cross join lateral (select case when o.status = 'canceled' then 'voided'
                                        when o.g % 11 = 0 then 'partially_refunded'
                                        when o.g % 5 = 0 then 'pending'
                                        when o.g % 5 = 1 and o.g < ${Math.floor(orders / 11)} then 'authorized'
                                        else 'captured' end as payment_state) s
       order by o.g desc;

    insert into order_lines (order_id, line_id, position, variant_id, product_id, sku, product_title, variant_title, title, quantity,
                             unit_price, line_total, fulfilled, canceled)
      select order_id, 'li_' || (position + 1), position, variant_id, product_id, sku, product_title, variant_title,
             product_title || ' - ' || variant_title, quantity, price_cents, quantity * price_cents,
             case when status = 'placed' and g > ${Math.ceil(orders / 20)} then quantity else 0 end,
             case when status = 'canceled' then quantity else 0 end
        from bench_lines;

    insert into payments (id, order_id, handler, state, amount, currency, created_at)
      select 'pay_' || id, id, 'manual:manual', payment_state, total, 'USD', created_at from orders where id like 'ord_bench_%';

    insert into order_adjustments (id, order_id, type, amount, reason, occurred_at)
      select 'adj_' || id, id, 'refund', -refunded, 'damaged', created_at + interval '2 days' from orders where refunded > 0 and id like 'ord_bench_%';

    insert into outbox (kind, topic, event_id, order_id, payload, created_at, attempts, deadline_at, failed_at, last_error)
      select 'mail', 'order.placed', gen_random_uuid()::text, id, '{}', created_at, 9, created_at + interval '3 days', created_at + interval '3 days',
             '550 5.1.1 mailbox unavailable'
        from orders where id like 'ord_bench_%' and number % 200 = 0;

    drop table bench_lines;
    drop table bench_orders;
    drop table bench_variants;
    analyze;
  `);
}

async function serve(orders: number): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { loadConfig } = await import('../src/config.js');
  const { openStore } = await import('../src/store.js');
  const { openPglite } = await import('../src/db/database.js');
  const { TERMINAL_ACTOR } = await import('../src/audit/audit-log.js');
  const config = loadConfig({ RATE_LIMIT: 'off', BASE_URL: 'http://localhost', DATA_DIR: 'unused', LOG_LEVEL: 'silent' });
  const store = await openStore(config, { db: await openPglite(undefined), deliver: false });
  const started = performance.now();
  await seedOrders(store.db, orders);
  const seeded = Math.round(performance.now() - started);
  const email = 'owner@bench.example';
  await store.staff.add(store.db, TERMINAL_ACTOR, email, 'owner');
  const { link } = await store.staff.signInLink(store.db, TERMINAL_ACTOR, email);
  const { secret } = await store.staff.useSignInLink(store.db, link.slice(link.lastIndexOf('/') + 1));
  const app = await buildApp(store);
  await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`READY ${(app.server.address() as { port: number }).port} __Host-storefront-admin=${secret} ${seeded}`);
  process.on('SIGTERM', () => void app.close().then(() => store.close()).then(() => process.exit(0)));
}

interface Child {
  port: number;
  words: string[];
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

async function startChild(args: string[]): Promise<Child> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_LEVEL: 'silent' } });
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  };
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^READY (\d+)(.*)$/.exec(line);
    if (match) return { port: Number(match[1]), words: match[2]!.trim().split(' '), cpuSeconds: () => processCpuSeconds(child.pid), stop };
  }
  await stop();
  throw new Error(`bench server ${args.join(' ')} did not start`);
}

export interface AdminRow {
  page: string;
  bytes: number;
  storeRps: number;
  bareRps: number;
  ratio: number;
  p50Ms: number;
  p99Ms: number;
  /** One request at a time: the answer's own time, without a queue. */
  aloneP99Ms: number;
  /** Milliseconds of the store's CPU per answer (user and system): what an answer costs, whatever else runs. */
  cpuMsPerAnswer: number;
  goal: string;
}

async function measure(url: string, seconds: number, headers: Record<string, string> = {}, connections = ADMIN_CONNECTIONS, target?: Child) {
  const cpuBefore = target?.cpuSeconds();
  const result = await autocannon({ url, connections, duration: seconds, headers });
  const cpuAfter = target?.cpuSeconds();
  const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? NaN : ((cpuAfter - cpuBefore) * 1000) / Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMs,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** The dashboard and the orders list, each beside bare node:http answering as many bytes. */
export async function benchAdmin(options: { seconds: number }): Promise<{ orders: number; seededMs: number; rows: AdminRow[] }> {
  const server = await startChild([fileURLToPath(import.meta.url), 'serve', String(ADMIN_ORDERS)]);
  const [cookie, seededMs] = server.words;
  const headers = { cookie: cookie!, accept: 'text/html' };
  const pages = [
    ['GET /admin (dashboard)', '/admin'],
    ['GET /admin/orders (first page of 50)', '/admin/orders'],
    ['GET /admin/orders?prepared=agent&fulfilment=unshipped', '/admin/orders?prepared=agent&fulfilment=unshipped'],
    ['GET /admin/orders?q=buyer12 (email prefix)', '/admin/orders?q=buyer12'],
    ['GET /admin/orders?page=150 (deep page)', '/admin/orders?page=150'],
  ] as const;
  const rows: AdminRow[] = [];
  try {
    for (const [label, pagePath] of pages) {
      const url = `http://127.0.0.1:${server.port}${pagePath}`;
      const probe = await fetch(url, { headers });
      const body = await probe.arrayBuffer();
      if (probe.status !== 200) {
        console.log(`(${label} not measured: it answered ${probe.status})`);
        continue;
      }
      const bare = await startChild(['bench/target.ts', 'bare', String(body.byteLength)]);
      try {
        const bareUrl = `http://127.0.0.1:${bare.port}/`;
        await measure(url, WARMUP_SECONDS, headers);
        await measure(bareUrl, WARMUP_SECONDS);
        const store = await measure(url, options.seconds, headers, ADMIN_CONNECTIONS, server);
        const baseline = await measure(bareUrl, options.seconds);
        const alone = await measure(url, Math.max(2, options.seconds / 2), headers, 1);
        if (store.non2xx || store.errors) console.log(`(${label}: ${store.non2xx} non-2xx, ${store.errors} errors)`);
        rows.push({
          page: label,
          bytes: body.byteLength,
          storeRps: Math.round(store.rps),
          bareRps: Math.round(baseline.rps),
          ratio: Number((store.rps / baseline.rps).toFixed(3)),
          p50Ms: store.p50,
          p99Ms: store.p99,
          aloneP99Ms: alone.p99,
          cpuMsPerAnswer: Number(store.cpuMs.toFixed(1)),
          goal: store.p99 < P99_GOAL_MS ? `p99 < ${P99_GOAL_MS} ms: met` : `p99 < ${P99_GOAL_MS} ms: MISSED`,
        });
      } finally {
        await bare.stop();
      }
    }
  } finally {
    await server.stop();
  }
  return { orders: ADMIN_ORDERS, seededMs: Number(seededMs), rows };
}

export function printAdmin(result: { orders: number; seededMs: number; rows: AdminRow[] }): void {
  console.log(
    `admin over ${result.orders.toLocaleString('en-US')} orders on the embedded database (seeded by bulk SQL in ${(result.seededMs / 1000).toFixed(1)} s), ` +
      `a signed-in session, ${ADMIN_CONNECTIONS} requests at a time:`,
  );
  console.table(result.rows);
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const [first, second] = process.argv.slice(2);
  if (first === 'serve') await serve(Number(second ?? ADMIN_ORDERS));
  else printAdmin(await benchAdmin({ seconds: Number(first ?? process.env.BENCH_SECONDS ?? 8) }));
}
