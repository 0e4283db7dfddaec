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
  p99Ms: number;
  non2xx: number;
  errors: number;
  bytes: number;
}

export async function load(
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string>; paths?: string[]; seconds?: number } = {},
): Promise<Load> {
  const result = await autocannon({
    url,
    // Each connection walks the list of paths in turn (a shopper typing, many shoppers at once).
    ...(options.paths ? { requests: options.paths.map((path) => ({ method: 'GET' as const, path })) } : {}),
    connections: CONNECTIONS,
    duration: options.seconds ?? SECONDS,
    method: (options.method ?? 'GET') as 'GET',
    body: options.body,
    headers: options.headers,
  });
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    bytes: Math.round(result.throughput.average / Math.max(1, result.requests.average)),
  };
}


/** Loads measured in turn, as one: requests per second averaged, the worst p99, counts summed. */
export function combine(runs: Load[]): Load {
  return {
    requestsPerSecond: runs.reduce((sum, run) => sum + run.requestsPerSecond, 0) / runs.length,
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    bytes: Math.round(runs.reduce((sum, run) => sum + run.bytes, 0) / runs.length),
  };
}
