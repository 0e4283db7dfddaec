/**
 * The interface description (/openapi.json, OpenAPI 3.1, generated from the route schemas) and the scope
 * metadata (/scopes.json). The security schemes name the spec's scopes; none of them issues a credential.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../config.js';
import { ErrorMessage, sendError } from './errors.js';

export const SCOPES = [
  {
    scope: 'catalog:read',
    grants: 'Read products, variants, prices and availability; no customer or order data.',
    credential: 'none',
    security_scheme: 'publicRead',
  },
  {
    scope: 'cart:write',
    grants: 'Create and modify one cart; no access to customer or order data.',
    credential: 'session cookie `cart` only',
    security_scheme: 'sessionCart',
  },
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
] as const;

/** For an operation anyone may call: no credential (`{}`), described as the publicRead scheme's scope. */
type SecurityRequirement = Record<string, readonly string[]>;
export const PUBLIC_READ: SecurityRequirement[] = [{}, { publicRead: ['catalog:read'] }];
export const SESSION_CART: SecurityRequirement[] = [{ sessionCart: ['cart:write'] }];
/** The commerce endpoint: catalog and cart tools need no credential; checkout and order tools need a UCP session (an agent profile). */
export const UCP_SESSION: SecurityRequirement[] = [{}, { ucpSession: ['checkout:write', 'checkout:complete'] }];

/** The document names the merchant: its store's name, description and contact (STORE_NAME, STORE_DESCRIPTION, STORE_CONTACT_EMAIL). */
export type ApiOwner = Pick<Config, 'baseUrl' | 'storeName' | 'storeDescription' | 'storeContactEmail'>;

export async function registerOpenApi(app: FastifyInstance, owner: ApiOwner): Promise<void> {
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
      tags: [
        { name: 'catalog', description: 'Products and collections' },
        { name: 'search', description: 'Predictive search and recommendations' },
        { name: 'cart', description: 'The session cart (cookie `cart`)' },
        { name: 'ucp', description: 'Commerce protocol: the UCP merchant profile and the MCP endpoint' },
        { name: 'meta', description: 'Service description and health' },
      ],
      components: {
        securitySchemes: {
          publicRead: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Scope catalog:read. No credential: send nothing; no key is issued or accepted.',
          },
          sessionCart: {
            type: 'apiKey',
            in: 'cookie',
            name: 'cart',
            description: 'Scope cart:write. The opaque cart session cookie, set by the store on the first cart request.',
          },
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
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}` },
  });
}

const rateLimited = { 429: Type.Ref('Error') };

const HEALTHY = JSON.stringify({ status: 'ok' });
const READY = JSON.stringify({ status: 'ready', database: 'ok', migrations: 'current' });

/** The interface description, the scopes, liveness and readiness; `notReady` names the failing check, if any. */
export function metaRoutes(app: FastifyInstance, notReady: () => Promise<string | undefined>): void {
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
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify({ scopes: SCOPES })),
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
