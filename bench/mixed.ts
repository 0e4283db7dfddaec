/**
 * The mixed load (issue [operations]): shoppers and agents together against two instances of the store on one
 * PostgreSQL database, the load split between them as a load balancer would. Each request is drawn at random by
 * weight: browse 70% (a product by handle, popular ones most, a collection page, a /products.json page),
 * search 15% (typed prefixes), cart 10% (reads and adds on a pool of carts made beforehand, half through each
 * instance), MCP 5% (tools/call search_catalog and get_product, one JSON-RPC request per POST).
 *
 * The instances are `storefront serve` as npm start runs it (see serve-process.ts) with DATABASE_URL on a fresh
 * database this bench creates and drops, RATE_LIMIT=off (every request comes from this one address) and the
 * request log at LOG_LEVEL (BENCH_MIXED_LOG_LEVEL, default info, as npm start) into a drained pipe. Bounded in
 * time (a warm-up, then SECONDS) and in memory (fixed-size latency histograms, a fixed pool of carts).
 *
 *   node --import tsx bench/mixed.ts [SECONDS] [CONNECTIONS]
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { demoCatalog } from '../src/catalog/demo-catalog.js';
import { POSTGRES_URL } from '../test/helpers/store.js';
import { SEARCH_PHRASES, SEARCH_QUERIES } from './search-queries.js';
import { benchCatalogHandles, runStorefront, startServe, writeBenchCatalog, type LogTally, type ServeProcess } from './serve-process.js';

const WARMUP_SECONDS = 3;
/** Carts made before the load, each by a first add; the load's cart requests pick one at random. */
const CART_POOL = 400;
/** Each cart's adds rotate over this many variants of its own... */
const VARIANTS_PER_CART = 20;
/** ...and stop at this many (then the cart is only read), so no line passes CART_MAX_LINE_QUANTITY (10) by default. */
const ADDS_PER_CART = VARIANTS_PER_CART * 9;
/** Products whose variants are read to find the variants carts add (spread over the catalog). */
const VARIANT_SAMPLE_PRODUCTS = 60;
const PAGES_BROWSED = 10;
/**
 * Product views follow a power law over the catalog, as in a real store: u^7.2 for a uniform u puts 80% of views
 * on the first fifth of the handles and about half on the first 1% (the demo products and the first generated).
 */
const POPULARITY_EXPONENT = 7.2;

type Traffic = 'browse' | 'search' | 'cart' | 'mcp';
const TRAFFIC: Traffic[] = ['browse', 'search', 'cart', 'mcp'];

interface PoolCart {
  cookie: string;
  variants: number[];
  adds: number;
}

/** What requests are made of: the catalog's handles and the pool of carts. */
interface Shop {
  handles: string[];
  carts: PoolCart[];
}

interface Outgoing {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface RequestKind {
  name: string;
  traffic: Traffic;
  /** Percent of all requests. */
  weight: number;
  /** The request to send, and the kind it really is (a full cart's add is a read). */
  next(shop: Shop): { kind: RequestKind; request: Outgoing };
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const popular = (handles: readonly string[]): string => handles[Math.floor(Math.random() ** POPULARITY_EXPONENT * handles.length)]!;
const page = () => 1 + Math.floor(Math.random() * PAGES_BROWSED);
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const COLLECTIONS = (demoCatalog.collections ?? []).map((collection) => collection.handle);

let rpcId = 0;
function toolCall(name: string, args: Record<string, unknown>): Outgoing {
  const body = JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } });
  return { method: 'POST', path: '/api/ucp/mcp', headers: JSON_HEADERS, body };
}

const cartRead: RequestKind = {
  name: 'GET /cart.js',
  traffic: 'cart',
  weight: 6,
  next: (shop) => ({ kind: cartRead, request: { method: 'GET', path: '/cart.js', headers: { cookie: pick(shop.carts).cookie } } }),
};

