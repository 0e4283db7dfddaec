/** What the commerce door adds to the interface description (src/http/openapi.ts): its tag, the UCP session scheme and its scopes. */
import type { OpenApiFragment, SecurityRequirement } from '../http/openapi.js';

/** The commerce endpoint: catalog and cart tools need no credential; checkout and order tools need a UCP session (an agent profile). */
export const UCP_SESSION: SecurityRequirement[] = [{}, { ucpSession: ['checkout:write', 'checkout:complete'] }];

export const UCP_OPENAPI: OpenApiFragment = {
  tags: [{ name: 'ucp', description: 'Commerce protocol: the UCP merchant profile and the MCP endpoint' }],
  securitySchemes: {
    ucpSession: {
      type: 'apiKey',
      in: 'header',
      name: 'Mcp-Session-Id',
      description:
        'Scopes checkout:write and checkout:complete on the commerce-protocol endpoint: a UCP session, the one that names ' +
        'its agent profile (`meta["ucp-agent"].profile`, negotiated per call). Without a profile a caller is anonymous ' +
        'and may use the catalog and cart tools only. checkout:complete also needs a ' +
        "human's explicit approval at the moment of payment, given on a page this store serves.",
    },
  },
  scopes: [
    {
      scope: 'checkout:write',
      grants: 'Create and advance a checkout, including shipping address and method.',
      credential: 'commerce-protocol session',
      security_scheme: 'ucpSession',
    },
    {
      scope: 'checkout:complete',
      grants: 'Finalize payment.',
      credential: "commerce-protocol session plus a human's explicit, contemporaneous approval on this store's approval page",
      security_scheme: 'ucpSession',
    },
  ],
};
