/**
 * POST /api/ucp/mcp: JSON-RPC 2.0 over MCP Streamable HTTP, stateless, always answering JSON (UCP clients
 * send `Accept: application/json` alone and skip initialize). MCP 2026-07-28 and the 2025 revisions: the SDK
 * classifies each request (sdk-servers.ts); a single tools/call in the exact envelope (either era, after the SDK's
 * checks for 2026-07-28) and a 2025 bare tools/list take the fast path (fast-path.ts), everything else is answered
 * by the SDK. Every JSON-RPC error is HTTP 200 with the JSON-RPC envelope alone (the
 * spec), rate limiting excepted (429 with Retry-After; see jsonrpc-errors.ts). A JSON-RPC batch (an array) is
 * refused with -32600 (MCP 2025-06-18 dropped batching; one request is one call against the rate limit). GET,
 * DELETE, PUT and PATCH: 405 with Allow: POST (no SSE stream, no session to end), whatever body they carry.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { Type } from 'typebox';
import { UCP_SESSION } from '../openapi-fragment.js';
import { RateLimited } from '../../http/rate-limit.js';
import { PER_AGENT_PROFILE } from '../agent/agent-rate-limit.js';
import { errorResponseBody, httpStatusOf, JsonRpcCode, rateLimitExceeded, type JsonRpcId } from '../jsonrpc-errors.js';
import { MCP_PATH } from '../protocol.js';
import type { ToolCalls } from '../tools/tool-calls.js';
import type { ToolCaller } from '../tools/tool.js';
import { answerToolsCall, exactModernToolsCall, exactToolsCall, exactToolsList, modernResultTail, preparedToolsList } from './fast-path.js';
import { JSON_TYPE, requestId, sendRpcError } from './rpc-reply.js';
import { correctedError, isErrorObject, type SdkServers } from './sdk-servers.js';

const RpcErrorObject = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Optional(Type.Object({}, { additionalProperties: true })),
});
const RpcId = Type.Union([Type.String(), Type.Integer(), Type.Null()]);

const RateLimitedBody = Type.Object(
  {
    status: Type.Literal(429, { description: 'the HTTP status code repeated in the body' }),
    message: Type.String({ description: 'short machine-stable error class' }),
    description: Type.Optional(Type.String()),
    jsonrpc: Type.Literal('2.0'),
    id: RpcId,
    error: RpcErrorObject,
  },
  {
    description:
      'Rate limited: the storefront Error with Retry-After (integer seconds), and the JSON-RPC error -32000 ' +
      'rate_limit_exceeded with data.retry_after (the same seconds).',
  },
);

const MethodNotAllowedBody = Type.Object(
  { status: Type.Literal(405), message: Type.String(), description: Type.Optional(Type.String()), jsonrpc: Type.Literal('2.0'), id: Type.Null(), error: RpcErrorObject },
  { description: 'GET, DELETE, PUT and PATCH: 405 with Allow: POST (the endpoint is stateless: no stream, no session)' },
);

const JsonRpcRequest = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    method: Type.String({ description: 'initialize, tools/list, tools/call, ping, …' }),
    id: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true, description: 'One JSON-RPC 2.0 message. A batch (a JSON array) is refused: -32600 (HTTP 200).' },
);

const JsonRpcResponse = Type.Union(
  [
    Type.Object(
      { jsonrpc: Type.Literal('2.0'), id: Type.Union([Type.String(), Type.Integer()]), result: Type.Object({}, { additionalProperties: true }) },
      { additionalProperties: false, description: 'a result (tools/call: content, structuredContent, isError)' },
    ),
    Type.Object(
      { jsonrpc: Type.Literal('2.0'), id: RpcId, error: RpcErrorObject },
      { additionalProperties: false, description: 'a JSON-RPC error answered with HTTP 200 (-32601, -32602, …)' },
    ),
  ],
  { description: 'One JSON-RPC 2.0 response (never an array).' },
);

const DESCRIPTION =
  'Tools (UCP MCP binding, answered in the release of the caller\'s agent profile: 2026-08-25 or 2026-04-08): ' +
  'search_catalog, lookup_catalog, get_product, create_cart, get_cart, update_cart, cancel_cart, create_checkout, ' +
  'get_checkout, update_checkout, complete_checkout, cancel_checkout, get_order. MCP revisions: 2026-07-28 (stateless: ' +
  'server/discover, `_meta` on every request, no initialize) and 2025-11-25, 2025-06-18, 2025-03-26 (initialize, then ' +
  'calls; clients may send `Accept: application/json` alone and skip initialize). A cart created here is the same cart ' +
  '/cart.js shows; its continue_url shows it to the buyer, and once the buyer takes it over there the cart is theirs (its ' +
  'id answers not_found to the agent), so hand it over when done with it. Arguments carry `meta["ucp-agent"].profile` (the agent platform ' +
  'profile URL): without it the caller is anonymous and may use the catalog and cart tools only; the checkout and order ' +
  'tools answer -32001 invalid_profile_url. complete_checkout never places an order: it answers the buyer\'s ' +
  'approval link (continue_url). Business outcomes are results with `structuredContent.ucp.status`; protocol problems are ' +
  'JSON-RPC errors, always with HTTP 200 (the spec; UCP 2026-08-25 would use HTTP statuses): -32700 parse, -32600 invalid ' +
  'request or a batch, -32601 unknown method, -32602 invalid params or unknown tool, -32001 agent profile or version ' +
  'negotiation (data.code invalid_profile_url, profile_unreachable, profile_malformed, version_unsupported), -32000 with ' +
  'data.code (idempotency_conflict, idempotency_in_progress, unavailable with data.retry_after) or for a refused Host, ' +
  'Origin, media type or size, -32603 internal. Rate limiting alone is HTTP 429 with Retry-After and data.retry_after.';

function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

const FORWARDED_HEADERS = ['content-type', 'mcp-protocol-version', 'mcp-session-id', 'mcp-method', 'mcp-name'] as const;

const headerText = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

const isJsonContentType = (value: string | undefined) => value !== undefined && /^application\/json\s*(;|$)/i.test(value);

const NO_STARTS_LEFT =
  'This client address has started as many carts and checkouts this hour as it may (the storefront\'s count too); retry ' +
  'after the number of seconds in retry_after, or go on with a cart it has.';

export function mcpRoutes(app: FastifyInstance, options: { toolCalls: ToolCalls; sdk: SdkServers; baseUrl: string }): void {
  const { toolCalls, sdk } = options;
  /** The SDK's answer to a 2025 tools/list up to its id, made once. */
  const toolsList = preparedToolsList(sdk.listed);
  const modernTail = modernResultTail(sdk.info);

  /** The client a request's tool calls serve: its address's cart-start budget, the one the storefront's cart routes use. */
  const callerOf = (request: FastifyRequest, reply: FastifyReply): ToolCaller => ({
    log: request.log,
    async admitCartStart() {
      try {
        // No cart token: always a start, so whether a token names a live cart is never asked.
        await app.cartStarts.admit(request, reply, false, async () => false);
      } catch (error) {
        if (!(error instanceof RateLimited)) throw error;
        reply.headers(error.headers);
        throw rateLimitExceeded(error.retryAfterSeconds, NO_STARTS_LEFT);
      }
    },
  });

  /** An SDK answer as the spec has it: a JSON-RPC error is HTTP 200 and the envelope alone, rate limiting 429. */
  async function sendSdkAnswer(reply: FastifyReply, response: Response) {
    const text = await response.text();
    const allow = response.headers.get('allow');
    if (allow) reply.header('allow', allow);
    if (!text) return reply.code(response.status).send();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Never expected (every answer here is JSON); a client is still answered in JSON.
      reply.log.error({ status: response.status, contentType: response.headers.get('content-type') }, 'MCP SDK answered something other than JSON');
      return sendRpcError(reply, 200, null, JsonRpcCode.internalError, 'Internal error');
    }
    if (typeof body !== 'object' || body === null || !('error' in body) || !isErrorObject(body.error)) {
      return reply.code(response.status).type(JSON_TYPE).send(text);
    }
    const error = correctedError(body.error);
    const status = httpStatusOf(error);
    const id = (body as { id?: JsonRpcId }).id ?? null;
    return reply.code(status).type(JSON_TYPE).send(JSON.stringify(errorResponseBody(status, id, error)));
  }

  /** The Web Request the SDK reads: what its transports look at, Accept naming both types (it answers JSON here anyway). */
  function sdkRequest(request: FastifyRequest): Request {
    const headers = new Headers({ accept: 'application/json, text/event-stream' });
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    return new Request(`${options.baseUrl}${MCP_PATH}`, { method: 'POST', headers });
  }

  app.post(
    MCP_PATH,
    {
      config: { rateLimit: 'mcp', rateLimitKeys: PER_AGENT_PROFILE },
      // The SDK judges the JSON-RPC message itself; the schema only documents it.
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'callMcpEndpoint',
        summary: 'JSON-RPC 2.0 over MCP Streamable HTTP (stateless, JSON responses): initialize, tools/list, tools/call, ping',
        description: DESCRIPTION,
        tags: ['ucp'],
        security: UCP_SESSION,
        body: JsonRpcRequest,
        response: {
          200: JsonRpcResponse,
          202: { description: 'notifications or responses only: accepted, no body', type: 'null' },
          405: MethodNotAllowedBody,
          429: RateLimitedBody,
        },
      },
    },
    async (request, reply: FastifyReply) => {
      const { headers } = request;
      if (!isJsonContentType(headers['content-type'])) {
        return sendRpcError(reply, 200, null, JsonRpcCode.protocolError, 'Unsupported Media Type: Content-Type must be application/json');
      }
      if (!acceptsJson(headers.accept)) {
        return sendRpcError(reply, 200, requestId(request.body), JsonRpcCode.protocolError, 'Not Acceptable: the client must accept application/json');
      }
      // JSON-RPC batches are refused, whatever MCP-Protocol-Version says: MCP 2025-06-18 dropped them, and
      // a batch would run many calls for one request counted by the rate limit. For 2025-03-26, which had
      // batches, refusing is the simple choice taken on purpose (counting each message is the other).
      if (Array.isArray(request.body)) {
        return sendRpcError(reply, 200, null, JsonRpcCode.invalidRequest, 'Invalid Request: JSON-RPC batches are not supported; send one message per request');
      }
      const protocolVersion = headerText(headers['mcp-protocol-version']);
      // A 2025 client's exact tools/call or bare tools/list (no 2026 header or claim): the fast path (fast-path.ts).
      if (headers['mcp-method'] === undefined && headers['mcp-name'] === undefined) {
        const call = exactToolsCall(request.body, protocolVersion);
        if (call) {
          const answer = await answerToolsCall(toolCalls, call, callerOf(request, reply));
          return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
        }
        const listId = exactToolsList(request.body, protocolVersion);
        if (listId !== undefined) return reply.type(JSON_TYPE).send(`${toolsList}${JSON.stringify(listId)}}`);
      }
      const route = classifyInboundRequest({
        httpMethod: 'POST',
        protocolVersionHeader: protocolVersion,
        mcpMethodHeader: headerText(headers['mcp-method']),
        mcpNameHeader: headerText(headers['mcp-name']),
        body: request.body,
      });
      if (route.kind === 'modern' && route.message.method === 'subscriptions/listen') {
        // The store announces no list changes: no stream to open (the SDK would answer one, as an event stream).
        return sendRpcError(reply, 200, requestId(request.body), JsonRpcCode.methodNotFound, 'Method not found: subscriptions/listen (this server sends no notifications)');
      }
      if (route.kind === 'reject') {
        const data = typeof route.data === 'object' && route.data !== null ? (route.data as Record<string, unknown>) : undefined;
        return sendRpcError(reply, 200, requestId(request.body), route.code, route.message, data);
      }
      // A 2026-07-28 tools/call the SDK has classified (its envelope and header checks passed) in the exact envelope.
      // The headers the SDK requires of it are checked here as the SDK does (it checks them after classifying).
      const modernCall = route.kind === 'modern' ? exactModernToolsCall(request.body, headers) : undefined;
      if (modernCall) {
        const answer = await answerToolsCall(toolCalls, modernCall, callerOf(request, reply), modernTail);
        return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
      }
      const answer = route.kind === 'modern' ? sdk.handleModern(sdkRequest(request), request.body, callerOf(request, reply)) : sdk.handleLegacy(sdkRequest(request), request.body, callerOf(request, reply));
      return sendSdkAnswer(reply, await answer);
    },
  );

  // Every other method answers 405 from onRequest, before any body is read: a DELETE sent with a JSON
  // Content-Type and no (or a broken) body is still a method not allowed, not a parse error.
  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return sendRpcError(reply, 405, null, JsonRpcCode.protocolError, 'Method not allowed: this endpoint is stateless and takes POST only.');
  };
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: MCP_PATH,
    config: { rateLimit: 'mcp', rateLimitKeys: PER_AGENT_PROFILE },
    schema: { hide: true },
    onRequest: methodNotAllowed,
    handler: async () => undefined, // never reached: onRequest has answered
  });
}
