/**
 * POST /api/ucp/mcp: JSON-RPC 2.0 over MCP Streamable HTTP, stateless, always answering JSON (UCP clients
 * send `Accept: application/json` alone and skip initialize). A single tools/call in the exact envelope
 * takes the fast path; everything else is answered by the SDK. A JSON-RPC batch (an array) is refused
 * with 400/-32600 (MCP 2025-06-18 dropped batching; one request is one call against the rate limit). GET,
 * DELETE, PUT and PATCH: 405 with Allow: POST (no SSE stream, no session to end), whatever body they carry.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../http/errors.js';
import { UCP_SESSION } from '../openapi-fragment.js';
import { RateLimited } from '../../http/rate-limit.js';
import { JsonRpcCode, rateLimitExceeded, withStorefrontFields } from '../jsonrpc-errors.js';
import { MCP_PATH } from '../protocol.js';
import type { ToolCalls } from '../tools/tool-calls.js';
import type { ToolCaller } from '../tools/tool.js';
import { answerToolsCall, exactToolsCall } from './fast-path.js';
import { JSON_TYPE, requestId, sendRpcError } from './rpc-reply.js';
import { PER_AGENT_PROFILE } from '../agent/agent-rate-limit.js';
import { correctedSdkAnswer, type SdkServers } from './sdk-servers.js';

const RpcErrorObject = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Optional(Type.Object({}, { additionalProperties: true })),
});
const RpcId = Type.Union([Type.String(), Type.Integer(), Type.Null()]);

const DUAL_ERROR = 'Both the storefront Error and a JSON-RPC error response (every non-200 answer of this endpoint).';

const McpErrorBody = Type.Object(
  {
    status: Type.Integer({ description: 'the HTTP status code repeated in the body' }),
    message: Type.String({ description: 'short machine-stable error class' }),
    description: Type.Optional(Type.String()),
    jsonrpc: Type.Literal('2.0'),
    id: RpcId,
    error: RpcErrorObject,
  },
  { description: DUAL_ERROR },
);

const JsonRpcRequest = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    method: Type.String({ description: 'initialize, tools/list, tools/call, ping, …' }),
    id: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true, description: 'One JSON-RPC 2.0 message. A batch (a JSON array) is refused: HTTP 400, -32600.' },
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

/** The error body, described for one status. */
const errorFor = (description: string) => ({ ...McpErrorBody, description: `${description}. ${DUAL_ERROR}` });

const ERROR_RESPONSES = {
  400: errorFor('Parse error (-32700), invalid request or a batch (-32600), unsupported MCP-Protocol-Version (-32000), invalid or missing agent profile URL (-32001 invalid_profile_url; checkout and order tools need one)'),
  403: errorFor('Host or Origin not allowed (DNS-rebinding protection), -32000'),
  405: errorFor('Method not allowed: GET and DELETE on this path answer 405 with Allow: POST, -32000'),
  406: errorFor('Not acceptable: the client does not accept application/json, -32000'),
  409: errorFor('Idempotency key reused with other arguments, -32000 idempotency_conflict'),
  413: errorFor('Payload too large, -32000'),
  415: errorFor('Unsupported media type: Content-Type must be application/json, -32000'),
  422: errorFor('Agent profile malformed or its UCP version unsupported, -32001'),
  424: errorFor('Agent profile unreachable, -32001 profile_unreachable'),
  429: errorFor('Rate limit exceeded (Retry-After header), -32000 with data.retry_after'),
  500: errorFor('Internal error, -32603'),
  503: errorFor('The store is temporarily unavailable (Retry-After header), -32000 unavailable with data.retry_after'),
};

