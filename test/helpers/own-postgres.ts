/**
 * A PostgreSQL server of the test's own, on a free loopback port in a scratch directory, that the test may stop,
 * restart and start again to simulate an outage (never the shared server the other tests use). initdb refuses to
 * run as root, so as root the server runs as the `postgres` user, in a directory that user owns. Commands run
 * asynchronously: a store under test lives in the same process, and a blocked event loop would hang it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './browser.js';

const run = promisify(execFile);

/**
 * Where the server binaries are: on PATH, or where Debian's postgresql package installs them
 * (/usr/lib/postgresql/VERSION/bin, the newest version), which is not on PATH by default.
 */
function serverBinary(name: 'initdb' | 'pg_ctl'): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    const debian = '/usr/lib/postgresql';
    const versions = existsSync(debian) ? readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
    return versions.map((v) => path.join(debian, v, 'bin', name)).find((file) => existsSync(file));
  }
}
const INITDB = serverBinary('initdb');
const PG_CTL = serverBinary('pg_ctl');
/** Start and stop wait at most this long (pg_ctl -t). */
const PG_CTL_WAIT_SECONDS = 30;

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  start(): Promise<void>;
  /** `fast`: active connections are ended (what a restart by an operator does); `immediate`: as after a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl restart -m fast: connections are ended, and the server takes new ones once it is up again. */
  restart(): Promise<void>;
  /** Stops the server (if it runs) and deletes its directory; safe to call twice. */
  remove(): Promise<void>;
}

/** Why the helper cannot run here (a binary missing), or undefined when it can. */
export function ownPostgresUnavailable(): string | undefined {
  if (INITDB === undefined || PG_CTL === undefined) return `initdb or pg_ctl not found on PATH or in /usr/lib/postgresql (install PostgreSQL's server package to run this test)`;
  return undefined;
}

const asRoot = () => process.getuid?.() === 0;

/** Runs a server command, as the `postgres` user when this process is root. */
function asServerUser(command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return asRoot() ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
}

function ownerIds(user: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Initialises a cluster (trust authentication, no fsync: a test server) and starts it. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'storefront-own-pg-'));
  if (asRoot()) {
    const { uid, gid } = ownerIds('postgres');
    chownSync(dir, uid, gid);
  }
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const port = await freePort();
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const pgCtl = (...args: string[]) => asServerUser(PG_CTL!, ['-D', dataDir, '-t', String(PG_CTL_WAIT_SECONDS), ...args]);
  let running = false;
  let removed = false;

  const stopNow = () => {
    // The process is ending (a failed test, an interrupted run): the server must not outlive it.
    if (!running) return;
    const args = ['-D', dataDir, '-m', 'immediate', 'stop'];
    try {
      execFileSync(asRoot() ? 'runuser' : PG_CTL!, asRoot() ? ['-u', 'postgres', '--', PG_CTL!, ...args] : args, { stdio: 'ignore' });
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);

  const server: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pgCtl('-o', serverOptions, '-l', logFile, '-w', 'start');
      running = true;
    },
    async stop(mode = 'fast') {
      await pgCtl('-m', mode, '-w', 'stop');
      running = false;
    },
    async restart() {
      await pgCtl('-o', serverOptions, '-l', logFile, '-m', 'fast', '-w', 'restart');
      running = true;
    },
    async remove() {
      if (removed) return;
      removed = true;
      process.removeListener('exit', stopNow);
      if (running) await server.stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await asServerUser(INITDB!, ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions']);
    await server.start();
  } catch (error) {
    await server.remove();
    throw error;
  }
  return server;
}
