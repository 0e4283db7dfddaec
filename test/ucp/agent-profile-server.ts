/**
 * Agent (platform) profiles of a given UCP release, served over loopback http as an agent publishes its own:
 * `ucp.version`, the shopping service over MCP and every capability this store implements, all at that release,
 * with the spec and schema URLs of that release on ucp.dev. The store fetches them from
 * `meta["ucp-agent"].profile` (it allows plain http on loopback with UCP_ALLOW_INSECURE_PROFILES, which
 * `startListeningStore` turns on).
 */
import { json, startProfileServer, type ProfileServer } from './mcp-harness.js';

/** The capabilities this store's tools implement (and fulfillment, the checkout extension), by name. */
export const STORE_CAPABILITIES = [
  'dev.ucp.shopping.catalog.search',
  'dev.ucp.shopping.catalog.lookup',
  'dev.ucp.shopping.cart',
  'dev.ucp.shopping.checkout',
  'dev.ucp.shopping.fulfillment',
  'dev.ucp.shopping.order',
] as const;

/** The spec page and schema file of each capability, relative to https://ucp.dev/{version}/. */
const CAPABILITY_DOCS: Record<string, { spec: string; schema: string; extends?: string }> = {
  'dev.ucp.shopping.catalog.search': { spec: 'specification/catalog/search', schema: 'schemas/shopping/catalog_search.json' },
  'dev.ucp.shopping.catalog.lookup': { spec: 'specification/catalog/lookup', schema: 'schemas/shopping/catalog_lookup.json' },
  'dev.ucp.shopping.cart': { spec: 'specification/cart', schema: 'schemas/shopping/cart.json' },
  'dev.ucp.shopping.checkout': { spec: 'specification/checkout', schema: 'schemas/shopping/checkout.json' },
  'dev.ucp.shopping.fulfillment': { spec: 'specification/fulfillment', schema: 'schemas/shopping/fulfillment.json', extends: 'dev.ucp.shopping.checkout' },
  'dev.ucp.shopping.order': { spec: 'specification/order', schema: 'schemas/shopping/order.json' },
};

/**
 * An agent's platform profile speaking `version`: the MCP shopping service and the given capabilities, each entry
 * at `version` (a release's platform profile schema asks spec and schema of each). A version no release has (say
 * 2025-01-01) makes a profile a store that does not speak it must refuse.
 */
export function agentProfileOf(version: string, capabilities: readonly string[] = STORE_CAPABILITIES): object {
  const docs = `https://ucp.dev/${version}`;
  return {
    ucp: {
      version,
      services: {
        'dev.ucp.shopping': [
          { version, spec: `${docs}/specification/overview`, transport: 'mcp', schema: `${docs}/services/shopping/mcp.openrpc.json` },
        ],
      },
      capabilities: Object.fromEntries(
        capabilities.map((name) => {
          const known = CAPABILITY_DOCS[name] ?? { spec: 'specification/overview', schema: 'schemas/capability.json' };
          return [
            name,
            [{ version, spec: `${docs}/${known.spec}`, schema: `${docs}/${known.schema}`, ...(known.extends ? { extends: known.extends } : {}) }],
          ];
        }),
      ),
      payment_handlers: {},
    },
  };
}

export interface AgentProfileServer {
  /** The URL of the profile of an agent speaking `version` (every version given to `serveAgentProfiles`). */
  profileUrl(version: string): string;
  /** The profile served for `version`. */
  profile(version: string): object;
  /** Requests received per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** Serves on 127.0.0.1 one agent profile per version, at /agent-{version}.json, each with all the store's capabilities. */
export async function serveAgentProfiles(versions: readonly string[]): Promise<AgentProfileServer> {
  const profiles = new Map(versions.map((version) => [version, agentProfileOf(version)]));
  const pathOf = (version: string) => `/agent-${version}.json`;
  const server: ProfileServer = await startProfileServer(
    Object.fromEntries([...profiles].map(([version, profile]) => [pathOf(version), json(profile, { 'cache-control': 'max-age=300' })])),
  );
  const known = (version: string) => {
    const profile = profiles.get(version);
    if (!profile) throw new Error(`no agent profile served for ${version}`);
    return profile;
  };
  return {
    profileUrl(version) {
      known(version);
      return server.url(pathOf(version));
    },
    profile: known,
    hits: server.hits,
    close: () => server.close(),
  };
}
