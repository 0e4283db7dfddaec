/**
 * GET /.well-known/ucp (the business profile) and /.well-known/ucp/{version} (each supported version's leaf). The
 * documents are serialised once per set of published signing keys: a rotation (here or on another instance, read
 * by the keys' refresh) and a retired key's grace running out change what is served.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { JSON_TYPE } from './mcp/rpc-reply.js';
import type { ApprovalProofMode } from '../config.js';
import { businessProfile } from './profile.js';
import { LATEST_UCP_RELEASE, PROFILE_PATH, UCP_RELEASES, type CapabilityName } from './protocol.js';
import type { PublishedKey, SigningKeys } from './webhooks/signing-keys.js';

/** UCP: profiles are served public with max-age >= 60 s, never private, no-store or no-cache. */
const PROFILE_CACHE_CONTROL = 'public, max-age=300';

const PublicKey = Type.Object(
  { kid: Type.String(), kty: Type.String(), crv: Type.String(), x: Type.String(), y: Type.String(), use: Type.String(), alg: Type.String() },
  { additionalProperties: true },
);

const ProfileSchema = Type.Object(
  {
    ucp: Type.Object(
      {
        version: Type.String(),
        supported_versions: Type.Optional(Type.Record(Type.String(), Type.String({ format: 'uri' }))),
        services: Type.Object({}, { additionalProperties: true }),
        capabilities: Type.Object({}, { additionalProperties: true }),
        payment_handlers: Type.Object({}, { additionalProperties: true }),
      },
      { additionalProperties: true },
    ),
    keys: Type.Optional(Type.Array(PublicKey, { description: 'The public keys (a JWK Set) that verify what the store signs (order webhooks), by kid; 2026-08-25 and later' })),
    signing_keys: Type.Optional(Type.Array(PublicKey, { description: 'The same keys as a 2026-04-08 profile names them' })),
  },
  { additionalProperties: true, description: 'UCP business profile: /.well-known/ucp is of the newest release (2026-08-25); /.well-known/ucp/{release} of each' },
);

export interface ProfileRoutesOptions {
  baseUrl: string;
  capabilities: CapabilityName[];
  /** What completing a checkout asks of the buyer (APPROVAL_PROOF), published on the checkout capability. */
  approvalProof?: ApprovalProofMode;
  paymentHandlers: Record<string, unknown[]>;
  /** The store's signing keys, published as `keys` (`signing_keys` in a 2026-04-08 profile); without them the profile lists none. */
  signingKeys?: Pick<SigningKeys, 'published'>;
}

export function profileRoutes(server: FastifyInstance, options: ProfileRoutesOptions): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const render = (release: (typeof UCP_RELEASES)[number], leaf: boolean, signingKeys: PublishedKey[] | undefined) =>
    JSON.stringify(
      businessProfile(options.baseUrl, options.capabilities, release, { leaf, paymentHandlers: options.paymentHandlers, signingKeys, approvalProof: options.approvalProof }),
    );
  let rendered: { kids: string; profile: string; leaves: Map<string, string> } | undefined;
  const documents = () => {
    const signingKeys = options.signingKeys?.published();
    const kids = signingKeys?.map((key) => key.kid).join(' ') ?? '';
    if (rendered?.kids !== kids) {
      rendered = {
        kids,
        profile: render(LATEST_UCP_RELEASE, false, signingKeys),
        leaves: new Map(UCP_RELEASES.map((release) => [release, render(release, true, signingKeys)])),
      };
    }
    return rendered;
  };

  app.get(
    PROFILE_PATH,
    {
      config: { rateLimit: 'profile' },
      schema: {
        operationId: 'getUcpProfile',
        summary: 'The UCP business profile: protocol version, the MCP service endpoint, capabilities, payment handlers, signing keys',
        tags: ['ucp'],
        security: [],
        response: { 200: ProfileSchema, 429: Type.Ref('Error') },
      },
    },
    async (_request, reply) => reply.type(JSON_TYPE).header('cache-control', PROFILE_CACHE_CONTROL).send(documents().profile),
  );

  app.get(
    `${PROFILE_PATH}/:version`,
    {
      config: { rateLimit: 'profile' },
      schema: {
        operationId: 'getUcpProfileForVersion',
        summary: 'The self-contained business profile for one supported UCP version (linked from supported_versions)',
        tags: ['ucp'],
        security: [],
        params: Type.Object({ version: Type.String() }),
        response: { 200: ProfileSchema, 404: Type.Ref('Error'), 429: Type.Ref('Error') },
      },
    },
    async (request, reply) => {
      const leaf = documents().leaves.get(request.params.version);
      if (leaf) return reply.type(JSON_TYPE).header('cache-control', PROFILE_CACHE_CONTROL).send(leaf);
      const description = `This store does not speak that UCP version; it speaks ${UCP_RELEASES.join(', ')}.`;
      return reply.code(404).type(JSON_TYPE).send(JSON.stringify({ status: 404, message: 'Not found', description }));
    },
  );
}