const cartAdd: RequestKind = {
  name: 'POST /cart/add.js',
  traffic: 'cart',
  weight: 4,
  next(shop) {
    const cart = pick(shop.carts);
    if (cart.adds >= ADDS_PER_CART) return cartRead.next(shop);
    const variant = cart.variants[++cart.adds % VARIANTS_PER_CART]!;
    return {
      kind: cartAdd,
      request: { method: 'POST', path: '/cart/add.js', headers: { ...JSON_HEADERS, cookie: cart.cookie }, body: JSON.stringify({ items: [{ id: variant, quantity: 1 }] }) },
    };
  },
};

const KINDS: RequestKind[] = [
  {
    name: 'GET /products/{handle}.js',
    traffic: 'browse',
    weight: 40,
    next(shop) {
      return { kind: this, request: { method: 'GET', path: `/products/${popular(shop.handles)}.js`, headers: {} } };
    },
  },
  {
    name: 'GET /collections/{handle}/products.json',
    traffic: 'browse',
    weight: 15,
    next() {
      // Two in three on the whole catalog's pages; the demo collections have one page each.
      const path = Math.random() < 2 / 3 ? `/collections/all/products.json?page=${page()}` : `/collections/${pick(COLLECTIONS)}/products.json`;
      return { kind: this, request: { method: 'GET', path, headers: {} } };
    },
  },
  {
    name: 'GET /products.json',
    traffic: 'browse',
    weight: 15,
    next() {
      return { kind: this, request: { method: 'GET', path: `/products.json?page=${page()}`, headers: {} } };
    },
  },
  {
    name: 'GET /search/suggest.json',
    traffic: 'search',
    weight: 15,
    next() {
      return { kind: this, request: { method: 'GET', path: `/search/suggest.json?q=${encodeURIComponent(pick(SEARCH_QUERIES))}`, headers: {} } };
    },
  },
  cartRead,
  cartAdd,
  {
    name: 'MCP search_catalog',
    traffic: 'mcp',
    weight: 3,
    next() {
      return { kind: this, request: toolCall('search_catalog', { catalog: { query: pick(SEARCH_PHRASES), pagination: { limit: 10 } } }) };
    },
  },
  {
    name: 'MCP get_product',
    traffic: 'mcp',
    weight: 2,
    next(shop) {
      return { kind: this, request: toolCall('get_product', { catalog: { id: popular(shop.handles) } }) };
    },
  },
];

function drawKind(): RequestKind {
  let r = Math.random() * 100;
  for (const kind of KINDS) if ((r -= kind.weight) < 0) return kind;
  return KINDS[0]!;
}

/** Latencies in 0.1 ms steps up to 1 s, then 1 ms steps up to 10 s (autocannon's timeout); fixed size. */
class LatencyHistogram {
  private static readonly FINE = 10_000;
  private static readonly SIZE = LatencyHistogram.FINE + 9_000;
  readonly counts = new Uint32Array(LatencyHistogram.SIZE);
  total = 0;

  record(ms: number): void {
    const bucket = ms < 1000 ? Math.floor(ms * 10) : Math.min(LatencyHistogram.SIZE - 1, LatencyHistogram.FINE + Math.floor(ms - 1000));
    this.counts[bucket]!++;
    this.total++;
  }

  add(other: LatencyHistogram): this {
    for (let i = 0; i < other.counts.length; i++) this.counts[i]! += other.counts[i]!;
    this.total += other.total;
    return this;
  }

  /** The upper bound of the bucket holding the p-th percentile, in ms. */
  percentile(p: number): number {
    const rank = Math.ceil((this.total * p) / 100);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank && seen > 0) return i < LatencyHistogram.FINE ? (i + 1) / 10 : 1000 + (i - LatencyHistogram.FINE + 1);
    }
    return 0;
  }
}

interface Tally {
  responses: number;
  statuses: Map<number, number>;
  latency: LatencyHistogram;
}

