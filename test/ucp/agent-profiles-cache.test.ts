/**
 * The agent profile cache (src/ucp/agent/agent-profiles.ts), on a clock the test moves: concurrent negotiations of
 * one URL share one fetch; a result is kept at least 60 s, as long as the profile's max-age asks, at most an hour; a
 * failure is kept 5 s; and the cache holds at most 1000 URLs, the least recently used forgotten first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AgentProfiles } from '../../src/ucp/agent/agent-profiles.js';
import { Capability, capabilitiesByRelease } from '../../src/ucp/protocol.js';
import { json, platformProfile, startProfileServer, type ProfileServer } from './mcp-harness.js';

const SEARCH = 'dev.ucp.shopping.catalog.search';

describe('the agent profile cache', () => {
  let server: ProfileServer;
  let clock = 0;
  const profiles = () =>
    new AgentProfiles({ capabilities: capabilitiesByRelease([Capability.catalogSearch]), allowInsecure: true, now: () => clock });
  const fetches = (path: string) => server.hits.get(path) ?? 0;

  before(async () => {
    server = await startProfileServer({
      '/short.json': json(platformProfile([SEARCH]), { 'cache-control': 'max-age=10' }),
      '/long.json': json(platformProfile([SEARCH]), { 'cache-control': 'max-age=86400' }),
      '/two-minutes.json': json(platformProfile([SEARCH]), { 'cache-control': 'max-age=120' }),
      '/not-ucp.json': json({ hello: 'world' }),
    });
  });
  after(() => server.close());

  it('concurrent negotiations of one URL share one fetch, and later ones are answered from the cache', async () => {
    const cache = profiles();
    const answers = await Promise.all(Array.from({ length: 5 }, () => cache.negotiate(server.url('/two-minutes.json'))));
    assert.ok(answers.every((answer) => answer === answers[0]));
    assert.ok(answers[0]!.capabilities.has(Capability.catalogSearch));
    assert.equal(await cache.negotiate(server.url('/two-minutes.json')), answers[0]);
    assert.equal(fetches('/two-minutes.json'), 1);
  });

  it("a result is kept as long as the profile's max-age asks, at least 60 s and at most an hour", async () => {
    const cache = profiles();
    const kept = async (path: string, seconds: number) => {
      const before = fetches(path);
      clock = 1_000_000;
      await cache.negotiate(server.url(path));
      clock += seconds * 1000 - 1;
      await cache.negotiate(server.url(path));
      assert.equal(fetches(path), before + 1, `${path} kept ${seconds} s`);
      clock += 2;
      await cache.negotiate(server.url(path));
      assert.equal(fetches(path), before + 2, `${path} fetched again after ${seconds} s`);
    };
    await kept('/two-minutes.json', 120);
    await kept('/short.json', 60);
    await kept('/long.json', 3600);
  });

  it('a failure is kept 5 s: the same refusal, without fetching again', async () => {
    const cache = profiles();
    clock = 5_000_000;
    const refusal = await cache.negotiate(server.url('/not-ucp.json')).catch((error: unknown) => error);
    assert.match(String((refusal as { data?: { code?: string } }).data?.code), /profile_malformed/);
    clock += 4_999;
    await assert.rejects(cache.negotiate(server.url('/not-ucp.json')), (error) => error === refusal);
    assert.equal(fetches('/not-ucp.json'), 1);
    clock += 2;
    await assert.rejects(cache.negotiate(server.url('/not-ucp.json')), (error) => error !== refusal);
    assert.equal(fetches('/not-ucp.json'), 2);
  });

  it('holds at most 1000 URLs: past that the least recently used is fetched again, a recent one is not', async () => {
    const cache = profiles();
    clock = 9_000_000;
    // Distinct URLs of one profile (the server routes by path and query alike: these are 404s, cached as failures).
    const url = (n: number) => server.url(`/missing.json?n=${n}`);
    for (let n = 0; n < 1001; n += 1) await cache.negotiate(url(n)).catch(() => undefined);
    const before = server.hits.size;
    await cache.negotiate(url(1000)).catch(() => undefined);
    assert.equal(server.hits.size, before, 'the most recent is kept');
    await cache.negotiate(url(0)).catch(() => undefined);
    assert.equal(fetches('/missing.json?n=0'), 2, 'the least recently used was forgotten');
  });
});
