/**
 * Retry-After is the time until the next request would be served (issue 24, item 1): a client that waits it is
 * served, one that waits a second less is not, and it is never a whole period. Checked on the counters with an
 * injected clock over budgets and arrival patterns, and on the app's 429 with a real short wait, with the counters in
 * memory and in Redis (the shared one on 127.0.0.1:6379, under a prefix of this run's own).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type RateBudget } from '../../src/config.js';
import { LocalCounters, type Demand } from '../../src/http/rate-limit.js';
import { counterSetups } from '../helpers/limit-setups.js';
import { dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const { setups } = counterSetups('retry-after');

/** Retry-After as the app sends it: whole seconds, rounded up, at least 1. */
const retryAfterOf = (waitMs: number) => Math.max(1, Math.ceil(waitMs / 1000));

describe('Retry-After on the counters (injected clock)', () => {
  const budgets: RateBudget[] = [
    { max: 1, periodMs: 1_000 },
    { max: 3, periodMs: 1_000 },
    { max: 60, periodMs: 60_000 },
    { max: 7, periodMs: 60_000 },
    { max: 600, periodMs: 60_000 },
    { max: 3000, periodMs: 3_600_000 },
    { max: 5, periodMs: 3_600_000 },
  ];

  for (const budget of budgets) {
    it(`${budget.max} per ${budget.periodMs / 1000} s: waiting Retry-After is enough, a second less is not, and it is at most one request's share`, () => {
      let now = 1_700_000_000_000;
      const counters = new LocalCounters(100, () => now);
      const demands: Demand[] = [{ name: 'other', key: 'client', budget }];
      // A client sending in bursts at irregular moments (a fixed sequence), retrying when told.
      let step = 7;
      let refusals = 0;
      try {
        for (let request = 0; request < 3 * budget.max + 2000 && refusals < 200; request++) {
          step = (step * 7919 + 13) % 1_000_003;
          now += step % 3 === 0 ? step % Math.ceil(budget.periodMs / budget.max) : 0;
          const over = counters.take(demands, true);
          if (over === undefined) continue;
          refusals++;
          const retryAfter = retryAfterOf(over.waitMs);
          assert.ok(retryAfter * 1000 < over.waitMs + 1000, `Retry-After ${retryAfter} s for a wait of ${over.waitMs} ms`);
          assert.ok(retryAfter <= Math.max(1, Math.ceil(budget.periodMs / budget.max / 1000)), `Retry-After ${retryAfter} s: more than one request's share`);
          // A second less than Retry-After is still refused (asked without taking) ...
          assert.ok(counters.take(demands, false), 'nothing changes while refused');
          const refusedAt = now;
          now = refusedAt + (retryAfter - 1) * 1000;
          assert.ok(counters.take(demands, false), `served ${retryAfter - 1} s into a wait of ${over.waitMs} ms`);
          // ... and Retry-After itself is enough.
          now = refusedAt + retryAfter * 1000;
          assert.equal(counters.take(demands, true), undefined, `refused after waiting Retry-After (${retryAfter} s)`);
        }
        assert.ok(refusals > 0, 'the pattern went over the budget');
      } finally {
        counters.close();
      }
    });
  }
});


for (const setup of setups) {
  describe(`${setup.name}: Retry-After on the app's 429`, () => {
    let test: TestStore;
    before(async () => {
      const { rateLimits } = loadConfig({ RATE_LIMITS: 'other=1/s,search=2/min' });
      test = await startTestStore(setup.backend, { config: { rateLimit: true, rateLimits, ...setup.config } });
    });
    after(() => test.close());

    it('a client that waits Retry-After is served', async () => {
      const request = { url: '/nowhere', remoteAddress: '192.0.2.80' };
      let refused;
      for (let i = 0; i < 20 && !refused; i++) {
        const response = await test.app.inject(request);
        if (response.statusCode === 429) refused = response;
        else assert.equal(response.statusCode, 404);
      }
      assert.ok(refused, 'refused within 20 requests of a budget of one a second');
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers['x-ratelimit-reset'], '1');
      await sleep(1000);
      assert.equal((await test.app.inject(request)).statusCode, 404);
    });

    it("Retry-After is one request's share of the period, not the period, and shrinks as the client waits", async () => {
      const request = { url: '/search/suggest.json?q=caps', remoteAddress: '192.0.2.81' };
      assert.equal((await test.app.inject(request)).statusCode, 200);
      assert.equal((await test.app.inject(request)).statusCode, 200);
      const first = await test.app.inject(request);
      assert.equal(first.statusCode, 429);
      const retryAfter = Number(first.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 30, `Retry-After ${retryAfter} s for 2 a minute`);
      const again = await test.app.inject(request);
      assert.equal(again.statusCode, 429, 'refused while the wait has not passed');
      assert.ok(Number(again.headers['retry-after']) <= retryAfter);
    });
  });
}
