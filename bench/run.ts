/**
 * `npm run bench`: throughput and latency of the storefront's hot paths next to a bare node:http server
 * answering a fixed JSON body of the same size, measured in the same run, printed as ratios. Every server
 * listens on 127.0.0.1 and every load is bounded in time. The HTML product page is measured against a bare server
 * answering that page's own bytes (target.ts bare-file).
 *   BENCH_SECONDS (default 8) per measurement; BENCH_CONNECTIONS (default 50); BENCH_APPROVALS (default 500) per backend;
 *   BENCH_CLIENT_ADDRESSES (default 10000) clients the rate-limited product reads come from;
 *   BENCH_MIXED_SECONDS (default 30) for the mixed load against two instances, BENCH_MIXED_LOG_LEVEL (default info) its log level.
 * Sections after the read table: stock, cart, checkout, mcp, admin, mixed, scale (all by default; `none` for the table alone).
 * BENCH_ONLY=scale runs the scale row alone (scale.ts: import, start, memory, search and product reads at 10,000 and
 * 100,000 products; its own variables are described there).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { combine, load, startTarget, type Load, type Target } from './harness.js';
import { SEARCH_QUERIES } from './search-queries.js';
import { runStorefront, startServe, writeBenchCatalog, type LogTally } from './serve-process.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
// The cart and MCP benches live beside this file, each with its own issue.
const CART_BENCH = './cart.js';
const CATALOG_SIZE = Number(process.env.BENCH_PRODUCTS ?? 10_000);
const WARMUP_SECONDS = 2;
/** Checkout approvals posted per backend (BENCH_APPROVALS). */
const APPROVALS = Number(process.env.BENCH_APPROVALS ?? 500);
/** Distinct client addresses (X-Forwarded-For) the product reads under rate limits come from, each in turn. */
const CLIENT_ADDRESSES = Number(process.env.BENCH_CLIENT_ADDRESSES ?? 10_000);
const MIXED_SECONDS = Number(process.env.BENCH_MIXED_SECONDS ?? 30);
/** The product page measured (HTML), against a bare server answering its very bytes. */
const PRODUCT_PAGE = '/products/hydration-drink-stick';

async function responseSize(url: string): Promise<number> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return (await response.arrayBuffer()).byteLength;
}

interface Row {
  scenario: string;
  storeRps: number;
  bareRps: number;
  ratio: number;
  goal: string;
  p99Ms: number;
  /** Microseconds of CPU per answer, store / bare (load-independent where ratios of throughput drift). */
  cpuUsPerRequest: string;
  note: string;
}

/**
 * Measures one storefront path against the bare server with a body of the same size. Both servers are up for the
 * whole comparison and warmed first (a JIT that has not seen the path yet, or the garbage an import left, is not
 * what a running store serves with); then they are loaded in turn, twice each, so a drift of this shared machine
 * falls on both sides of the ratio.
 */
