/**
 * The interface description (/openapi.json, OpenAPI 3.1, generated from the route schemas) and the scope
 * metadata (/scopes.json). The security schemes name the spec's scopes; none of them issues a credential.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ErrorMessage, sendError } from './errors.js';

/** One scope: what it grants and the credential that carries it (/scopes.json lists them). */
export interface Scope {
  scope: string;
  grants: string;
  credential: string;
  security_scheme: string;
}

/** What a door adds to the interface description: its tags, its security schemes and the scopes they name. */
export interface OpenApiFragment {
  tags: readonly { name: string; description: string }[];
  securitySchemes: Readonly<Record<string, Readonly<Record<string, string>>>>;
  scopes: readonly Scope[];
}

/** What anyone may call with no credential: the pipeline's own scheme and scope, which every door's public reads name. */
const PUBLIC_READ_SCOPE: Scope = {
  scope: 'catalog:read',
  grants: 'Read products, variants, prices and availability; no customer or order data.',
  credential: 'none',
  security_scheme: 'publicRead',
};
const PUBLIC_READ_SCHEME = {
  type: 'apiKey',
  in: 'header',
  name: 'Authorization',
  description: 'Scope catalog:read. No credential: send nothing; no key is issued or accepted.',
};
const META_TAG = { name: 'meta', description: 'Service description and health' };

/** For an operation anyone may call: no credential (`{}`), described as the publicRead scheme's scope. */
export type SecurityRequirement = Record<string, readonly string[]>;
export const PUBLIC_READ: SecurityRequirement[] = [{}, { publicRead: ['catalog:read'] }];

/** The document names the merchant: its store's name, description and contact (STORE_NAME, STORE_DESCRIPTION, STORE_CONTACT_EMAIL). */
export interface ApiOwner {
  baseUrl: string;
  storeName: string;
  storeDescription: string;
  storeContactEmail: string;
}

/**
 * Registers the document: the pipeline's public-read scheme and scope first, then each door's fragment in the order
 * given, the pipeline's meta tag last. Answers the scopes, for /scopes.json (metaRoutes).
 */
export async function registerOpenApi(app: FastifyInstance, owner: ApiOwner, doors: readonly OpenApiFragment[]): Promise<readonly Scope[]> {
  const scopes = [PUBLIC_READ_SCOPE, ...doors.flatMap((door) => door.scopes)];
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: `${owner.storeName} API`,
        version: '1.0.0',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        contact: { name: owner.storeName, email: owner.storeContactEmail },
        description:
          `${owner.storeName}: ${owner.storeDescription} Its public interface: storefront JSON (catalog, search, ` +
          'recommendations, a session cart) and a commerce-protocol door (UCP over MCP). Money is integer US cents. ' +
          'Every error is JSON: {status, message, description}.',
      },
      servers: [{ url: owner.baseUrl }],
      tags: [...doors.flatMap((door) => door.tags), META_TAG],
      components: {
        securitySchemes: Object.assign({ publicRead: PUBLIC_READ_SCHEME }, ...doors.map((door) => door.securitySchemes)),
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}` },
  });
  return scopes;
}

const rateLimited = { 429: Type.Ref('Error') };

const HEALTHY = JSON.stringify({ status: 'ok' });
const READY = JSON.stringify({ status: 'ready', database: 'ok', migrations: 'current' });

/**
 * The interface description, the scopes (registerOpenApi's), liveness and readiness; `notReady` names the failing
 * check, if any.
 */
export function metaRoutes(app: FastifyInstance, scopes: readonly Scope[], notReady: () => Promise<string | undefined>): void {
  app.get(
    '/openapi.json',
    { config: { rateLimit: 'catalog' }, schema: { operationId: 'getOpenApi', summary: 'This interface description (OpenAPI 3.1)', tags: ['meta'], security: PUBLIC_READ, response: { 200: Type.Object({}, { additionalProperties: true, description: 'an OpenAPI 3.1 document' }), ...rateLimited } } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())),
  );
  app.get(
    '/scopes.json',
    {
      config: { rateLimit: 'catalog' },
      schema: {
        operationId: 'getScopes',
        summary: 'The scopes, what each grants and its credential',
        tags: ['meta'],
        security: PUBLIC_READ,
        response: {
          200: Type.Object({
            scopes: Type.Array(
              Type.Object({ scope: Type.String(), grants: Type.String(), credential: Type.String(), security_scheme: Type.String() }),
            ),
          }),
          ...rateLimited,
        },
      },
    },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify({ scopes })),
  );
  app.get(
    '/healthz',
    {
      config: { rateLimit: 'health' },
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process answers (no database call; see /readyz)',
        tags: ['meta'],
        security: PUBLIC_READ,
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 429: Type.Ref('Error'), 503: Type.Ref('Error') },
      },
    },
    (_request, reply) => reply.type('application/json; charset=utf-8').send(HEALTHY),
  );
  app.get(
    '/readyz',
    {
      config: { rateLimit: 'health' },
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: the database answers within 2 s and every migration is applied',
        description: 'Answers 503 with Retry-After: 5 and the failing check in `description` when the instance should get no traffic.',
        tags: ['meta'],
        security: PUBLIC_READ,
        response: {
          200: Type.Object({ status: Type.Literal('ready'), database: Type.Literal('ok'), migrations: Type.Literal('current') }),
          429: Type.Ref('Error'),
          503: Type.Ref('Error'),
        },
      },
    },
    async (_request, reply) => {
      const failed = await notReady();
      if (failed === undefined) return reply.type('application/json; charset=utf-8').send(READY);
      return sendError(reply.header('retry-after', '5'), 503, ErrorMessage.unavailable, failed);
    },
  );
}