const DESCRIPTION =
  'Tools (UCP MCP binding, answered in the release of the caller\'s agent profile: 2026-08-25 or 2026-04-08): ' +
  'search_catalog, lookup_catalog, get_product, create_cart, get_cart, update_cart, cancel_cart, create_checkout, ' +
  'get_checkout, update_checkout, complete_checkout, cancel_checkout, get_order. A cart created here is the same cart ' +
  '/cart.js shows; its continue_url shows it to the buyer, and once the buyer takes it over there the cart is theirs (its ' +
  'id answers not_found to the agent), so hand it over when done with it. Arguments carry `meta["ucp-agent"].profile` (the agent platform ' +
  'profile URL): without it the caller is anonymous and may use the catalog and cart tools only; the checkout and order ' +
  'tools answer -32001 invalid_profile_url (HTTP 400). complete_checkout never places an order: it answers the buyer\'s ' +
  'approval link (continue_url). Business outcomes are results with `structuredContent.ucp.status`; protocol problems are ' +
  'JSON-RPC errors (-32700 parse, -32600 invalid request, -32601 unknown method, -32602 invalid params or unknown tool, ' +
  '-32001 agent profile/version negotiation with HTTP 400/422/424, -32000 with HTTP 403/405/406/409/413/415/429/503, ' +
  '-32603 internal). Clients may send `Accept: application/json` alone and skip initialize.';

function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

const FORWARDED_HEADERS = ['content-type', 'mcp-protocol-version', 'mcp-session-id'] as const;

/** A 503 (the store's database is unavailable) says when to try again in Retry-After too, as `data.retry_after` does. */
const retryAfterOn503 = (reply: FastifyReply, status: number) => (status === 503 ? reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS)) : reply);

const isJsonContentType = (value: string | undefined) => value !== undefined && /^application\/json\s*(;|$)/i.test(value);

const NO_STARTS_LEFT =
  'This client address has started as many carts and checkouts this hour as it may (the storefront\'s count too); retry ' +
  'after the number of seconds in retry_after, or go on with a cart it has.';

export function mcpRoutes(app: FastifyInstance, options: { toolCalls: ToolCalls; sdk: SdkServers; baseUrl: string }): void {
  const { toolCalls, sdk } = options;

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

  async function answerWithSdk(request: FastifyRequest, reply: FastifyReply) {
    // Only what the SDK's transport reads; it wants both types in Accept and answers JSON here anyway.
    const headers = new Headers({ accept: 'application/json, text/event-stream' });
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    const response = await sdk.handle(new Request(`${options.baseUrl}${MCP_PATH}`, { method: 'POST', headers }), request.body, callerOf(request, reply));
    const text = await response.text();
    const allow = response.headers.get('allow');
    if (allow) reply.header('allow', allow);
    if (!text) return reply.code(response.status).send();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return reply.code(response.status).type(response.headers.get('content-type') ?? JSON_TYPE).send(text);
    }
    const answer = correctedSdkAnswer(response.status, body);
    retryAfterOn503(reply, answer.status);
    return reply.code(answer.status).type(JSON_TYPE).send(JSON.stringify(withStorefrontFields(answer.status, answer.body)));
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
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request, reply: FastifyReply) => {
      if (!isJsonContentType(request.headers['content-type'])) {
        return sendRpcError(reply, 415, null, JsonRpcCode.protocolError, 'Unsupported Media Type: Content-Type must be application/json');
      }
      if (!acceptsJson(request.headers.accept)) {
        return sendRpcError(reply, 406, requestId(request.body), JsonRpcCode.protocolError, 'Not Acceptable: the client must accept application/json');
      }
      // JSON-RPC batches are refused, whatever MCP-Protocol-Version says: MCP 2025-06-18 dropped them, and
      // a batch would run many calls for one request counted by the rate limit. For 2025-03-26, which had
      // batches, refusing is the simple choice taken on purpose (counting each message is the other).
      if (Array.isArray(request.body)) {
        return sendRpcError(reply, 400, null, JsonRpcCode.invalidRequest, 'Invalid Request: JSON-RPC batches are not supported; send one message per request');
      }
      const call = exactToolsCall(request.body, request.headers['mcp-protocol-version'] as string | undefined);
      if (!call) return answerWithSdk(request, reply);
      const answer = await answerToolsCall(toolCalls, call, callerOf(request, reply));
      retryAfterOn503(reply, answer.status);
      return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
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