async function compare(
  scenario: string,
  store: Target,
  path: string | string[],
  goal: number,
  extra: { p99Goal?: number; clientAddresses?: number; log?: LogTally; bare?: () => Promise<Target> } = {},
): Promise<Row> {
  const paths = Array.isArray(path) ? path : [path];
  const url = `http://127.0.0.1:${store.port}${paths[0]}`;
  // A store builds its search index in the background once it has started, a slice between requests: a first search
  // finishes it, so that the loads measure the store as it runs for hours rather than its first seconds.
  await (await fetch(`http://127.0.0.1:${store.port}/search/suggest.json?q=a`)).arrayBuffer();
  let total = 0;
  for (const p of paths) total += await responseSize(`http://127.0.0.1:${store.port}${p}`);
  const size = Math.round(total / paths.length);
  const bare = await (extra.bare ? extra.bare() : startTarget(['bare', String(size)]));
  // The bare server gets the same requests, client addresses included.
  const { clientAddresses, log } = extra;
  const logLinesBefore = log?.lines ?? 0;
  let storeResponses = 0;
  // CPU time each server used during the measured loads (not the warm-up), for the CPU per answer.
  const cpu = { store: 0, bare: 0, known: true };
  const measuredCpu = async (side: 'store' | 'bare', target: Target, run: () => Promise<Load>) => {
    const before = target.cpuSeconds();
    const result = await run();
    const after = target.cpuSeconds();
    if (before === undefined || after === undefined) cpu.known = false;
    else cpu[side] += after - before;
    return result;
  };
  const storeLoad = async (seconds: number) => {
    const run = await load(url, { ...(Array.isArray(path) ? { paths } : {}), seconds, clientAddresses });
    storeResponses += run.responses;
    return run;
  };
  const bareLoad = (seconds: number) => load(`http://127.0.0.1:${bare.port}/`, { seconds, clientAddresses });
  let measured: Load;
  let baseline: Load;
  try {
    await storeLoad(WARMUP_SECONDS);
    await bareLoad(WARMUP_SECONDS);
    const storeRuns: Load[] = [];
    const bareRuns: Load[] = [];
    for (let round = 0; round < 2; round++) {
      storeRuns.push(await measuredCpu('store', store, () => storeLoad(SECONDS / 2)));
      bareRuns.push(await measuredCpu('bare', bare, () => bareLoad(SECONDS / 2)));
    }
    measured = combine(storeRuns);
    baseline = combine(bareRuns);
  } finally {
    await bare.stop();
  }
  const ratio = measured.requestsPerSecond / baseline.requestsPerSecond;
  const goals = [`≥ ${goal}`, ...(extra.p99Goal ? [`p99 < ${extra.p99Goal} ms`] : [])].join(', ');
  const met = ratio >= goal && (!extra.p99Goal || measured.p99Ms < extra.p99Goal);
  return {
    scenario: `${scenario} (${size} B)`,
    storeRps: Math.round(measured.requestsPerSecond),
    bareRps: Math.round(baseline.requestsPerSecond),
    ratio: Number(ratio.toFixed(2)),
    goal: goals,
    p99Ms: measured.p99Ms,
    cpuUsPerRequest: cpu.known
      ? `${Math.round((1e6 * cpu.store) / Math.max(1, measured.responses))} / ${Math.round((1e6 * cpu.bare) / Math.max(1, baseline.responses))}`
      : 'n/a',
    note: [
      met ? 'met' : 'MISSED',
      clientAddresses ? `429: ${measured.statusCodes['429'] ?? 0}` : '',
      log ? `${((log.lines - logLinesBefore) / Math.max(1, storeResponses)).toFixed(1)} log lines per request` : '',
      log?.errorLines ? `${log.errorLines} error lines logged` : '',
      measured.non2xx ? `${measured.non2xx} non-2xx` : '',
      measured.errors ? `${measured.errors} errors` : '',
    ]
      .filter(Boolean)
      .join(', '),
  };
}

/**
 * Product reads from the store as `npm start` serves it (embedded database in a directory, logs at info into a
 * pipe, rate limits on), with the same catalog imported first. It trusts loopback as its proxy, and each request
 * comes from the next of CLIENT_ADDRESSES client addresses: every request passes the limiter, within its budget.
 */
