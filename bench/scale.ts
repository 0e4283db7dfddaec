/**
 * The scale row: what a store costs as its catalog grows, measured on the store as `npm start` runs it (the build,
 * the embedded database in a directory, the request log at info into a drained pipe; RATE_LIMIT=off).
 * For each size: `storefront import` of the bench's catalog file into a new data directory (time, peak memory),
 * `storefront serve` from spawn to the first 200 of a product read, its memory then, predictive search over distinct
 * typed queries (each asked once, so none is answered from the store's answer cache), product reads of random
 * handles, and its memory after those loads.
 *
 * Each load runs twice, closed loops over kept-alive connections from this process:
 * - latency, BENCH_SCALE_CONNECTIONS (default 2) requests under way at once: the store has a core and the load
 *   generator the other, so an answer's time is the store's work and not a queue. The goals are read here.
 * - saturation, BENCH_SCALE_SATURATION_CONNECTIONS (default 10) at once: the store's throughput. Its latencies are
 *   mostly queueing on a 2-core machine, so the row also loads a bare node:http server the same way (the same
 *   number of product-read paths, an answer of the same size) as the floor this machine and load generator set.
 * The saturation loads ask other queries and handles than the latency loads, so neither is answered from what the
 * other left in the store's caches.
 *   BENCH_SCALE_SIZES (default 10000,100000) generated products per row; BENCH_SCALE_REQUESTS (default 20000)
 *   searches, and as many product reads, per load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatedProducts } from './generated-catalog.js';
import { SEARCH_QUERIES } from './search-queries.js';
import { startTarget } from './harness.js';
import { benchCatalogHandles, measureStorefront, startServe, writeBenchCatalog } from './serve-process.js';

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 20_000);
const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 2);
const SATURATION_CONNECTIONS = Number(process.env.BENCH_SCALE_SATURATION_CONNECTIONS ?? 10);
/** How often a starting store is asked for its first product. */
const START_POLL_MS = 25;
/** No single request of the loads may take longer; the loads are bounded in count and so in time. */
const REQUEST_TIMEOUT_MS = 30_000;
/** The goals at 100,000 products (issue 24), read from the latency loads. */
const GOALS = { startSeconds: 10, rssMegabytes: 1024, searchP99Ms: 15, productP99Ms: 5 };

export interface ScaleRow {
  products: number;
  importSeconds: number;
  importPeakMb: number | undefined;
  startSeconds: number;
  rssAfterStartMb: number | undefined;
  /** The latency loads. */
  searchP50Ms: number;
  searchP99Ms: number;
  productP99Ms: number;
  /** The saturation loads, and the bare server's p99 under its product-read load. */
  searchPerSecond: number;
  searchSaturatedP99Ms: number;
  productPerSecond: number;
  productSaturatedP99Ms: number;
  bareSaturatedP99Ms: number;
  rssAfterLoadMb: number | undefined;
  /** Answers other than 200, of every load. */
  failures: number;
}

/** A small deterministic generator, so every run asks the same queries and handles. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shuffled<T>(items: T[], next: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * `count` distinct queries as shoppers type them: the bench's typed phrases, then every prefix of two letters or
 * more of the generated products' titles (in a shuffled order of products), until there are enough; asked in a
 * shuffled order.
 */
export function distinctQueries(count: number, products: number): string[] {
  const next = random(7);
  const queries = new Set(SEARCH_QUERIES);
  const titles = shuffled(Array.from(generatedProducts(products), (product) => product.title.toLowerCase()), next);
  for (const title of titles) {
    for (let length = 2; length <= title.length && queries.size < count; length++) {
      const prefix = title.slice(0, length);
      if (prefix.trim() === prefix) queries.add(prefix);
    }
    if (queries.size >= count) break;
  }
  return shuffled([...queries], next);
}

interface Loaded {
  perSecond: number;
  latenciesMs: number[];
  failures: number;
}

