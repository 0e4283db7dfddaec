/**
 * The Universal Commerce Protocol releases this store speaks, and the names and addresses it publishes. The
 * profile at /.well-known/ucp is of the newest release; each older one has its own complete (leaf) profile,
 * linked from `supported_versions`. Every `dev.ucp.*` entry of a profile carries that profile's release.
 */

/** The releases this store speaks, newest first. */
export const UCP_RELEASES = ['2026-08-25', '2026-04-08'] as const;
export type UcpRelease = (typeof UCP_RELEASES)[number];
/** The release of /.well-known/ucp, and of answers to a caller that names no agent profile. */
export const LATEST_UCP_RELEASE: UcpRelease = UCP_RELEASES[0];
/** The oldest release this store speaks: the one of everything it kept before it spoke a newer one. */
export const OLDEST_UCP_RELEASE: UcpRelease = UCP_RELEASES[UCP_RELEASES.length - 1]!;
/** The older releases, each served as a leaf profile at /.well-known/ucp/{release}. */
export const OLDER_UCP_RELEASES: readonly UcpRelease[] = UCP_RELEASES.slice(1);

export const isUcpRelease = (value: unknown): value is UcpRelease => (UCP_RELEASES as readonly unknown[]).includes(value);

export const SHOPPING_SERVICE = 'dev.ucp.shopping';
export const MCP_PATH = '/api/ucp/mcp';
export const PROFILE_PATH = '/.well-known/ucp';

export const Capability = {
  catalogSearch: 'dev.ucp.shopping.catalog.search',
  catalogLookup: 'dev.ucp.shopping.catalog.lookup',
  cart: 'dev.ucp.shopping.cart',
  checkout: 'dev.ucp.shopping.checkout',
  fulfillment: 'dev.ucp.shopping.fulfillment',
  order: 'dev.ucp.shopping.order',
} as const;
export type CapabilityName = (typeof Capability)[keyof typeof Capability];

export interface CapabilityEntry {
  version: string;
  spec: string;
  schema: string;
  extends?: string | string[];
}

/** Where each capability's specification and schema are published, under https://ucp.dev/{release}/. */
const CAPABILITY_DOCUMENTS: Record<CapabilityName, { spec: string; schema: string; extends?: CapabilityName }> = {
  [Capability.catalogSearch]: { spec: 'specification/catalog/search', schema: 'schemas/shopping/catalog_search.json' },
  [Capability.catalogLookup]: { spec: 'specification/catalog/lookup', schema: 'schemas/shopping/catalog_lookup.json' },
  [Capability.cart]: { spec: 'specification/cart', schema: 'schemas/shopping/cart.json' },
  [Capability.checkout]: { spec: 'specification/checkout', schema: 'schemas/shopping/checkout.json' },
  [Capability.fulfillment]: { spec: 'specification/fulfillment', schema: 'schemas/shopping/fulfillment.json', extends: Capability.checkout },
  [Capability.order]: { spec: 'specification/order', schema: 'schemas/shopping/order.json' },
};

/** A capability as a profile of `release` advertises it. */
export function capabilityEntry(name: CapabilityName, release: UcpRelease): CapabilityEntry {
  const { spec, schema, extends: parent } = CAPABILITY_DOCUMENTS[name];
  const base = `https://ucp.dev/${release}`;
  return { version: release, spec: `${base}/${spec}`, schema: `${base}/${schema}`, ...(parent ? { extends: parent } : {}) };
}

/** Capabilities with no tool of their own: extensions that shape another capability's answers. */
export const EXTENSION_CAPABILITIES: readonly CapabilityName[] = [Capability.fulfillment];

/** The MCP service entry of a profile of `release` (without its endpoint). */
export function mcpServiceEntry(release: UcpRelease) {
  return {
    version: release,
    spec: `https://ucp.dev/${release}/specification/overview`,
    transport: 'mcp',
    schema: `https://ucp.dev/${release}/services/shopping/mcp.openrpc.json`,
  } as const;
}

/** This store's capabilities as each release's profile declares them: what negotiation intersects with. */
export function capabilitiesByRelease(names: readonly CapabilityName[]): Record<UcpRelease, Record<string, CapabilityEntry[]>> {
  return Object.fromEntries(
    UCP_RELEASES.map((release) => [release, Object.fromEntries(names.map((name) => [name, [capabilityEntry(name, release)]]))]),
  ) as Record<UcpRelease, Record<string, CapabilityEntry[]>>;
}