async function compareWithStartDefaults(): Promise<Row> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sf-bench-start-'));
  const catalog = writeBenchCatalog(CATALOG_SIZE);
  try {
    await runStorefront(['import', catalog.file], { DATA_DIR: dataDir });
    const store = await startServe({ DATA_DIR: dataDir, TRUST_PROXY: 'loopback' });
    try {
      return await compare('GET /products/{handle}.js, npm start defaults', store, '/products/hydration-drink-stick.js', 0.6, {
        clientAddresses: CLIENT_ADDRESSES,
        log: store.log,
      });
    } finally {
      await store.stop();
    }
  } finally {
    catalog.remove();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** What `tools/list` costs an agent before it does anything: the answer's bytes, for every tool (bound: 64 KB). */
async function toolsListSize(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/api/ucp/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const text = await response.text();
  const tools = (JSON.parse(text) as { result?: { tools?: unknown[] } }).result?.tools?.length ?? 0;
  const bytes = Buffer.byteLength(text);
  return `tools/list: ${bytes.toLocaleString('en-US')} bytes for ${tools} tools (bound 65,536: ${bytes <= 65_536 ? 'met' : 'MISSED'})`;
}

let sectionStarted = performance.now();
/** How long the section that just ended took, so a run's time can be planned. */
function took(section: string): void {
  console.log(`(${section}: ${Math.round((performance.now() - sectionStarted) / 1000)} s)`);
  sectionStarted = performance.now();
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'scale') return benchScaleSection();
  console.log(`storefront bench: ${SECONDS} s per measurement, ${CONNECTIONS} connections, Node ${process.version}, catalog of ${CATALOG_SIZE} generated products`);
  const rows: Row[] = [];
  const store = await startTarget(['store', String(CATALOG_SIZE), 'pglite']);
  try {
    rows.push(await compare('GET /products/{handle}.js', store, '/products/hydration-drink-stick.js', 0.7));
    const productPage = await fetch(`http://127.0.0.1:${store.port}${PRODUCT_PAGE}`);
    const productPageBytes = new Uint8Array(await productPage.arrayBuffer());
    if (productPage.ok) {
      const contentType = productPage.headers.get('content-type') ?? 'text/html; charset=utf-8';
      // The baseline answers the very bytes the store answered, with its content type.
      const pageFile = path.join(mkdtempSync(path.join(tmpdir(), 'sf-bench-page-')), 'page.html');
      writeFileSync(pageFile, productPageBytes);
      rows.push(await compare('GET /products/{handle}, the HTML page', store, PRODUCT_PAGE, 0.5, { bare: () => startTarget(['bare-file', pageFile, contentType]) }));
      rmSync(path.dirname(pageFile), { recursive: true, force: true });
    } else {
      console.log(`(product page not measured: ${PRODUCT_PAGE} answered ${productPage.status})`);
    }
    rows.push(await compare('GET /collections/all/products.json, 30 products', store, '/collections/all/products.json?limit=30&page=7', 0.5));
    const search = await fetch(`http://127.0.0.1:${store.port}/search/suggest.json?q=capsu`);
    await search.arrayBuffer();
    if (search.ok) {
      rows.push(
        await compare(`GET /search/suggest.json, ${SEARCH_QUERIES.length} typed queries`, store, SEARCH_QUERIES.map((q) => `/search/suggest.json?q=${encodeURIComponent(q)}`), 0.4, {
          p99Goal: 10,
        }),
      );
    } else {
      console.log(`(search not measured: /search/suggest.json answered ${search.status})`);
    }
    console.log(await toolsListSize(store.port));
  } finally {
    await store.stop();
  }
  // One store process at a time, so that two do not share the cores.
  rows.splice(1, 0, await compareWithStartDefaults());
  console.log(
    `rows: the bench's store (embedded database in memory, no request log, RATE_LIMIT=off); "npm start defaults": storefront serve ` +
      `as npm start runs it (embedded database in a directory, LOG_LEVEL info into a drained pipe, RATE_LIMIT on) with TRUST_PROXY=loopback, ` +
      `the requests spread evenly over ${CLIENT_ADDRESSES} client addresses (X-Forwarded-For, 198.18.0.0/15)`,
  );
  console.table(rows);
  took('read table');

  const extra = process.argv.slice(2);
  if (extra.length === 0 || extra.includes('stock')) {
    const { benchStockChurn } = await import('./stock.js');
    const result = await benchStockChurn({ products: CATALOG_SIZE, seconds: SECONDS });
    console.log(
      `product reads at ${CATALOG_SIZE} products while ${result.changesPerSecond.toFixed(1)} stock changes/s run (${result.changes} changes, ${result.failedChanges} failed): ` +
        `p99 ${result.p99With} ms vs ${result.p99Without} ms without (${(result.p99With / Math.max(1, result.p99Without)).toFixed(2)}×, goal ≤ 2×); ` +
        `${Math.round(result.rpsWith)} vs ${Math.round(result.rpsWithout)} req/s; catalog reloads during the changes: ${result.catalogReloads}`,
    );
    took('stock');
  }
  if (extra.length === 0 || extra.includes('cart')) {
    const cartModule = (await import(CART_BENCH).catch(() => undefined)) as
      | { benchCartAdds?: (o: { backend: 'pglite' | 'postgres'; seconds: number; connections: number }) => Promise<{ addsPerSecond: number; adds: number; lostUpdates: number }> }
      | undefined;
    if (cartModule?.benchCartAdds) {
      for (const backend of ['pglite', 'postgres'] as const) {
        const result = await cartModule.benchCartAdds({ backend, seconds: SECONDS, connections: CONNECTIONS });
        console.log(`cart adds on ${backend}: ${Math.round(result.addsPerSecond)} adds/s, ${result.adds} adds, lost updates ${result.lostUpdates}`);
      }
      took('cart');
    }
  }
  if (extra.length === 0 || extra.includes('checkout')) {
    const { benchCheckoutApprovals } = await import('./checkout.js');
    // The transaction alone (no proof), then as shipped: the buyer asks for the mailed code and approves with it.
    const manualLink = new Map<string, { approvalsPerSecond: number; approvalsPerStoreSecond: number }>();
    for (const proof of ['link', 'code'] as const) {
      for (const backend of ['pglite', 'postgres'] as const) {
        const result = await benchCheckoutApprovals({ backend, approvals: APPROVALS, connections: 10, proof });
        if (proof === 'link') manualLink.set(backend, result);
        const codes = result.codesPerSecond === undefined ? '' : `; codes mailed ${result.codesPerSecond.toFixed(1)}/s`;
        console.log(
          `checkout approvals through the page's POST on ${backend}, proof ${proof}: ${result.approvalsPerSecond.toFixed(1)} approvals/s ` +
            `(${result.approvalsPerStoreSecond.toFixed(1)} per second of the store's busy time), p50 ${result.p50Ms} ms, ` +
            `p99 ${result.p99Ms} ms (${result.approvals} approvals, 10 at a time; ${result.failures} failed; ${result.ordersPlaced} orders, ${result.unitsTaken} units taken${codes})`,
        );
      }
    }
    // PAYMENT_PROVIDER=stripe against the tests' stand-in: the post, the approval page, Pay on the stand-in, the return
    // that places the order; the ratios to the manual provider's approvals (proof link both) in this run, by the clock
    // and by the store's own busy time (the stand-in and the client share the cores). Goal: at least 0.8.
    for (const backend of ['pglite', 'postgres'] as const) {
      const result = await benchCheckoutApprovals({ backend, approvals: APPROVALS, connections: 10, proof: 'link', payment: 'stripe' });
      const manual = manualLink.get(backend)!;
      const ratio = result.approvalsPerSecond / manual.approvalsPerSecond;
      const storeRatio = result.approvalsPerStoreSecond / manual.approvalsPerStoreSecond;
      console.log(
        `checkout approvals paying on Stripe (stand-in) on ${backend}, proof link: ${result.approvalsPerSecond.toFixed(1)} approvals/s, ${ratio.toFixed(2)}x the manual provider's; ` +
          `${result.approvalsPerStoreSecond.toFixed(1)} per second of the store's busy time, ${storeRatio.toFixed(2)}x; ` +
          `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms (post, approval page, Pay, return; ${result.approvals} approvals, 10 at a time; ${result.failures} failed; ${result.ordersPlaced} orders, ${result.unitsTaken} units taken)`,
      );
    }
    took('checkout');
  }
  if (extra.length === 0 || extra.includes('mcp')) {
    const { benchMcpSearch, bareBaseline } = await import('./mcp.js');
    // Both MCP revisions, and the bare node:http server answering the same bytes in the same run (goal: 0.6x).
    const paths = [
      ['fast', 'MCP 2025-11-25 tools/call search_catalog (exact call: fast path)'],
      ['modern', 'MCP 2026-07-28 tools/call search_catalog (exact call: the SDK classifies, then the fast path)'],
      ['sdk', 'MCP 2025-11-25 tools/call search_catalog (through the SDK v2)'],
      ['modern-sdk', 'MCP 2026-07-28 tools/call search_catalog (through the SDK v2)'],
    ] as const;
    for (const [path, label] of paths) {
      const result = await benchMcpSearch({ seconds: SECONDS, connections: CONNECTIONS, path });
      const bare = await bareBaseline(result.responseBytes, SECONDS, CONNECTIONS);
      const ratio = result.callsPerSecond / bare;
      console.log(
        `${label}: ${Math.round(result.callsPerSecond)} calls/s, ${ratio.toFixed(2)}x bare node:http answering the same ${result.responseBytes} bytes ` +
          `(${Math.round(bare)}/s)${path === 'sdk' || path === 'modern-sdk' ? '' : `, goal 0.6x: ${ratio >= 0.6 ? 'met' : 'MISSED'}`}; p99 ${result.p99Ms} ms, errors ${result.errors}`,
      );
    }
    took('mcp');
  }
  if (extra.length === 0 || extra.includes('admin')) {
    // The merchant's admin over BENCH_ADMIN_ORDERS orders (10,000): the dashboard and the orders list, signed in (goal: p99 < 200 ms).
    const { benchAdmin, printAdmin } = await import('./admin.js');
    printAdmin(await benchAdmin({ seconds: SECONDS }));
    took('admin');
  }
  if (extra.length === 0 || extra.includes('mixed')) {
    const { benchMixed, printMixed } = await import('./mixed.js');
    printMixed(await benchMixed({ seconds: MIXED_SECONDS, connections: CONNECTIONS, products: CATALOG_SIZE }));
    took('mixed');
  }
  if (extra.length === 0 || extra.includes('scale')) await benchScaleSection();
}

/** The scale row: stores of their own at 10,000 and 100,000 products (minutes: each imports its catalog first). */
async function benchScaleSection(): Promise<void> {
  const { benchScale, printScale } = await import('./scale.js');
  printScale(await benchScale());
  took('scale');
}

await main();
