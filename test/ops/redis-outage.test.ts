/**
 * Redis outages (issue #11, item 4): with REDIS_URL the rate-limit counters live in Redis, and when Redis dies or
 * hangs the store keeps serving (fail open, without limits, logged and counted in the metrics) rather than failing
 * or making requests wait; when Redis is back, the limits count there again. The Redis is the test's own
 * (test/helpers/own-redis.ts), killed and started again under load; the shared one is never touched.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { startOwnRedis, ownRedisUnavailable, type OwnRedis } from '../helpers/own-redis.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

/** A request unanswered after this long counts as hung (a failure), not as slow. */
const HANG_MS = 10_000;
const WORKERS = 8;
/**
 * How many requests past a budget its first 429 may come. The store gives Redis 200 ms a command (a hung Redis must
 * not hold requests), and a loaded machine may miss that at the budget's edge: that request is served unlimited.
 */
const LATE_REFUSALS = 10;
/** An hourly budget for the check after the outage: none of it comes back while the test counts to its edge. */
const { rateLimits } = loadConfig({ RATE_LIMITS: 'other=120/h' });
const skip = ownRedisUnavailable();

interface Tally {
  statuses: Map<number, number>;
  failures: string[];
  answered: number;
}

for (const backend of backends) {
  describe(`${backend.name}: Redis killed, hung and restarted under load`, { skip }, () => {
    let redis: OwnRedis;
    let test: TestStore;
    let base: string;
    let variantId: number;
    /** The store's log lines (it logs at warn: no request lines). */
    const logged: Record<string, unknown>[] = [];
    const logDestination = { write: (line: string) => logged.push(JSON.parse(line) as Record<string, unknown>) };

    before(async () => {
      redis = await startOwnRedis();
      test = await startTestStore(backend, {
        config: { rateLimit: true, rateLimits, redisUrl: redis.url, trustProxy: ['127.0.0.0/8'], logLevel: 'warn' },
        app: { logger: logDestination },
      });
      await test.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
      variantId = test.store.catalog.snapshot.products[0]!.variants[0]!.id;
    });
    after(async () => {
      await test?.close();
      await redis?.remove();
    });

    /** One request from `client` (told by the trusted proxy on loopback); failures and hangs are recorded, not thrown. */
    async function send(tally: Tally, client: string, kind: number): Promise<Response | undefined> {
      const [path, init]: [string, RequestInit] =
        kind % 10 < 7
          ? ['/products/decaf-capsules.js', {}]
          : kind % 10 < 9
            ? ['/search/suggest.json?q=caps', {}]
            : ['/cart/add.js', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: variantId, quantity: 1 }) }];
      try {
        const response = await fetch(`${base}${path}`, {
          ...init,
          headers: { ...(init.headers as object), 'x-forwarded-for': client },
          signal: AbortSignal.timeout(HANG_MS),
        });
        await response.arrayBuffer();
        tally.answered++;
        tally.statuses.set(response.status, (tally.statuses.get(response.status) ?? 0) + 1);
        return response;
      } catch (error) {
        tally.failures.push(`${path}: ${(error as Error).message}`);
        return undefined;
      }
    }

    /** Load from many client addresses until `stop()` resolves. */
    async function underLoad(tally: Tally, work: () => Promise<void>): Promise<void> {
      let running = true;
      let sent = 0;
      const worker = async (w: number) => {
        while (running) {
          sent++;
          await send(tally, `10.${w}.${(sent >> 8) & 255}.${sent & 255}`, sent);
        }
      };
      const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
      try {
        await work();
      } finally {
        running = false;
        await Promise.all(workers);
      }
    }

    const newTally = (): Tally => ({ statuses: new Map(), failures: [], answered: 0 });

    /** Requests served so far without a rate-limit decision, because Redis failed (the metrics' counter). */
    async function servedUnlimited(): Promise<number> {
      const metrics = await (await fetch(`${base}/metrics`)).text();
      return Number(/^storefront_rate_limit_store_failures_total (\d+)/m.exec(metrics)?.[1]);
    }

    /** Waits until a request is counted in Redis again: its client's counter appears there. */
    async function countedAgain(tally: Tally): Promise<void> {
      const inspect = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        for (let probe = 0; ; probe++) {
          const client = `192.0.2.${probe % 250}`;
          await send(tally, client, 0);
          const keys = await inspect.keys(`*${client}`).catch(() => []);
          if (keys.length > 0) return;
          assert.ok(probe < 1000, 'the limits never came back after Redis returned');
          await sleep(20);
        }
      } finally {
        inspect.disconnect();
      }
    }

    async function answeredWhile(tally: Tally, count: number): Promise<void> {
      const from = tally.answered;
      while (tally.answered - from < count) await sleep(10);
    }

    it('Redis killed and started again during the load: no request fails or hangs, and the limits count in Redis again', async (t) => {
      const tally = newTally();
      let unlimitedWhileDown = 0;
      await underLoad(tally, async () => {
        await answeredWhile(tally, 200);
        await redis.kill();
        const before = await servedUnlimited();
        await answeredWhile(tally, 300);
        unlimitedWhileDown = (await servedUnlimited()) - before;
        await redis.start();
        await countedAgain(tally);
        await answeredWhile(tally, 200);
      });
      t.diagnostic(`answered ${tally.answered} (${JSON.stringify(Object.fromEntries(tally.statuses))}), ${unlimitedWhileDown} served without limits while Redis was down`);
      assert.deepEqual(tally.failures.slice(0, 5), []);
      assert.ok([...tally.statuses.keys()].every((status) => status < 500), 'no 5xx');
      assert.ok(unlimitedWhileDown > 0, 'requests were served while Redis was down');
      // Logged too: a warning that requests are served without limits, with how many failures it stands for.
      const warnings = logged.filter((line) => line.msg === 'rate-limit counters unavailable (Redis); serving requests without limits');
      assert.ok(warnings.length >= 1, JSON.stringify(logged.slice(0, 3)));
      assert.equal(warnings[0]!.level, 40);
      assert.ok(Number(warnings[0]!.failures) >= 1 && typeof warnings[0]!.error === 'string');
      assert.deepEqual(logged.filter((line) => Number(line.level) >= 50), [], 'nothing at error level: no request failed');

      // The limits hold again, counted in the new Redis: never a 429 within the budget, and one soon after it.
      const client = { 'x-forwarded-for': '203.0.113.99' };
      const budget = rateLimits.budgets.other.max;
      let limited: Response | undefined;
      for (let i = 1; i <= budget + LATE_REFUSALS && !limited; i++) {
        const response = await fetch(`${base}/nowhere`, { headers: client });
        await response.arrayBuffer();
        if (response.status !== 429) assert.equal(response.status, 404, `request ${i}`);
        else {
          assert.ok(i > budget, `refused at request ${i}, within the budget of ${budget}`);
          t.diagnostic(`first 429 at request ${i} (budget ${budget})`);
          limited = response;
        }
      }
      assert.ok(limited, `no 429 within ${LATE_REFUSALS} requests past the budget of ${budget}`);
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      // Reported in the metrics: the requests served without Redis, and the refusal.
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.ok(Number(/^storefront_rate_limit_store_failures_total (\d+)/m.exec(metrics)?.[1]) > 0, 'store failures counted');
      assert.ok(Number(/^storefront_rate_limited_requests_total\{route_class="other"\} (\d+)/m.exec(metrics)?.[1]) >= 1, '429 counted');
      const inspect = new Redis(redis.url);
      try {
        assert.ok((await inspect.keys('*203.0.113.99')).length > 0, 'the counter is in the restarted Redis');
      } finally {
        inspect.disconnect();
      }
    });

    it('a hung Redis (stopped with SIGSTOP) does not hang requests: they are served without limits, and counted again once it resumes', async (t) => {
      const tally = newTally();
      let unlimitedWhileHung = 0;
      try {
        await underLoad(tally, async () => {
          await answeredWhile(tally, 100);
          redis.pause();
          const before = await servedUnlimited();
          await answeredWhile(tally, 100);
          unlimitedWhileHung = (await servedUnlimited()) - before;
          redis.resume();
          await countedAgain(tally);
        });
      } finally {
        redis.resume();
      }
      t.diagnostic(`answered ${tally.answered} (${JSON.stringify(Object.fromEntries(tally.statuses))}), ${unlimitedWhileHung} served without limits while Redis hung`);
      assert.deepEqual(tally.failures.slice(0, 5), []);
      assert.ok([...tally.statuses.keys()].every((status) => status < 500), 'no 5xx');
      assert.ok(unlimitedWhileHung > 0, 'requests were served while Redis hung');
    });
  });
}
