/**
 * Where a platform hears of its orders: its profile's order capability `config.webhook_url`, read liberally,
 * checked by the rules profile URLs follow, kept with the negotiation and given to tools as
 * `ToolContext.orderWebhookUrl` — never for an anonymous caller, or when the order capability is not shared.
 * Profiles are served on loopback over http (UCP_ALLOW_INSECURE_PROFILES, as in tests).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { AgentProfiles } from '../../../src/ucp/agent/agent-profiles.js';
import { readPlatformProfile } from '../../../src/ucp/agent/negotiation.js';
import { Capability, capabilitiesByRelease, type CapabilityName } from '../../../src/ucp/protocol.js';
import { defineTool, outcome, toolInput, type ToolCaller } from '../../../src/ucp/tools/tool.js';
import { ToolCalls } from '../../../src/ucp/tools/tool-calls.js';
import { checkWebhookUrl } from '../../../src/ucp/webhooks/webhook-sender.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../../helpers/store.js';
import { json, startProfileServer, type ProfileServer } from '../mcp-harness.js';

after(dropTestDatabases);

const PUBLIC_HOOK = 'https://platform.example.com/webhooks/ucp/orders';
const UCP_VERSION = '2026-04-08';
const ADVERTISED: CapabilityName[] = [Capability.checkout, Capability.fulfillment, Capability.order];

/** A platform profile sharing the checkout, with the given order capability entries (none: not declared). */
function profileWith(orderEntries?: unknown[], checkoutConfig?: unknown) {
  return {
    ucp: {
      version: UCP_VERSION,
      capabilities: {
        [Capability.checkout]: [{ version: UCP_VERSION, ...(checkoutConfig === undefined ? {} : { config: checkoutConfig }) }],
        ...(orderEntries === undefined ? {} : { [Capability.order]: orderEntries }),
      },
    },
  };
}
const orderEntry = (config: unknown, version: string = UCP_VERSION) => ({
  version,
  spec: `https://ucp.dev/${UCP_VERSION}/specification/order`,
  schema: `https://ucp.dev/${UCP_VERSION}/schemas/shopping/order.json`,
  config,
});

const caller: ToolCaller = { admitCartStart: async () => {}, log: pino({ level: 'silent' }) };

for (const backend of backends) {
  describe(`${backend.name}: the order webhook URL from the agent profile reaches the tools`, () => {
    let test: TestStore;
    let profiles: ProfileServer;
    let calls: ToolCalls;
    const seen: (string | undefined)[] = [];
    // A tool that only reports what its context says.
    const probe = defineTool<{ meta?: unknown }>({
      name: 'probe_order_webhook',
      title: 'Probe',
      description: 'Reports the order webhook URL its context carries.',
      capability: Capability.checkout,
      inputSchema: toolInput({}, []),
      outputSchema: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (_args, context) => {
        seen.push(context.orderWebhookUrl);
        return outcome({});
      },
    });

    before(async () => {
      test = await startTestStore(backend, { config: { allowInsecureProfiles: true } });
      profiles = await startProfileServer({
        '/public-hook.json': json(profileWith([orderEntry({ webhook_url: PUBLIC_HOOK })])),
        '/loopback-hook.json': json(profileWith([orderEntry({ webhook_url: 'http://127.0.0.1:8099/hooks' })])),
        '/second-entry.json': json(profileWith([orderEntry({}), orderEntry({ webhook_url: PUBLIC_HOOK, extra: true })])),
        '/no-order.json': json(profileWith(undefined, { webhook_url: PUBLIC_HOOK })),
        '/order-other-version.json': json(profileWith([orderEntry({ webhook_url: PUBLIC_HOOK }, '2026-01-11')])),
        '/not-a-string.json': json(profileWith([orderEntry({ webhook_url: { href: PUBLIC_HOOK } })])),
        '/config-not-object.json': json(profileWith([orderEntry('webhook_url')])),
        '/plain-http.json': json(profileWith([orderEntry({ webhook_url: 'http://platform.example.com/webhooks/ucp/orders' })])),
        '/private.json': json(profileWith([orderEntry({ webhook_url: 'https://10.1.2.3/hooks' })])),
        '/metadata.json': json(profileWith([orderEntry({ webhook_url: 'https://169.254.169.254/latest/meta-data' })])),
      });
      const agentProfiles = new AgentProfiles({
        capabilities: capabilitiesByRelease(ADVERTISED),
        allowInsecure: true,
        timeoutMs: 30_000,
      });
      calls = new ToolCalls(test.store, [probe], agentProfiles);
    });
    after(async () => {
      await profiles.close();
      await test.close();
    });

    const urlSeenWith = async (profilePath?: string) => {
      const args = profilePath === undefined ? {} : { meta: { 'ucp-agent': { profile: profiles.url(profilePath) } } };
      const answer = await calls.call('probe_order_webhook', args, caller);
      assert.equal(answer.isError, false, answer.json);
      return seen.at(-1);
    };

    it('a profile declaring the order capability with config.webhook_url gives the tools orderWebhookUrl', async () => {
      assert.equal(await urlSeenWith('/public-hook.json'), PUBLIC_HOOK);
      assert.equal(await urlSeenWith('/public-hook.json'), PUBLIC_HOOK, 'kept with the cached negotiation');
      assert.equal(await urlSeenWith('/loopback-hook.json'), 'http://127.0.0.1:8099/hooks', 'loopback over http: the insecure test mode');
      assert.equal(await urlSeenWith('/second-entry.json'), PUBLIC_HOOK, 'the first entry that gives one');
    });

    it('an anonymous caller has none: a checkout tool is not run for it at all (it needs an agent profile)', async () => {
      const before = seen.length;
      await assert.rejects(calls.call('probe_order_webhook', {}, caller), (error: { data?: { code?: string } }) => error.data?.code === 'invalid_profile_url');
      assert.equal(seen.length, before, 'the tool did not run');
    });

    it('none when the order capability is not shared: not declared (a webhook_url elsewhere is not read), or at another version', async () => {
      assert.equal(await urlSeenWith('/no-order.json'), undefined);
      assert.equal(await urlSeenWith('/order-other-version.json'), undefined);
    });

    it('a webhook_url that is not a string is ignored, and negotiation still succeeds', async () => {
      assert.equal(await urlSeenWith('/not-a-string.json'), undefined);
      assert.equal(await urlSeenWith('/config-not-object.json'), undefined);
    });

    it('a webhook_url that breaks the profile URL rules is ignored: plain http off loopback, private or metadata addresses', async () => {
      assert.equal(await urlSeenWith('/plain-http.json'), undefined);
      assert.equal(await urlSeenWith('/private.json'), undefined);
      assert.equal(await urlSeenWith('/metadata.json'), undefined);
    });
  });
}

describe('the order webhook URL when insecure profiles are off (production)', () => {
  it('is read from the profile as given, and a non-https one is then refused, loopback included', () => {
    const read = readPlatformProfile(profileWith([orderEntry({ webhook_url: 'http://127.0.0.1:8099/hooks' })]), ADVERTISED);
    assert.ok(!('message' in read));
    assert.equal(read.orderWebhookUrl, 'http://127.0.0.1:8099/hooks');
    assert.equal(checkWebhookUrl(read.orderWebhookUrl, false), undefined);
    assert.equal(checkWebhookUrl('http://platform.example.com/webhooks/ucp/orders', false), undefined);
    assert.equal(checkWebhookUrl(PUBLIC_HOOK, false), PUBLIC_HOOK);
  });
});
