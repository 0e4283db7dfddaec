/**
 * `npm run bench`: throughput and latency of the storefront's hot paths next to a bare node:http server
 * answering a fixed JSON body of the same size, measured in the same run, printed as ratios. Every server
 * listens on 127.0.0.1 and every load is bounded in time.
 *   BENCH_SECONDS (default 8) per measurement; BENCH_CONNECTIONS (default 50); BENCH_APPROVALS (default 500) per backend.
 */
import { combine, load, startTarget, type Load, type Target } from './harness.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
// The cart and MCP benches live beside this file, each with its own issue.
const CART_BENCH = './cart.js';
const MCP_BENCH = './mcp.js';
const CATALOG_SIZE = Number(process.env.BENCH_PRODUCTS ?? 10_000);
const WARMUP_SECONDS = 2;
/** Checkout approvals posted per backend (BENCH_APPROVALS). */
const APPROVALS = Number(process.env.BENCH_APPROVALS ?? 500);

/** What shoppers type into the search box, letter by letter: every prefix of 2+ letters of these phrases. */
const SEARCH_QUERIES = ['espresso capsules', 'hydration drink stick', 'magnesium', 'vitamin d3', 'lemon-lime', 'cold brew', 'decaf', 'electrolyte sticks', 'melatonin', 'capsle', 'berry', 'omega-3 capsules']
  .flatMap((phrase) => Array.from({ length: phrase.length - 1 }, (_, i) => phrase.slice(0, i + 2)))
  .filter((q) => q.trim().length >= 2);

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
  note: string;
}

/**
 * Measures one storefront path against the bare server with a body of the same size. Both servers are up for the
 * whole comparison and warmed first (a JIT that has not seen the path yet, or the garbage an import left, is not
 * what a running store serves with); then they are loaded in turn, twice each, so a drift of this shared machine
 * falls on both sides of the ratio.
 */
async function compare(scenario: string, store: Target, path: string | string[], goal: number, extra: { p99Goal?: number } = {}): Promise<Row> {
  const paths = Array.isArray(path) ? path : [path];
  const url = `http://127.0.0.1:${store.port}${paths[0]}`;
  let total = 0;
  for (const p of paths) total += await responseSize(`http://127.0.0.1:${store.port}${p}`);
  const size = Math.round(total / paths.length);
  const bare = await startTarget(['bare', String(size)]);
  const storeLoad = () => load(url, Array.isArray(path) ? { paths, seconds: SECONDS / 2 } : { seconds: SECONDS / 2 });
  const bareLoad = () => load(`http://127.0.0.1:${bare.port}/`, { seconds: SECONDS / 2 });
  let measured: Load;
  let baseline: Load;
  try {
    await load(url, Array.isArray(path) ? { paths, seconds: WARMUP_SECONDS } : { seconds: WARMUP_SECONDS });
    await load(`http://127.0.0.1:${bare.port}/`, { seconds: WARMUP_SECONDS });
    const storeRuns: Load[] = [];
    const bareRuns: Load[] = [];
    for (let round = 0; round < 2; round++) {
      storeRuns.push(await storeLoad());
      bareRuns.push(await bareLoad());
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
    note: [met ? 'met' : 'MISSED', measured.non2xx ? `${measured.non2xx} non-2xx` : '', measured.errors ? `${measured.errors} errors` : '']
      .filter(Boolean)
      .join(', '),
  };
}

async function main(): Promise<void> {
  console.log(`storefront bench: ${SECONDS} s per measurement, ${CONNECTIONS} connections, Node ${process.version}, catalog of ${CATALOG_SIZE} generated products`);
  const rows: Row[] = [];
  const store = await startTarget(['store', String(CATALOG_SIZE), 'pglite']);
  try {
    rows.push(await compare('GET /products/{handle}.js', store, '/products/hydration-drink-stick.js', 0.75));
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
  } finally {
    await store.stop();
  }
  console.table(rows);

  const extra = process.argv.slice(2);
  if (extra.length === 0 || extra.includes('stock')) {
    const { benchStockChurn } = await import('./stock.js');
    const result = await benchStockChurn({ products: CATALOG_SIZE, seconds: SECONDS });
    console.log(
      `product reads at ${CATALOG_SIZE} products while ${result.changesPerSecond.toFixed(1)} stock changes/s run (${result.changes} changes, ${result.failedChanges} failed): ` +
        `p99 ${result.p99With} ms vs ${result.p99Without} ms without (${(result.p99With / Math.max(1, result.p99Without)).toFixed(2)}×, goal ≤ 2×); ` +
        `${Math.round(result.rpsWith)} vs ${Math.round(result.rpsWithout)} req/s; catalog reloads during the changes: ${result.catalogReloads}`,
    );
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
    }
  }
  if (extra.length === 0 || extra.includes('checkout')) {
    const { benchCheckoutApprovals } = await import('./checkout.js');
    for (const backend of ['pglite', 'postgres'] as const) {
      const result = await benchCheckoutApprovals({ backend, approvals: APPROVALS, connections: 10 });
      console.log(
        `checkout approvals through the page's POST on ${backend}: ${result.approvalsPerSecond.toFixed(1)} approvals/s, p50 ${result.p50Ms} ms, ` +
          `p99 ${result.p99Ms} ms (${result.approvals} approvals, 10 at a time; ${result.failures} failed; ${result.ordersPlaced} orders, ${result.unitsTaken} units taken)`,
      );
    }
  }
  if (extra.length === 0 || extra.includes('mcp')) {
    const mcpModule = (await import(MCP_BENCH).catch(() => undefined)) as
      | { benchMcpSearch?: (o: { seconds: number; connections: number }) => Promise<{ callsPerSecond: number; p99Ms: number; errors: number }> }
      | undefined;
    if (mcpModule?.benchMcpSearch) {
      const result = await mcpModule.benchMcpSearch({ seconds: SECONDS, connections: CONNECTIONS });
      console.log(`MCP tools/call search_catalog: ${Math.round(result.callsPerSecond)} calls/s, p99 ${result.p99Ms} ms, errors ${result.errors}`);
    }
  }
}

await main();
