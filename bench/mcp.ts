/**
 * Throughput of the commerce endpoint: `tools/call search_catalog` as a UCP client sends it (one JSON-RPC
 * request per POST, `Accept: application/json`, no initialize). The store runs in a child process on
 * 127.0.0.1 (port 0, RATE_LIMIT=off, embedded PostgreSQL, its own catalog plus BENCH_MCP_PRODUCTS
 * generated products, default none), so autocannon does not share its core. Bounded in time.
 * BENCH_MCP_QUERY sets the search text.
 *   node --import tsx bench/mcp.ts [SECONDS] [CONNECTIONS]     (alone: both MCP eras, the fast path and the SDK's)
 *   node --import tsx bench/mcp.ts serve PRODUCTS                (the child: prints "READY <port>")
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

interface AutocannonResult {
  requests: { average: number };
  latency: { p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: {
  url: string;
  method: 'POST';
  connections: number;
  duration: number;
  body: string;
  headers: Record<string, string>;
}) => Promise<AutocannonResult>;

/** Generated products beside the store's own (demo) catalog; 0 = the store as it ships. */
const PRODUCTS = Number(process.env.BENCH_MCP_PRODUCTS ?? 0);
const QUERY = process.env.BENCH_MCP_QUERY ?? 'hydration drink stick';

export const SEARCH_CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'search_catalog',
    arguments: { catalog: { query: QUERY, pagination: { limit: 10 } } },
  },
});

/** The same call with a member in params the fast path does not know: the SDK answers it. */
const SDK_SEARCH_CALL = JSON.stringify({ ...JSON.parse(SEARCH_CALL), params: { ...JSON.parse(SEARCH_CALL).params, trace: 'bench' } });

/** The same call as an MCP 2026-07-28 client sends it: `_meta` in params, the revision and method in headers. */
const MODERN_SEARCH_CALL = JSON.stringify({
  ...JSON.parse(SEARCH_CALL),
  params: {
    ...JSON.parse(SEARCH_CALL).params,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    },
  },
});
const MODERN_HEADERS = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'search_catalog' };
/** The 2026-07-28 call with one member more in params: the SDK's handler answers it. */
const MODERN_SDK_SEARCH_CALL = JSON.stringify({ ...JSON.parse(MODERN_SEARCH_CALL), params: { ...JSON.parse(MODERN_SEARCH_CALL).params, trace: 'bench' } });

/**
 * Which way a call goes: 2025's exact envelope (the fast path), 2025 through the SDK's transport, 2026-07-28's exact
 * envelope (classified and its headers checked, then the fast path), or 2026-07-28 through the SDK's handler.
 */
export type McpBenchPath = 'fast' | 'sdk' | 'modern' | 'modern-sdk';

const BODIES: Record<McpBenchPath, string> = { fast: SEARCH_CALL, sdk: SDK_SEARCH_CALL, modern: MODERN_SEARCH_CALL, 'modern-sdk': MODERN_SDK_SEARCH_CALL };

async function serve(products: number): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { loadConfig } = await import('../src/config.js');
  const { openStore } = await import('../src/store.js');
  const { openPglite } = await import('../src/db/database.js');
  const config = loadConfig({ RATE_LIMIT: 'off', BASE_URL: 'http://127.0.0.1', MCP_ALLOWED_HOSTS: '127.0.0.1', DATA_DIR: 'unused', LOG_LEVEL: 'silent' });
  const store = await openStore(config, { db: await openPglite(undefined) });
  if (products > 0) {
    const { importCatalog } = await import('../src/catalog/import/import-catalog.js');
    const { generateCatalog } = await import('./generated-catalog.js');
    await importCatalog(store.db, generateCatalog(products)); // beside the demo catalog seeded on open
    await store.catalog.refresh(store.db);
    await store.inventory.refresh(store.db);
  }
  const app = await buildApp(store);
  await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`READY ${(app.server.address() as { port: number }).port}`);
  process.on('SIGTERM', () => void app.close().then(() => store.close()).then(() => process.exit(0)));
}