const newTally = (): Tally => ({ responses: 0, statuses: new Map(), latency: new LatencyHistogram() });

function mergeTallies(tallies: Tally[]): Tally {
  const merged = newTally();
  for (const tally of tallies) {
    merged.responses += tally.responses;
    merged.latency.add(tally.latency);
    for (const [status, count] of tally.statuses) merged.statuses.set(status, (merged.statuses.get(status) ?? 0) + count);
  }
  return merged;
}

const countWhere = (tally: Tally, test: (status: number) => boolean) => [...tally.statuses].reduce((sum, [status, count]) => sum + (test(status) ? count : 0), 0);

interface MixRun {
  seconds: number;
  byKind: Map<RequestKind, Tally>;
  /** Responses per instance, in the order of the origins. */
  byInstance: number[];
  /** CPU time both instances used during the load (user and system), when the system tells. */
  instanceCpuSeconds?: number;
  /** Connection errors and timeouts (no response). */
  errors: number;
  timeouts: number;
  /** MCP answers with HTTP 200 whose JSON-RPC says error or isError: true, and the first of them. */
  mcpErrors: number;
  firstMcpError?: string;
}

/** One bounded autocannon load per instance, started together, each with half of the connections. */
async function runMix(instances: ServeProcess[], shop: Shop, seconds: number, connections: number): Promise<MixRun> {
  const origins = instances.map((instance) => instance.origin);
  const cpuUsed = () => {
    const times = instances.map((instance) => instance.cpuSeconds());
    return times.every((time) => time !== undefined) ? times.reduce((sum, time) => sum + time, 0) : undefined;
  };
  const byKind = new Map(KINDS.map((kind) => [kind, newTally()]));
  const byInstance = origins.map(() => 0);
  let mcpErrors = 0;
  let firstMcpError: string | undefined;
  // onResponse and the instance's 'response' event follow each other for one response of one connection
  // (one request in flight per connection): the first says which kind it was, the second how long it took.
  let answered: RequestKind = KINDS[0]!;
  const requests: autocannon.Request[] = [
    {
      setupRequest: (request, context) => {
        const { kind, request: outgoing } = drawKind().next(shop);
        (context as { kind?: RequestKind }).kind = kind;
        return { ...request, ...outgoing };
      },
      onResponse: (status, body, context) => {
        answered = (context as { kind: RequestKind }).kind;
        if (answered.traffic === 'mcp' && status === 200) {
          const answer = JSON.parse(body) as { error?: unknown; result?: { isError?: boolean } };
          if (answer.error !== undefined || answer.result?.isError) {
            mcpErrors++;
            firstMcpError ??= body.slice(0, 300);
          }
        }
      },
    },
  ];
  const cpuBefore = cpuUsed();
  const started = performance.now();
  const results = await Promise.all(
    origins.map(
      (origin, i) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          // With a callback autocannon returns its instance, whose 'response' event carries each latency.
          const instance = autocannon(
            { url: origin, connections: Math.max(1, Math.round(connections / origins.length)), duration: seconds, requests },
            (error, result) => (error ? reject(error as Error) : resolve(result)),
          );
          instance.on('response', (_client, status, _bytes, ms) => {
            const tally = byKind.get(answered)!;
            tally.responses++;
            tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
            tally.latency.record(ms);
            byInstance[i]!++;
          });
        }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = cpuUsed();
  const instanceCpuSeconds = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
  return {
    seconds: elapsed,
    byKind,
    byInstance,
    instanceCpuSeconds,
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    timeouts: results.reduce((sum, result) => sum + result.timeouts, 0),
    mcpErrors,
    firstMcpError,
  };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseUrl(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Variants in stock from products spread over the catalog, then CART_POOL carts, each made by a first add. */
async function prepareShop(origins: string[], handles: string[]): Promise<Shop> {
  const variants: number[] = [];
  for (let i = 0; i < VARIANT_SAMPLE_PRODUCTS; i++) {
    const handle = handles[Math.floor((i * handles.length) / VARIANT_SAMPLE_PRODUCTS)]!;
    const response = await fetch(`${origins[i % origins.length]}/products/${handle}.js`);
    if (!response.ok) throw new Error(`/products/${handle}.js answered ${response.status}`);
    const product = (await response.json()) as { variants: { id: number; available: boolean }[] };
    variants.push(...product.variants.filter((variant) => variant.available).map((variant) => variant.id));
  }
  if (variants.length < VARIANTS_PER_CART) throw new Error(`only ${variants.length} variants in stock among ${VARIANT_SAMPLE_PRODUCTS} products`);
  const carts: PoolCart[] = [];
  const makeCart = async (i: number) => {
    const own = Array.from({ length: VARIANTS_PER_CART }, (_, j) => variants[(i * VARIANTS_PER_CART + j) % variants.length]!);
    const response = await fetch(`${origins[i % origins.length]}/cart/add.js`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ id: own[0], quantity: 1 }] }),
    });
    await response.arrayBuffer();
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('cart='))?.split(';')[0];
    if (response.status !== 200 || !cookie) throw new Error(`making a cart answered ${response.status}`);
    carts[i] = { cookie, variants: own, adds: 0 };
  };
  for (let i = 0; i < CART_POOL; i += 10) await Promise.all(Array.from({ length: Math.min(10, CART_POOL - i) }, (_, j) => makeCart(i + j)));
  return { handles, carts };
}

