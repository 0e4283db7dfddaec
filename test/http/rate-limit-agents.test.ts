/**
 * Commerce-endpoint calls are limited per agent profile as well as per address (issue 24, item 3): an agent platform
 * calls for many shoppers from few addresses, so the address's budget is large, and each profile the calls name in
 * their UCP-Agent header (or, without one, in a tool call's meta["ucp-agent"].profile, where the MCP binding puts it)
 * has a budget of its own; a trusted platform's profile gets the budget RATE_LIMITS gives it.
 * Calls naming no profile count against the address only. Run with the counters in memory and in Redis (the shared
 * one on 127.0.0.1:6379, under a prefix of this run's own); the header's parsing is tested on its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { agentProfileOf, argumentsProfileOf } from '../../src/ucp/agent/agent-rate-limit.js';
import { counterSetups } from '../helpers/limit-setups.js';
import { dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const { setups } = counterSetups('agents');
const PLATFORM = '203.0.113.70';
const A = 'https://agents.example.com/a/profile.json';
const B = 'https://agents.example.com/b/profile.json';
const TRUSTED = 'https://trusted-platform.example.com/profile.json';

/** Hourly budgets: none refills while the test runs, so each edge is exact. */
const { rateLimits } = loadConfig({ RATE_LIMITS: `mcp=40/h,mcp-per-profile=5/h,mcp-per-profile[${TRUSTED}]=12/h` });


const lookup = (id: number, metaProfile?: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'lookup_catalog', arguments: { ...(metaProfile ? { meta: { 'ucp-agent': { profile: metaProfile } } } : {}), catalog: { ids: ['SLP-60'] } } },
  });
/** A profile named only in the calls' arguments: its host does not exist (.invalid), so its calls fail negotiation. */
const IN_ARGUMENTS = 'https://platform.invalid/profile.json';

/** The endpoint's 429: JSON-RPC -32000 with data.retry_after = Retry-After, from the budget whose limit it names. */
function assertRefused(response: LightMyRequestResponse, limit: number): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.headers['x-ratelimit-limit'], String(limit));
  const body = JSON.parse(response.body);
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.error.code, -32000);
  assert.equal(body.error.data.code, 'rate_limit_exceeded');
  assert.equal(body.error.data.retry_after, Number(response.headers['retry-after']));
  assert.ok(Number(response.headers['retry-after']) <= 3600 / limit, `Retry-After ${response.headers['retry-after']}: one call's share, not the hour`);
}

for (const setup of setups) {
  describe(`${setup.name}: per-profile budgets on the commerce endpoint`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(setup.backend, { config: { rateLimit: true, rateLimits, ...setup.config } });
    });
    after(() => test.close());

    let id = 0;
    const call = (profile: string | undefined, remoteAddress = PLATFORM) =>
      test.app.inject({
        method: 'POST',
        url: '/api/ucp/mcp',
        payload: lookup(++id),
        remoteAddress,
        headers: { host: 'store.test', 'content-type': 'application/json', accept: 'application/json', ...(profile ? { 'ucp-agent': `profile="${profile}"` } : {}) },
      });
    const answered = async (profile: string | undefined, count: number) => {
      for (let i = 0; i < count; i++) assert.equal((await call(profile)).statusCode, 200, `${profile ?? 'no profile'}, call ${i + 1}`);
    };

    it("a profile's calls are refused once its budget is spent, while another profile from the same address is answered", async () => {
      await answered(A, 5);
      assertRefused(await call(A), 5);
      assertRefused(await call(A), 5);
      await answered(B, 1);
      await answered(undefined, 1);
      // The header is a claim anyone can make: another address claiming A has a budget of its own.
      assert.equal((await call(A, '198.51.100.70')).statusCode, 200);
    });

    it("a trusted platform's profile has the budget RATE_LIMITS gives it", async () => {
      await answered(TRUSTED, 12);
      assertRefused(await call(TRUSTED), 12);
    });

    it("a profile named only in a tool call's arguments has its budget too; the refusal carries the call's id", async () => {
      const inArguments = (remoteAddress: string) =>
        test.app.inject({
          method: 'POST',
          url: '/api/ucp/mcp',
          payload: lookup(++id, IN_ARGUMENTS),
          remoteAddress,
          headers: { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' },
        });
      const other = '198.51.100.71';
      for (let i = 0; i < 5; i++) assert.notEqual((await inArguments(other)).statusCode, 429, `call ${i + 1}`);
      const refused = await inArguments(other);
      assertRefused(refused, 5);
      assert.equal(JSON.parse(refused.body).id, id, "the call's own id");
      // The same address, another profile (in the header): served.
      assert.equal((await call(B, other)).statusCode, 200);
    });

    it("the address's budget bounds every call from it, with a profile or without", async () => {
      // So far from the platform's address: 5 (A) + 1 (B) + 1 (none) + 12 (trusted) calls answered; refusals took nothing.
      await answered(B, 4);
      await answered(undefined, 40 - 5 - 5 - 1 - 12);
      assertRefused(await call(undefined), 40);
      assertRefused(await call('https://agents.example.com/c/profile.json'), 40);
    });
  });
}

describe("a tool call's arguments", () => {
  it('name a profile in meta["ucp-agent"].profile of a tools/call, as `new URL()` writes it', () => {
    const callNaming = (profile: unknown, method = 'tools/call') => ({ jsonrpc: '2.0', id: 1, method, params: { name: 'x', arguments: { meta: { 'ucp-agent': { profile } } } } });
    assert.equal(argumentsProfileOf(callNaming('https://Agents.Example.com:443/p.json')), 'https://agents.example.com/p.json');
    for (const body of [undefined, null, 'text', [], {}, callNaming('https://a.example.com/', 'tools/list'), callNaming(42), callNaming('not a url'), callNaming(`https://a.example.com/${'p'.repeat(5000)}`)]) {
      assert.equal(argumentsProfileOf(body), undefined, JSON.stringify(body)?.slice(0, 80));
    }
  });
});

describe('the UCP-Agent header', () => {
  it('names a profile as an RFC 8941 dictionary member, as `new URL()` writes it', () => {
    assert.equal(agentProfileOf('profile="https://agents.example.com/p.json"'), 'https://agents.example.com/p.json');
    assert.equal(agentProfileOf('profile="https://Agents.Example.com:443/p.json"; version="2026-01-11"'), 'https://agents.example.com/p.json');
    assert.equal(agentProfileOf('other=1, profile="https://agents.example.com/p" ;x=?1, last=(a "b");q=2'), 'https://agents.example.com/p');
    assert.equal(agentProfileOf('profile="https://one.example.com/", profile="https://two.example.com/"'), 'https://two.example.com/', 'the last member of a name wins');
    // A member's string holding `profile=` is not the member.
    assert.equal(agentProfileOf('note="a, profile=\\"https://evil.example.com/\\"", profile="https://good.example.com/"'), 'https://good.example.com/');
  });

  it('names none when absent, malformed, not a string, not a URL, or too long', () => {
    for (const header of [
      undefined,
      '',
      'version="2026-01-11"',
      'profile=https://agents.example.com/p',
      'profile="https://agents.example.com/p',
      'profile="not a url"',
      'PROFILE="https://agents.example.com/p"',
      'profile="https://agents.example.com/p" garbage',
      `profile="https://agents.example.com/${'p'.repeat(5000)}"`,
    ]) {
      assert.equal(agentProfileOf(header), undefined, String(header));
    }
  });
});
