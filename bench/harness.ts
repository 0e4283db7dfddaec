/** What the bench scripts share: a target server in its own process, and a bounded autocannon load. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export interface Target {
  port: number;
  stop(): Promise<void>;
}

export async function startTarget(args: string[]): Promise<Target> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/target.ts', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const match = /^READY (\d+)$/.exec(line);
    if (match) {
      return {
        port: Number(match[1]),
        async stop() {
          child.kill('SIGTERM');
          if (child.exitCode === null) await once(child, 'exit');
        },
      };
    }
  }
  throw new Error(`bench target ${args.join(' ')} did not start`);
}

export interface Load {
  requestsPerSecond: number;
  /** Responses received. */
  responses: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  bytes: number;
  /** Responses by status code. */
  statusCodes: Record<string, number>;
}

export interface LoadOptions {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  paths?: string[];
  seconds?: number;
  /** Headers that change with every request (a client address), merged over `headers`. */
  headersPerRequest?: () => Record<string, string>;
}

export async function load(url: string, options: LoadOptions = {}): Promise<Load> {
  const perRequest = options.headersPerRequest;
  const setupRequest = perRequest ? (request: autocannon.Request) => ({ ...request, headers: { ...request.headers, ...perRequest() } }) : undefined;
  // Each connection walks the list of paths in turn (a shopper typing, many shoppers at once).
  const paths = options.paths ?? (setupRequest ? [new URL(url).pathname + new URL(url).search] : undefined);
  const result = await autocannon({
    url,
    ...(paths ? { requests: paths.map((path) => ({ method: 'GET' as const, path, ...(setupRequest ? { setupRequest } : {}) })) } : {}),
    connections: CONNECTIONS,
    duration: options.seconds ?? SECONDS,
    method: (options.method ?? 'GET') as 'GET',
    body: options.body,
    headers: options.headers,
  });
  return {
    requestsPerSecond: result.requests.average,
    responses: result.requests.total,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    bytes: Math.round(result.throughput.average / Math.max(1, result.requests.average)),
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count ?? 0])),
  };
}

/**
 * X-Forwarded-For values from the benchmarking range 198.18.0.0/15 (RFC 2544), one after another: a load from
 * `size` clients, each sending an even share, for a store that trusts this machine as its proxy.
 */
export function clientAddresses(size: number): () => Record<string, string> {
  if (!(size >= 1 && size <= 2 ** 17)) throw new Error(`a pool of 1 to ${2 ** 17} client addresses, not ${size}`);
  let next = 0;
  return () => {
    const n = next++ % size;
    return { 'x-forwarded-for': `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}` };
  };
}

/** Loads measured in turn, as one: requests per second averaged, the worst p99, counts summed. */
export function combine(runs: Load[]): Load {
  return {
    requestsPerSecond: runs.reduce((sum, run) => sum + run.requestsPerSecond, 0) / runs.length,
    responses: runs.reduce((sum, run) => sum + run.responses, 0),
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    bytes: Math.round(runs.reduce((sum, run) => sum + run.bytes, 0) / runs.length),
    statusCodes: runs.reduce<Record<string, number>>((sum, run) => {
      for (const [code, count] of Object.entries(run.statusCodes)) sum[code] = (sum[code] ?? 0) + count;
      return sum;
    }, {}),
  };
}