export interface MixedResult {
  instances: number;
  connections: number;
  logLevel: string;
  run: MixRun;
  /** Each instance's log, counted until it stopped. */
  logs: LogTally[];
  /** Each instance's lines at error level when the load ended (the rest were written while it stopped). */
  errorLinesAtLoadEnd: number[];
  products: number;
}

export async function benchMixed(options: { seconds: number; connections: number; products: number }): Promise<MixedResult> {
  const logLevel = process.env.BENCH_MIXED_LOG_LEVEL ?? 'info';
  const database = `sf_bench_${randomBytes(6).toString('hex')}`;
  const catalog = writeBenchCatalog(options.products);
  const instances: ServeProcess[] = [];
  let created = false;
  const cleanUp = async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop()));
    if (created) await adminQuery(`drop database if exists ${database} with (force)`).catch((error: unknown) => console.error(`could not drop ${database}: ${String(error)}`));
    created = false;
    catalog.remove();
  };
  const interrupted = () => void cleanUp().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await adminQuery(`create database ${database}`);
    created = true;
    const settings = { DATABASE_URL: databaseUrl(database), RATE_LIMIT: 'off', LOG_LEVEL: logLevel };
    await runStorefront(['import', catalog.file], settings);
    // Both start together; one that started is stopped with the rest even when the other failed.
    const started = await Promise.allSettled([startServe(settings), startServe(settings)]);
    for (const outcome of started) if (outcome.status === 'fulfilled') instances.push(outcome.value);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    const shop = await prepareShop(
      instances.map((instance) => instance.origin),
      benchCatalogHandles(options.products),
    );
    await runMix(instances, shop, WARMUP_SECONDS, options.connections);
    const run = await runMix(instances, shop, options.seconds, options.connections);
    const logs = instances.map((instance) => instance.log);
    const errorLinesAtLoadEnd = logs.map((log) => log.errorLines);
    return { instances: instances.length, connections: options.connections, logLevel, run, logs, errorLinesAtLoadEnd, products: options.products };
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await cleanUp();
  }
}

