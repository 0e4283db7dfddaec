/**
 * The rate limits' counters (src/http/rate-limit.ts): fixed windows in memory (bounded) and in Redis (the shared
 * Redis on 127.0.0.1:6379, under a prefix of this run's own), and the client key (an IPv6 client is its /64).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { clientKey, LocalCounters, RedisCounters } from '../../src/http/rate-limit.js';

describe('counters in memory', () => {
  it('count within a window, start again after it, and a read counts nothing and keeps nothing', () => {
    let now = 1_000_000;
    const counters = new LocalCounters(100, () => now);
    try {
      assert.deepEqual(counters.count('a', 60_000, false), { current: 0, ttl: 0 });
      assert.equal(counters.size, 0, 'a read of an unknown key keeps nothing');
      assert.deepEqual(counters.count('a', 60_000, true), { current: 1, ttl: 60_000 });
      now += 20_000;
      assert.deepEqual(counters.count('a', 60_000, true), { current: 2, ttl: 40_000 });
      assert.deepEqual(counters.count('a', 60_000, false), { current: 2, ttl: 40_000 });
      assert.deepEqual(counters.count('b', 60_000, true), { current: 1, ttl: 60_000 }, 'each key on its own');
      now += 40_000;
      assert.deepEqual(counters.count('a', 60_000, false), { current: 0, ttl: 0 }, 'the window has passed');
      assert.deepEqual(counters.count('a', 60_000, true), { current: 1, ttl: 60_000 }, 'a new window');
    } finally {
      counters.close();
    }
  });

  it('keep at most their bound: expired counters go first, then the oldest', () => {
    let now = 0;
    const counters = new LocalCounters(100, () => now);
    try {
      for (let i = 0; i < 50; i++) counters.count(`short:${i}`, 1_000, true);
      for (let i = 0; i < 50; i++) counters.count(`long:${i}`, 60_000, true);
      now = 2_000;
      // Full: the 50 expired ones make room.
      for (let i = 0; i < 50; i++) counters.count(`new:${i}`, 60_000, true);
      assert.equal(counters.size, 100);
      assert.equal(counters.count('long:0', 60_000, false).current, 1, 'a live counter was kept');
      // Full of live counters: the oldest go, the newest stay, the size stays bounded.
      for (let i = 0; i < 500; i++) counters.count(`more:${i}`, 60_000, true);
      assert.ok(counters.size <= 100, `${counters.size} counters`);
      assert.equal(counters.count('more:499', 60_000, false).current, 1, 'the newest is kept');
      assert.equal(counters.count('long:0', 60_000, false).current, 0, 'the oldest went');
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

  it('count within a window (the key expires with it), and a read creates no key', async () => {
    // A window long enough that no stall of the machine ends it while this counts.
    const counters = new RedisCounters(redis, prefix);
    assert.deepEqual(await counters.count('a', 60_000, false), { current: 0, ttl: 0 });
    assert.equal(await redis.exists(`${prefix}a`), 0, 'a read of an unknown key creates nothing');
    const first = await counters.count('a', 60_000, true);
    assert.equal(first.current, 1);
    assert.ok(first.ttl > 0 && first.ttl <= 60_000, `ttl ${first.ttl}`);
    const pttl = await redis.pttl(`${prefix}a`);
    assert.ok(pttl > 0 && pttl <= 60_000, `the key expires with its window (pttl ${pttl})`);
    assert.equal((await counters.count('a', 60_000, true)).current, 2);
    assert.equal((await counters.count('a', 60_000, false)).current, 2, 'a read counts nothing');
  });

  it('start again once the window has passed (Redis has dropped the key)', async () => {
    const counters = new RedisCounters(redis, prefix);
    assert.equal((await counters.count('short', 50, true)).current, 1);
    const pttl = await redis.pttl(`${prefix}short`);
    assert.ok(pttl === -2 || (pttl > 0 && pttl <= 50), `the key expires with its window (pttl ${pttl})`);
    // Wait for Redis to drop the key, however slow the machine: expiry is what is tested, not how soon it comes.
    const deadline = Date.now() + 10_000;
    while ((await redis.pttl(`${prefix}short`)) !== -2) {
      assert.ok(Date.now() < deadline, 'the key expired within 10 s of its 50 ms window');
      await sleep(20);
    }
    assert.deepEqual(await counters.count('short', 50, false), { current: 0, ttl: 0 }, 'the window has passed');
    assert.equal(await redis.exists(`${prefix}short`), 0, 'and the read made no key');
    // A long window now, so that the new one is still there when checked.
    const again = await counters.count('short', 60_000, true);
    assert.equal(again.current, 1, 'a new window');
    assert.ok(again.ttl > 50, `the new window is the one asked for (ttl ${again.ttl})`);
  });

  it('two instances count one counter', async () => {
    const otherClient = new Redis('redis://127.0.0.1:6379');
    const one = new RedisCounters(redis, prefix);
    const other = new RedisCounters(otherClient, prefix);
    try {
      const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : other).count('shared', 60_000, true)));
      assert.deepEqual(
        counts.map((c) => c.current).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i + 1),
        'every count is seen once, whichever instance made it',
      );
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
