/**
 * The JSON-RPC error catalogue of the commerce endpoint, in one place: codes, the HTTP status each is sent with,
 * and the body. The spec: `POST /api/ucp/mcp` answers 200 with `jsonrpc`, `id` and either `result` or `error`, and
 * 429 (the storefront Error, with Retry-After) when rate limited. So every JSON-RPC error travels with HTTP 200 and
 * a body that is only the JSON-RPC envelope, the UCP error code in `error.data.code`, where the official MCP clients
 * read it; rate limiting alone is 429, its body both the storefront Error (`status`, `message`, `description`) and
 * the JSON-RPC error (`data.retry_after` beside the Retry-After header). UCP 2026-08-25 asks for the HTTP status as
 * the primary signal on Streamable HTTP; where the two differ, the spec wins (docs/commerce-door.md). A status
 * outside POST (405 for GET or DELETE) keeps the same two-faced body.
 */
import { errorBody, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../http/errors.js';

export const JsonRpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** UCP: authentication, forbidden, idempotency conflict, rate limit, unavailable. */
  protocolError: -32000,
  /** UCP: discovery (agent profile) and version negotiation failures. */
  discoveryFailed: -32001,
} as const;

/** UCP discovery error codes (overview, error codes), carried in `data.code` of a -32001 error. */
export type DiscoveryErrorCode = 'invalid_profile_url' | 'profile_unreachable' | 'profile_malformed' | 'version_unsupported';

export type JsonRpcId = string | number | null;

/** An error a handler throws on purpose; the SDK and the fast path both send `{code, message, data}`. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const invalidParams = (message: string, data?: Record<string, unknown>) => new JsonRpcError(JsonRpcCode.invalidParams, message, data);
export const unknownTool = (name: string) => new JsonRpcError(JsonRpcCode.invalidParams, `Unknown tool: ${name.slice(0, 100)}`);
export const internalError = () => new JsonRpcError(JsonRpcCode.internalError, 'Internal error');
export const idempotencyConflict = () =>
  new JsonRpcError(JsonRpcCode.protocolError, 'Idempotency key reused with different parameters', {
    code: 'idempotency_conflict',
    content: 'This idempotency-key was used with other arguments; use a new key for a new request.',
  });
export const idempotencyInProgress = () =>
  new JsonRpcError(JsonRpcCode.protocolError, 'Idempotency key in use by a request still running', {
    code: 'idempotency_in_progress',
    content: 'A request with this idempotency-key is still being processed; retry it shortly with the same key.',
  });
/** The store cannot serve the call now (its database is unavailable): `unavailable`, and when to try again. */
export const storeUnavailable = () =>
  new JsonRpcError(JsonRpcCode.protocolError, 'Service unavailable', {
    code: 'unavailable',
    content: 'The store is temporarily unavailable; retry after the number of seconds in retry_after.',
    retry_after: UNAVAILABLE_RETRY_AFTER_SECONDS,
  });
/** Over a rate budget (the client address's, a cart's or an agent profile's): HTTP 429 (with Retry-After), and when to try again. */
export const rateLimitExceeded = (retryAfterSeconds: number, content = 'Too many requests; retry after the number of seconds in retry_after.') =>
  new JsonRpcError(JsonRpcCode.protocolError, 'Rate limit exceeded', { code: 'rate_limit_exceeded', content, retry_after: retryAfterSeconds });
export const discoveryFailed = (code: DiscoveryErrorCode, content: string) =>
  new JsonRpcError(JsonRpcCode.discoveryFailed, 'UCP discovery failed', { code, content });

/** The HTTP status a JSON-RPC error response travels with: 429 when rate limited, else 200 (the spec). */
export function httpStatusOf(error: { code: number; data?: unknown }): number {
  return error.code === JsonRpcCode.protocolError && (error.data as { code?: string } | undefined)?.code === 'rate_limit_exceeded' ? 429 : 200;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** The body of an error response: JSON-RPC always, plus the storefront Error fields when the status is not 200. */
export function errorResponseBody(status: number, id: JsonRpcId, error: JsonRpcErrorObject, description?: string): Record<string, unknown> {
  const rpc = { jsonrpc: '2.0', id, error };
  if (status === 200) return rpc;
  const content = (error.data as { content?: unknown } | undefined)?.content;
  return { ...errorBody(status, description ?? (typeof content === 'string' ? content : error.message)), ...rpc };
}
