/** What the bench scripts share: a target server in its own process, and a bounded autocannon load. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export interface Target {
  port: number;
  /** CPU time the process has used so far, user and system, in seconds (undefined where /proc is not). */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

/** Linux reports a process's times in /proc/PID/stat in ticks of USER_HZ, 100 a second. */
const TICKS_PER_SECOND = 100;

export function processCpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (name) ", utime and stime are the 12th and 13th fields.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
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
        cpuSeconds: () => processCpuSeconds(child.pid),
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
  /**
   * Requests come from this many client addresses (X-Forwarded-For, for a store that trusts this machine as its
   * proxy), each connection with its own share of them in turn, so every address sends an even share.
   */
  clientAddresses?: number;
}

/** The n-th address of the benchmarking range 198.18.0.0/15 (RFC 2544). */
function benchmarkAddress(n: number): string {
  return `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;
}

/**
 * Gives each connection its own list of requests, one per address of its share: built once when the connection
 * is made, so changing the address costs the load generator nothing per request.
 */
function spreadOverAddresses(addresses: number, paths: string[]): (client: autocannon.Client) => void {
  const perConnection = Math.ceil(addresses / CONNECTIONS);
  if (!(addresses >= 1 && addresses <= 2 ** 17)) throw new Error(`1 to ${2 ** 17} client addresses, not ${addresses}`);
  let connection = 0;
  return (client) => {
    const first = connection++ * perConnection;
    const list = Array.from({ length: Math.max(perConnection, paths.length) }, (_, i) => ({
      method: 'GET' as const,
      path: paths[i % paths.length]!,
      headers: { 'x-forwarded-for': benchmarkAddress((first + (i % perConnection)) % addresses) },
    }));
    client.setRequests(list);
  };
}

export async function load(url: string, options: LoadOptions = {}): Promise<Load> {
  const target = new URL(url);
  const result = await autocannon({
    url,
    // Each connection walks the list of paths in turn (a shopper typing, many shoppers at once).
    ...(options.paths ? { requests: options.paths.map((path) => ({ method: 'GET' as const, path })) } : {}),
    ...(options.clientAddresses ? { setupClient: spreadOverAddresses(options.clientAddresses, options.paths ?? [target.pathname + target.search]) } : {}),
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