/**
 * `path: 'sdk'` sends the same call with one member more, which the fast path leaves to the SDK's transport
 * (a pooled server, a fresh transport per request): the figure the fast path is measured against.
 */
/** Runs a bench server script in a child process until it prints "READY <port>". */
async function startChild(args: string[]): Promise<{ port: number; stop(): Promise<void> }> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  };
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^READY (\d+)$/.exec(line);
    if (match) return { port: Number(match[1]), stop };
  }
  await stop();
  throw new Error(`bench server ${args.join(' ')} did not start`);
}

export async function benchMcpSearch(options: {
  seconds: number;
  connections: number;
  path?: McpBenchPath;
}): Promise<{ callsPerSecond: number; p99Ms: number; errors: number; responseBytes: number }> {
  // The fast path takes only the exact envelope: one member more goes to the SDK.
  const body = BODIES[options.path ?? 'fast'];
  const server = await startChild([fileURLToPath(import.meta.url), 'serve', String(PRODUCTS)]);
  try {
    const url = `http://127.0.0.1:${server.port}/api/ucp/mcp`;
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...(options.path?.startsWith('modern') ? MODERN_HEADERS : {}) };
    const probe = await fetch(url, { method: 'POST', headers, body });
    const text = await probe.text();
    const parsed = JSON.parse(text) as unknown;
    const answer = (Array.isArray(parsed) ? parsed[0] : parsed) as { result?: { structuredContent?: { products?: unknown[] } } };
    if (!probe.ok || !answer.result?.structuredContent?.products?.length) throw new Error(`search_catalog answered ${probe.status}`);
    const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
    const result = await autocannon({ url, method: 'POST', connections: options.connections, duration: options.seconds, body, headers });
    return {
      callsPerSecond: result.requests.average,
      p99Ms: result.latency.p99,
      errors: result.errors + result.timeouts + result.non2xx,
      responseBytes: Buffer.byteLength(text),
    };
  } finally {
    await server.stop();
  }
}

/** The same load on bench/target.ts's bare node:http server answering a body of the same size: the ceiling here. */
export async function bareBaseline(bytes: number, seconds: number, connections: number): Promise<number> {
  const bare = await startChild(['bench/target.ts', 'bare', String(bytes)]);
  try {
    const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
    const result = await autocannon({
      url: `http://127.0.0.1:${bare.port}/`,
      method: 'POST',
      connections,
      duration: seconds,
      body: SEARCH_CALL,
      headers: { 'content-type': 'application/json' },
    });
    return result.requests.average;
  } finally {
    await bare.stop();
  }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const [first, second] = process.argv.slice(2);
  if (first === 'serve') {
    await serve(Number(second ?? PRODUCTS));
  } else {
    const seconds = Number(first ?? process.env.BENCH_SECONDS ?? 8);
    const connections = Number(second ?? process.env.BENCH_CONNECTIONS ?? 50);
    console.log(`MCP tools/call search_catalog ("${QUERY}", 10 per page, ${PRODUCTS} generated products + demo; ${seconds} s, ${connections} connections)`);
    let bytes = 0;
    const labels = {
      fast: '2025-11-25, exact call (fast path)          ',
      sdk: '2025-11-25 through the SDK                  ',
      modern: '2026-07-28, exact call (SDK checks, fast path)',
      'modern-sdk': '2026-07-28 through the SDK                  ',
    };
    for (const path of ['fast', 'sdk', 'modern', 'modern-sdk'] as const) {
      const result = await benchMcpSearch({ seconds, connections, path });
      bytes ||= result.responseBytes;
      console.log(
        `  ${labels[path]}: ` +
          `${Math.round(result.callsPerSecond)} calls/s, p99 ${result.p99Ms} ms, errors ${result.errors}, ${result.responseBytes} B per answer`,
      );
    }
    console.log(`  bare node:http, same size    : ${Math.round(await bareBaseline(bytes, seconds, connections))} responses/s`);
  }
}