/** GETs every path once, `connections` at a time over kept-alive connections, timing each answer. */
async function getEach(origin: string, paths: string[], connections: number): Promise<Loaded> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latenciesMs: number[] = [];
  let failures = 0;
  let next = 0;
  const get = (target: string) =>
    new Promise<number>((resolve, reject) => {
      const request = http.get(`${origin}${target}`, { agent, timeout: REQUEST_TIMEOUT_MS }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      request.on('timeout', () => request.destroy(new Error(`${target} took longer than ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', reject);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < paths.length) {
        const target = paths[next++]!;
        const sent = performance.now();
        const status = await get(target).catch(() => 0);
        latenciesMs.push(performance.now() - sent);
        if (status !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { perSecond: paths.length / seconds, latenciesMs, failures };
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

const megabytes = (bytes: number | undefined) => (bytes === undefined ? undefined : Math.round(bytes / 2 ** 20));
const milliseconds = (value: number) => Number(value.toFixed(1));

/** `count` reads of random products' JSON, drawn by a generator of its own seed. */
function randomReads(handles: string[], count: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () => `/products/${handles[Math.floor(next() * handles.length)]}.js`);
}

/** The bare server's p99 under the saturation load of product-read paths, answering a body of `bytes`. */
async function bareP99(paths: string[], bytes: number): Promise<number> {
  const bare = await startTarget(['bare', String(bytes)]);
  try {
    return percentile((await getEach(`http://127.0.0.1:${bare.port}`, paths, SATURATION_CONNECTIONS)).latenciesMs, 0.99);
  } finally {
    await bare.stop();
  }
}

/** One row: import, start, loads, each measured on a store of its own. */
export async function benchScaleRow(products: number, requests = REQUESTS): Promise<ScaleRow> {
  const catalog = writeBenchCatalog(products);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sf-bench-scale-'));
  try {
    const imported = await measureStorefront(['import', catalog.file], { DATA_DIR: dataDir });
    const handles = benchCatalogHandles(products);
    const firstRead = `/products/${handles[handles.length - 1]}.js`;
    const store = await startServe({ DATA_DIR: dataDir, RATE_LIMIT: 'off' }, { readyPath: firstRead, pollMs: START_POLL_MS });
    let productBytes = 0;
    try {
      const rssAfterStart = store.rssBytes();
      productBytes = (await (await fetch(`${store.origin}${firstRead}`)).arrayBuffer()).byteLength;
      const queries = distinctQueries(2 * requests, products).map((q) => `/search/suggest.json?q=${encodeURIComponent(q)}`);
      const search = await getEach(store.origin, queries.slice(0, requests), CONNECTIONS);
      const read = await getEach(store.origin, randomReads(handles, requests, 11), CONNECTIONS);
      const searchSaturated = await getEach(store.origin, queries.slice(requests), SATURATION_CONNECTIONS);
      const saturatedReads = randomReads(handles, requests, 13);
      const readSaturated = await getEach(store.origin, saturatedReads, SATURATION_CONNECTIONS);
      const rssAfterLoad = store.rssBytes();
      await store.stop();
      return {
        products,
        importSeconds: Number(imported.seconds.toFixed(1)),
        importPeakMb: megabytes(imported.peakRssBytes),
        startSeconds: Number((store.readyAfterMs / 1000).toFixed(2)),
        rssAfterStartMb: megabytes(rssAfterStart),
        searchP50Ms: milliseconds(percentile(search.latenciesMs, 0.5)),
        searchP99Ms: milliseconds(percentile(search.latenciesMs, 0.99)),
        productP99Ms: milliseconds(percentile(read.latenciesMs, 0.99)),
        searchPerSecond: Math.round(searchSaturated.perSecond),
        searchSaturatedP99Ms: milliseconds(percentile(searchSaturated.latenciesMs, 0.99)),
        productPerSecond: Math.round(readSaturated.perSecond),
        productSaturatedP99Ms: milliseconds(percentile(readSaturated.latenciesMs, 0.99)),
        // Measured with the store stopped, so that the two do not share the cores.
        bareSaturatedP99Ms: milliseconds(await bareP99(saturatedReads, productBytes)),
        rssAfterLoadMb: megabytes(rssAfterLoad),
        failures: search.failures + read.failures + searchSaturated.failures + readSaturated.failures,
      };
    } finally {
      await store.stop();
    }
  } finally {
    catalog.remove();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchScale(sizes = SIZES): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  // One store at a time, so that two do not share the cores.
  for (const products of sizes) rows.push(await benchScaleRow(products));
  return rows;
}

/** The rows, and at 100,000 products or more, which goals were met. */
export function printScale(rows: ScaleRow[]): void {
  console.log(
    `scale: storefront import, then storefront serve (embedded database, log at info, RATE_LIMIT=off); ${REQUESTS} distinct searches, ` +
      `then ${REQUESTS} reads of random products, ${CONNECTIONS} at a time (latency: p50, p99), then both again with other queries and ` +
      `handles ${SATURATION_CONNECTIONS} at a time (saturation: per second, p99; bare: node:http under that product-read load); ` +
      `memory is resident (RSS), import's at its peak`,
  );
  console.table(rows);
  for (const row of rows.filter((r) => r.products >= 100_000)) {
    const verdicts = [
      [`start ${row.startSeconds} s < ${GOALS.startSeconds} s`, row.startSeconds < GOALS.startSeconds],
      [`RSS ${row.rssAfterLoadMb} MB < ${GOALS.rssMegabytes} MB`, (row.rssAfterLoadMb ?? Infinity) < GOALS.rssMegabytes],
      [`search p99 ${row.searchP99Ms} ms < ${GOALS.searchP99Ms} ms`, row.searchP99Ms < GOALS.searchP99Ms],
      [`product p99 ${row.productP99Ms} ms < ${GOALS.productP99Ms} ms`, row.productP99Ms < GOALS.productP99Ms],
    ] as const;
    console.log(`at ${row.products} products: ${verdicts.map(([what, met]) => `${what} ${met ? 'met' : 'MISSED'}`).join('; ')}`);
  }
}
