/**
 * A Redis server of the test's own (redis-server on a free loopback port, nothing saved to disk) that the test may
 * kill and start again to simulate an outage; never the shared one on 6379 the other tests use. The server is a
 * child of this process, killed when the test ends or the process exits.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './browser.js';

const REDIS_SERVER = '/usr/bin/redis-server';
/** How long start() waits for the server to answer PING. */
const START_LIMIT_MS = 10_000;

export interface OwnRedis {
  /** redis://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Starts the server on its port (again, after kill). */
  start(): Promise<void>;
  /** SIGKILL, as a crash: open connections drop at once, nothing is saved. */
  kill(): Promise<void>;
  /** SIGSTOP: the server holds its connections but answers nothing (a hung server); resume() lets it go on. */
  pause(): void;
  resume(): void;
  /** Kills the server if it runs; safe to call twice. */
  remove(): Promise<void>;
}

/** Why the helper cannot run here (no redis-server), or undefined when it can. */
export function ownRedisUnavailable(): string | undefined {
  try {
    execFileSync(REDIS_SERVER, ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `${REDIS_SERVER} is missing (install redis-server to run this test)`;
  }
}

async function answersPing(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const killNow = () => child?.kill('SIGKILL');
  process.once('exit', killNow);

  const server: OwnRedis = {
    url,
    port,
    async start() {
      child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      const started = Date.now();
      while (!(await answersPing(url))) {
        if (child.exitCode !== null || Date.now() - started > START_LIMIT_MS) throw new Error(`redis-server on port ${port} did not start`);
        await sleep(20);
      }
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = once(running, 'exit');
      running.kill('SIGKILL');
      await exited;
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async remove() {
      process.removeListener('exit', killNow);
      await server.kill();
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.remove();
    throw error;
  }
  return server;
}
