/**
 * The two ways the rate limits count, for tests that run under both: in memory (on the embedded database) and in the
 * shared Redis on 127.0.0.1:6379 (on the PostgreSQL server), under a key prefix of the test file's own, whose keys are
 * deleted after its tests.
 */
import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { Redis } from 'ioredis';
import type { Config } from '../../src/config.js';
import { ALL_BACKENDS } from './store.js';

export const REDIS_URL = 'redis://127.0.0.1:6379';

export interface CounterSetup {
  name: string;
  backend: (typeof ALL_BACKENDS)[number];
  config: Partial<Config>;
}

/** The setups for a test file (`label` names its keys in Redis); registers the deletion of its keys. */
export function counterSetups(label: string): { redisKeyPrefix: string; setups: CounterSetup[] } {
  const redisKeyPrefix = `sf-test-${label}-${randomUUID()}:`;
  after(async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${redisKeyPrefix}*`);
      if (keys.length) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });
  return {
    redisKeyPrefix,
    setups: [
      { name: 'counters in memory', backend: ALL_BACKENDS.find((b) => b.name === 'pglite')!, config: {} },
      // A command slower than the 200 ms default would serve a request unlimited: a budget's edge is exact only without.
      { name: 'counters in Redis', backend: ALL_BACKENDS.find((b) => b.name === 'postgres')!, config: { redisUrl: REDIS_URL, redisKeyPrefix, redisCommandTimeoutMs: 5000 } },
    ],
  };
}