const statusList = (statuses: Map<number, number>) =>
  [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');

function tableRow(name: string, tally: Tally, all: number, seconds: number) {
  return {
    requests: name,
    share: `${((100 * tally.responses) / Math.max(1, all)).toFixed(1)}%`,
    'req/s': Math.round(tally.responses / seconds),
    'p50 ms': tally.latency.percentile(50),
    'p99 ms': tally.latency.percentile(99),
    statuses: statusList(tally.statuses),
  };
}

export function printMixed(result: MixedResult): void {
  const { run } = result;
  const all = mergeTallies([...run.byKind.values()]);
  const byTraffic = TRAFFIC.map((traffic) => [traffic, mergeTallies(KINDS.filter((kind) => kind.traffic === traffic).map((kind) => run.byKind.get(kind)!))] as const);
  console.log(
    `mixed load: ${result.instances} instances of storefront serve on one fresh PostgreSQL database, RATE_LIMIT=off (one client address), ` +
      `LOG_LEVEL=${result.logLevel} into a drained pipe; demo catalog + ${result.products} generated products; ${result.connections} connections ` +
      `split across the instances; ${run.seconds.toFixed(1)} s after a ${WARMUP_SECONDS} s warm-up; ${CART_POOL} carts made beforehand`,
  );
  console.table([
    ...byTraffic.map(([traffic, tally]) => tableRow(traffic, tally, all.responses, run.seconds)),
    tableRow('all', all, all.responses, run.seconds),
    ...KINDS.map((kind) => tableRow(`  ${kind.traffic}: ${kind.name}`, run.byKind.get(kind)!, all.responses, run.seconds)),
  ]);
  const failed = countWhere(all, (status) => status >= 400) + run.errors;
  const serverErrors = countWhere(all, (status) => status >= 500);
  console.log(
    `  ${Math.round(all.responses / run.seconds)} req/s (${run.byInstance.map((n) => Math.round(n / run.seconds)).join(' + ')} by instance), ` +
      `p50 ${all.latency.percentile(50)} ms, p99 ${all.latency.percentile(99)} ms; ` +
      `errors ${failed} of ${all.responses + run.errors} (${((100 * failed) / Math.max(1, all.responses + run.errors)).toFixed(2)}%: 4xx/5xx answers, ${run.errors} without an answer, ${run.timeouts} of them timeouts); ` +
      `5xx: ${serverErrors} (goal 0: ${serverErrors === 0 ? 'met' : 'MISSED'}); MCP calls answered with a JSON-RPC error: ${run.mcpErrors}` +
      (run.firstMcpError ? ` (the first: ${run.firstMcpError})` : ''),
  );
  console.log(`  statuses: ${statusList(all.statuses)}`);
  if (run.instanceCpuSeconds !== undefined) {
    // CPU time, unlike throughput, hardly depends on what else the machine runs meanwhile.
    console.log(
      `  the instances used ${run.instanceCpuSeconds.toFixed(1)} CPU-seconds (${((100 * run.instanceCpuSeconds) / run.seconds).toFixed(0)}% of one core): ` +
        `${((1000 * run.instanceCpuSeconds) / Math.max(1, all.responses)).toFixed(2)} ms of CPU per request, ${Math.round(all.responses / Math.max(0.01, run.instanceCpuSeconds))} requests per CPU-second (PostgreSQL's own not counted)`,
    );
  }
  console.log(
    `  logs: ${result.logs
      .map((log, i) => `${log.lines} lines, ${(log.bytes / 1e6).toFixed(1)} MB, ${log.errorLines} at error level (${result.errorLinesAtLoadEnd[i]} before the instance was stopped)`)
      .join('; ')}` +
      (result.logs.find((log) => log.firstError) ? `; first error: ${result.logs.find((log) => log.firstError)!.firstError}` : ''),
  );
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const seconds = Number(process.argv[2] ?? process.env.BENCH_MIXED_SECONDS ?? 30);
  const connections = Number(process.argv[3] ?? process.env.BENCH_CONNECTIONS ?? 50);
  printMixed(await benchMixed({ seconds, connections, products: Number(process.env.BENCH_PRODUCTS ?? 10_000) }));
}
