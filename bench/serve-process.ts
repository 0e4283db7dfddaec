/**
 * The store as `npm start` runs it: `storefront serve` from the build (`npm run build`, once per bench run, then
 * dist/main.js), in a process of its own, configured by its environment alone. Its log (JSON lines on stdout) goes into a pipe
 * this process drains and counts, as a process manager's journal would; stderr is shown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoCatalog } from '../src/catalog/demo-catalog.js';
import { generatedProducts } from './generated-catalog.js';
import { processCpuSeconds, type Target } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = 'dist/main.js';
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;
/** What the store is given from this process's environment: nothing of the store's own configuration. */
const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG'];

/** What the store wrote to its log while it ran. */
export interface LogTally {
  lines: number;
  bytes: number;
  /** Lines at level error or fatal (pino's 50 and 60, or its labels). */
  errorLines: number;
  firstError?: string;
}

export interface ServeProcess extends Target {
  origin: string;
  log: LogTally;
  /** Milliseconds from the process's spawn to the first 200 of the path it was started with. */
  readyAfterMs: number;
  /** Its resident memory now (undefined where /proc is not). */
  rssBytes(): number | undefined;
}

/** A field of /proc/PID/status in bytes: VmRSS (resident now) or VmHWM (the most it was resident). */
function processMemory(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const kilobytes = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
  } catch {
    return undefined;
  }
}


let built: Promise<void> | undefined;

/** `npm run build`, as `npm start` runs it first; once per process (the bench's commands all use the build). */
function buildOnce(): Promise<void> {
  built ??= new Promise<void>((resolve, reject) => {
    const child = spawn('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-5000)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build failed (${code}): ${output}`))));
  });
  return built;
}

/** A port nobody listens on now, on loopback (the store is told it; a clash fails its start, loudly). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

function environment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...settings };
}

/** How pino writes the levels error and fatal: as numbers (50, 60) or, with a formatter, as labels. */
const ERROR_LEVELS = ['"level":50', '"level":60', '"level":"error"', '"level":"fatal"'].map((marker) => Buffer.from(marker));
/** Bytes kept from the end of a chunk, so a marker split across two chunks is still found. */
const CARRY = 16;

/**
 * Counts lines and bytes of the child's stdout as they pass, keeping nothing but the last few bytes. The load
 * generator runs in this process: the count works on the raw bytes (no decoding, no line strings, no regular
 * expression per line), so that counting tens of thousands of lines a second takes little from the load.
 */
function drainLog(child: ChildProcess, tally: LogTally): void {
  let carry = Buffer.alloc(0);
  child.stdout!.on('data', (chunk: Buffer) => {
    tally.bytes += chunk.length;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, end + 1)) tally.lines++;
    const text = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    for (const marker of ERROR_LEVELS) {
      for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + marker.length)) {
        // A marker wholly inside the carried bytes was counted with the chunk before.
        if (at + marker.length <= carry.length) continue;
        tally.errorLines++;
        if (tally.firstError === undefined) {
          const lineStart = text.lastIndexOf(10, at) + 1;
          const lineEnd = text.indexOf(10, at);
          tally.firstError = text.subarray(lineStart, lineEnd === -1 ? text.length : lineEnd).toString('utf8').slice(0, 300);
        }
      }
    }
    carry = Buffer.from(text.subarray(Math.max(0, text.length - CARRY)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `storefront serve` on 127.0.0.1 with `settings` as its whole configuration (PORT and HOST are set
 * here) and resolves once GET `readyPath` (/readyz unless given) answers 200, asked every `pollMs`. `main` runs
 * another build than this checkout's (bench/ab.ts), relative to the project.
 */
export async function startServe(settings: Record<string, string>, ready: { readyPath?: string; pollMs?: number; main?: string } = {}): Promise<ServeProcess> {
  const { readyPath = '/readyz', pollMs = 200, main } = ready;
  if (main === undefined) await buildOnce();
  const port = await freePort();
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [main ?? MAIN, 'serve'], {
    cwd: ROOT,
    env: environment({ ...settings, PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const log: LogTally = { lines: 0, bytes: 0, errorLines: 0 };
  drainLog(child, log);
  const origin = `http://127.0.0.1:${port}`;
  const serving: ServeProcess = {
    port,
    origin,
    log,
    readyAfterMs: 0,
    cpuSeconds: () => processCpuSeconds(child.pid),
    rssBytes: () => processMemory(child.pid, 'VmRSS'),
    stop: () => stopChild(child),
  };
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`storefront serve exited (${child.exitCode ?? child.signalCode}) before it was ready`);
      const status = await fetch(`${origin}${readyPath}`).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 0,
      );
      if (status === 200) return { ...serving, readyAfterMs: performance.now() - spawnedAt };
      if (Date.now() > deadline) throw new Error(`storefront serve was not ready within ${READY_TIMEOUT_MS / 1000} s (last answer ${status || 'none'})`);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/** Runs a storefront command (`import FILE`, `migrate`) to its end; rejects with its stderr when it fails. */
export async function runStorefront(args: string[], settings: Record<string, string>): Promise<string> {
  return (await measureStorefront(args, settings)).output;
}

/** How often a command's peak memory is read while it runs. */
const MEMORY_SAMPLE_MS = 100;

/**
 * runStorefront, timed, with the most memory the process held: Linux's high-water mark of its resident memory,
 * read every MEMORY_SAMPLE_MS (it only grows, so the last read before the exit is close to the peak).
 */
export async function measureStorefront(args: string[], settings: Record<string, string>): Promise<{ output: string; seconds: number; peakRssBytes: number | undefined }> {
  await buildOnce();
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, env: environment(settings), stdio: ['ignore', 'pipe', 'pipe'] });
  let peakRssBytes: number | undefined;
  const sampler = setInterval(() => (peakRssBytes = processMemory(child.pid, 'VmHWM') ?? peakRssBytes), MEMORY_SAMPLE_MS);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-10_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-10_000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(sampler);
  if (code !== 0) throw new Error(`storefront ${args.join(' ')} failed (${code}): ${output.trim().slice(-2000)}`);
  return { output, seconds: (performance.now() - started) / 1000, peakRssBytes };
}

/** The demo catalog's products, then PRODUCTS generated ones: what the bench's catalog file holds. */
function* benchProducts(products: number) {
  yield* demoCatalog.products;
  yield* generatedProducts(products);
}

/** Products written to the file at a time. */
const PRODUCTS_PER_WRITE = 1000;

/**
 * The demo catalog and PRODUCTS generated products in one JSON catalog file, in a directory of its own. Written a
 * thousand products at a time: at 100,000 products the document whole would take this process half a gigabyte.
 */
export function writeBenchCatalog(products: number): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-bench-catalog-'));
  const file = path.join(dir, 'catalog.json');
  const fd = openSync(file, 'w');
  try {
    let pending: string[] = [];
    let separator = '';
    writeSync(fd, '{"products":[');
    for (const product of benchProducts(products)) {
      pending.push(JSON.stringify(product));
      if (pending.length === PRODUCTS_PER_WRITE) {
        writeSync(fd, separator + pending.join(','));
        separator = ',';
        pending = [];
      }
    }
    if (pending.length > 0) writeSync(fd, separator + pending.join(','));
    writeSync(fd, `],"collections":${JSON.stringify(demoCatalog.collections ?? [])}}`);
  } finally {
    closeSync(fd);
  }
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The handles of that catalog's published products, demo first. */
export function benchCatalogHandles(products: number): string[] {
  const handles: string[] = [];
  for (const product of benchProducts(products)) if (product.published !== false) handles.push(product.handle);
  return handles;
}
