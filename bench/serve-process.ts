/**
 * The store as `npm start` runs it: `storefront serve` from the build (`npm run build`, once per bench run, then
 * dist/main.js), in a process of its own, configured by its environment alone. Its log (JSON lines on stdout) goes into a pipe
 * this process drains and counts, as a process manager's journal would; stderr is shown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoCatalog } from '../src/catalog/demo-catalog.js';
import type { CatalogDocument } from '../src/catalog/import/catalog-document.js';
import { generateCatalog } from './generated-catalog.js';
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
 * here) and resolves once GET /readyz answers 200.
 */
export async function startServe(settings: Record<string, string>): Promise<ServeProcess> {
  await buildOnce();
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    cwd: ROOT,
    env: environment({ ...settings, PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const log: LogTally = { lines: 0, bytes: 0, errorLines: 0 };
  drainLog(child, log);
  const origin = `http://127.0.0.1:${port}`;
  const serving: ServeProcess = { port, origin, log, cpuSeconds: () => processCpuSeconds(child.pid), stop: () => stopChild(child) };
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`storefront serve exited (${child.exitCode ?? child.signalCode}) before it was ready`);
      const status = await fetch(`${origin}/readyz`).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 0,
      );
      if (status === 200) return serving;
      if (Date.now() > deadline) throw new Error(`storefront serve was not ready within ${READY_TIMEOUT_MS / 1000} s (last answer ${status || 'none'})`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/** Runs a storefront command (`import FILE`, `migrate`) to its end; rejects with its stderr when it fails. */
export async function runStorefront(args: string[], settings: Record<string, string>): Promise<string> {
  await buildOnce();
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, env: environment(settings), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-10_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-10_000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`storefront ${args.join(' ')} failed (${code}): ${output.trim().slice(-2000)}`);
  return output;
}

/** The demo catalog and PRODUCTS generated products in one JSON catalog file, in a directory of its own. */
export function writeBenchCatalog(products: number): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-bench-catalog-'));
  const file = path.join(dir, 'catalog.json');
  const document: CatalogDocument = { ...demoCatalog, products: [...demoCatalog.products, ...generateCatalog(products).products] };
  writeFileSync(file, JSON.stringify(document));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The handles of that catalog's published products, demo first. */
export function benchCatalogHandles(products: number): string[] {
  return [...demoCatalog.products, ...generateCatalog(products).products].filter((product) => product.published !== false).map((product) => product.handle);
}
