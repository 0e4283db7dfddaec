/**
 * The rate limits' counters (src/http/rate-limit.ts): GCRA in memory (bounded, on an injected clock) and in Redis
 * (the shared Redis on 127.0.0.1:6379, under a prefix of this run's own, on Redis's clock), and the client key (an
 * IPv6 client is its /64). A budget of `max` per `periodMs` serves `max` at once, then one every periodMs / max; a
 * request served is taken from every budget it names, a request refused from none.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { RateBudget } from '../../src/config.js';
import { clientKey, LocalCounters, RedisCounters, type Demand } from '../../src/http/rate-limit.js';

const HOUR = 3_600_000;
const demand = (key: string, budget: RateBudget, name: Demand['name'] = 'other'): Demand => ({ name, key, budget });

describe('counters in memory', () => {
  it('serve a whole budget at once, then one request per period / max; the wait is until the next one fits', () => {
    let now = 1_000_000;
    const counters = new LocalCounters(100, () => now);
    try {
      const perMinute = [demand('a', { max: 60, periodMs: 60_000 })];
      for (let i = 0; i < 60; i++) assert.equal(counters.take(perMinute, true), undefined, `request ${i + 1}`);
      // The 61st waits for one request's share of the minute (1 s), not for a minute to pass.
      assert.deepEqual(counters.take(perMinute, true), { demand: perMinute[0], waitMs: 1000 });
      now += 400;
      assert.equal(counters.take(perMinute, true)?.waitMs, 600, 'the wait shrinks as time passes');
      now += 600;
      assert.equal(counters.take(perMinute, true), undefined, 'served once the wait has passed');
      assert.equal(counters.take(perMinute, true)?.waitMs, 1000, 'and then the next one waits again');
      now += 60_000;
      for (let i = 0; i < 60; i++) assert.equal(counters.take(perMinute, true), undefined, `a whole budget again, request ${i + 1}`);
    } finally {
      counters.close();
    }
  });

  it('a whole budget is exactly its number of requests, however its period divides, on a clock of today', () => {
    const counters = new LocalCounters(100, () => 1_764_000_000_123);
    try {
      for (const [max, periodMs] of [[7, 60_000], [6, 1_000], [934, 1_000], [2064, 1_000], [3000, HOUR]] as const) {
        const budget = [demand(`${max}/${periodMs}`, { max, periodMs })];
        for (let i = 0; i < max; i++) assert.equal(counters.take(budget, true), undefined, `${max} per ${periodMs} ms, request ${i + 1}`);
        assert.ok(counters.take(budget, true), `${max} per ${periodMs} ms, request ${max + 1}`);
      }
    } finally {
      counters.close();
    }
  });

  it('a refused request takes nothing: a client that keeps asking is served as soon as one who waited', () => {
    let now = 0;
    const counters = new LocalCounters(100, () => now);
    try {
      const budget = [demand('a', { max: 2, periodMs: 10_000 })];
      counters.take(budget, true);
      counters.take(budget, true);
      for (let i = 0; i < 100; i++) {
        now += 10;
        assert.ok(counters.take(budget, true), `refused ${i + 1}`);
      }
      now = 5_000;
      assert.equal(counters.take(budget, true), undefined);
    } finally {
      counters.close();
    }
  });

  it('a request naming several budgets is served only if each has room, and then taken from each; else from none', () => {
    const now = 0;
    const counters = new LocalCounters(100, () => now);
    try {
      const address = demand('address', { max: 5, periodMs: HOUR }, 'cart-write');
      const cart = (key: string) => demand(key, { max: 2, periodMs: HOUR }, 'cart-write-per-cart');
      assert.equal(counters.take([address, cart('one')], true), undefined);
      assert.equal(counters.take([address, cart('one')], true), undefined);
      // The cart's budget is spent: refused by it, with its wait, and the address keeps its three.
      for (let i = 0; i < 10; i++) assert.equal(counters.take([address, cart('one')], true)?.demand.name, 'cart-write-per-cart');
      assert.equal(counters.take([address, cart('two')], true), undefined);
      assert.equal(counters.take([address, cart('two')], true), undefined);
      assert.equal(counters.take([address, cart('three')], true), undefined);
      // Now the address's budget is spent: refused by it, and the new cart's budget is untouched.
      const refused = counters.take([address, cart('four')], true);
      assert.equal(refused?.demand, address);
      assert.equal(refused?.waitMs, HOUR / 5);
      assert.equal(counters.take([cart('four')], true), undefined);
      assert.equal(counters.take([cart('four')], true), undefined, 'the refused request took nothing from cart four');
    } finally {
      counters.close();
    }
  });

  it('over several budgets, the refusal names the one with the longest wait', () => {
    const counters = new LocalCounters(100, () => 0);
    try {
      const short = demand('short', { max: 1, periodMs: 1_000 });
      const long = demand('long', { max: 1, periodMs: 60_000 });
      counters.take([short, long], true);
      assert.deepEqual(counters.take([short, long], true), { demand: long, waitMs: 60_000 });
      assert.deepEqual(counters.take([long, short], true), { demand: long, waitMs: 60_000 });
    } finally {
      counters.close();
    }
  });

  it('asking (commit false) takes nothing and keeps nothing', () => {
    const counters = new LocalCounters(100, () => 0);
    try {
      const budget = [demand('a', { max: 1, periodMs: 60_000 })];
      assert.equal(counters.take(budget, false), undefined);
      assert.equal(counters.size, 0, 'asking about an unknown key keeps nothing');
      assert.equal(counters.take(budget, true), undefined);
      assert.equal(counters.take(budget, false)?.waitMs, 60_000, 'asked: the budget is spent');
      assert.equal(counters.take(budget, false)?.waitMs, 60_000, 'and asking again took nothing');
    } finally {
      counters.close();
    }
  });

  it('keep at most their bound: keys whose budget is whole again go first, then the oldest', () => {
    let now = 0;
    const counters = new LocalCounters(100, () => now);
    try {
      const short = { max: 1, periodMs: 1_000 };
      const long = { max: 1, periodMs: 60_000 };
      for (let i = 0; i < 50; i++) counters.take([demand(`short:${i}`, short)], true);
      for (let i = 0; i < 50; i++) counters.take([demand(`long:${i}`, long)], true);
      now = 2_000;
      // Full: the 50 whose budget is whole again make room.
      for (let i = 0; i < 50; i++) counters.take([demand(`new:${i}`, long)], true);
      assert.equal(counters.size, 100);
      assert.ok(counters.take([demand('long:0', long)], false), 'a spent budget was kept');
      // Full of spent budgets: the oldest go, the newest stay, the size stays bounded.
      for (let i = 0; i < 500; i++) counters.take([demand(`more:${i}`, long)], true);
      assert.ok(counters.size <= 100, `${counters.size} counters`);
      assert.ok(counters.take([demand('more:499', long)], false), 'the newest is kept');
      assert.equal(counters.take([demand('long:0', long)], false), undefined, 'the oldest went');
    } finally {
      counters.close();
    }
  });
});

describe('counters in Redis', () => {
  const prefix = `sf-test-${randomUUID()}:`;
  let redis: Redis;
  before(() => {
    redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  });
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('serve a whole budget, then answer the wait for the next request; the key expires when the budget is whole again', async () => {
    // An hour's budget: no request's share comes back while this runs, however slow the machine.
    const counters = new RedisCounters(redis, prefix);
    const budget = [demand('a', { max: 3, periodMs: HOUR })];
    assert.equal(await counters.take(budget, false), undefined);
    assert.equal(await redis.exists(`${prefix}a`), 0, 'asking about an unknown key creates nothing');
    for (let i = 0; i < 3; i++) assert.equal(await counters.take(budget, true), undefined, `request ${i + 1}`);
    const pttl = await redis.pttl(`${prefix}a`);
    assert.ok(pttl > 0 && pttl <= HOUR, `the key expires when the budget is whole again (pttl ${pttl})`);
    const stored = await redis.get(`${prefix}a`);
    const refused = await counters.take(budget, true);
    assert.equal(refused?.demand, budget[0]);
    // One request's share of the hour (20 min), less the moments this test has taken: never the hour.
    assert.ok(refused!.waitMs <= HOUR / 3 && refused!.waitMs > HOUR / 3 - 60_000, `wait ${refused?.waitMs}`);
    assert.equal(await redis.get(`${prefix}a`), stored, 'the refusal took nothing');
  });

  it('a whole budget is exactly its number of requests, however its period divides', async () => {
    const counters = new RedisCounters(redis, prefix);
    for (const max of [7, 934]) {
      const budget = [demand(`exact:${max}`, { max, periodMs: HOUR })];
      for (let i = 0; i < max; i++) assert.equal(await counters.take(budget, true), undefined, `${max} an hour, request ${i + 1}`);
      assert.ok(await counters.take(budget, true), `${max} an hour, request ${max + 1}`);
    }
  });

  it('a request naming several keys is taken from each only if each has room', async () => {
    const counters = new RedisCounters(redis, prefix);
    const address = demand('multi:address', { max: 3, periodMs: HOUR }, 'cart-write');
    const cart = (key: string) => demand(`multi:${key}`, { max: 1, periodMs: HOUR }, 'cart-write-per-cart');
    assert.equal(await counters.take([address, cart('one')], true), undefined);
    for (let i = 0; i < 5; i++) assert.equal((await counters.take([address, cart('one')], true))?.demand.name, 'cart-write-per-cart');
    assert.equal(await counters.take([address, cart('two')], true), undefined);
    assert.equal(await counters.take([address, cart('three')], true), undefined);
    const refused = await counters.take([address, cart('four')], true);
    assert.equal(refused?.demand, address);
    assert.equal(await redis.exists(`${prefix}multi:four`), 0, 'the refused request took nothing from cart four');
  });

  it('waiting Retry-After (whole seconds) is enough: the next request is served, and the key goes once the budget is whole', async () => {
    const counters = new RedisCounters(redis, prefix);
    const budget = [demand('short', { max: 1, periodMs: 1_000 })];
    let refused = await counters.take(budget, true);
    // A stall of the machine may have let a second through; the next refusal is the one measured.
    for (let i = 0; i < 10 && refused === undefined; i++) refused = await counters.take(budget, true);
    assert.ok(refused, 'refused within one budget');
    assert.ok(refused.waitMs > 0 && refused.waitMs <= 1_000, `wait ${refused.waitMs}`);
    await sleep(Math.ceil(refused.waitMs / 1000) * 1000);
    assert.equal(await counters.take(budget, true), undefined, 'served after Retry-After');
    // Wait for Redis to drop the key, however slow the machine: expiry is what is tested, not how soon it comes.
    const deadline = Date.now() + 10_000;
    while ((await redis.pttl(`${prefix}short`)) !== -2) {
      assert.ok(Date.now() < deadline, 'the key expired within 10 s of its 1 s budget');
      await sleep(20);
    }
  });

  it('two instances take from one budget', async () => {
    const otherClient = new Redis('redis://127.0.0.1:6379');
    const one = new RedisCounters(redis, prefix);
    const other = new RedisCounters(otherClient, prefix);
    try {
      const budget = [demand('shared', { max: 10, periodMs: HOUR })];
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : other).take(budget, true)));
      assert.equal(answers.filter((answer) => answer === undefined).length, 10, 'exactly the budget is served, whichever instance counted');
    } finally {
      otherClient.disconnect();
    }
  });
});

describe('client keys', () => {
  it('an IPv6 client is its /64; an IPv4 one (also written IPv4-mapped) is its address', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:db8:1:2:bbbb:cccc:dddd:2'));
    assert.notEqual(clientKey('2001:db8:1:2::1'), clientKey('2001:db8:1:3::1'));
    assert.equal(clientKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(clientKey('198.51.100.7'), '198.51.100.7');
    assert.equal(clientKey('::ffff:198.51.100.7'), '198.51.100.7');
  });
});
