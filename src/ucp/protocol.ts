/** The Universal Commerce Protocol release this store speaks, and the names and addresses it publishes. */

export const UCP_VERSION = '2026-04-08';
export const SHOPPING_SERVICE = 'dev.ucp.shopping';
export const MCP_PATH = '/api/ucp/mcp';
export const PROFILE_PATH = '/.well-known/ucp';

const SPEC = `https://ucp.dev/${UCP_VERSION}`;

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

/** What this store implements, as the profile advertises it: only what has tools behind it. */
export const IMPLEMENTED_CAPABILITIES: Record<CapabilityName, CapabilityEntry> = {
  [Capability.catalogSearch]: {
    version: UCP_VERSION,
    spec: `${SPEC}/specification/catalog/search`,
    schema: `${SPEC}/schemas/shopping/catalog_search.json`,
  },
  [Capability.catalogLookup]: {
    version: UCP_VERSION,
    spec: `${SPEC}/specification/catalog/lookup`,
    schema: `${SPEC}/schemas/shopping/catalog_lookup.json`,
  },
  [Capability.cart]: {
    version: UCP_VERSION,
    spec: `${SPEC}/specification/cart`,
    schema: `${SPEC}/schemas/shopping/cart.json`,
  },
  [Capability.checkout]: {
    version: UCP_VERSION,
    spec: `${SPEC}/specification/checkout`,
    schema: `${SPEC}/schemas/shopping/checkout.json`,
  },
  [Capability.fulfillment]: {
    version: UCP_VERSION,
    spec: `${SPEC}/specification/fulfillment`,
    schema: `${SPEC}/schemas/shopping/fulfillment.json`,
    extends: Capability.checkout,
  },
  [Capability.order]: {
    version: UCP_VERSION,
    spec: `${SPEC}/specification/order`,
    schema: `${SPEC}/schemas/shopping/order.json`,
  },
};

/** Capabilities with no tool of their own: extensions that shape another capability's answers. */
export const EXTENSION_CAPABILITIES: readonly CapabilityName[] = [Capability.fulfillment];

export const MCP_SERVICE_ENTRY = {
  version: UCP_VERSION,
  spec: `${SPEC}/specification/overview`,
  transport: 'mcp',
  schema: `${SPEC}/services/shopping/mcp.openrpc.json`,
} as const;
