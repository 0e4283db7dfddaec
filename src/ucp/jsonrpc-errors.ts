/**
 * The JSON-RPC error catalogue of the commerce endpoint, in one place: codes, the HTTP status each is sent
 * with (UCP: on Streamable HTTP the HTTP status is the primary signal, the code the secondary one), and
 * the body. A body sent with a non-200 status is both a JSON-RPC response and the storefront Error
 * (`status`, `message`, `description`), so plain HTTP clients and JSON-RPC clients both understand it; its
 * `message` comes from the one catalogue both doors share (src/http/errors.ts): a status means the same class
 * here as on the storefront. Only the JSON-RPC codes are this door's own.
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

/** UCP discovery error codes (overview, error codes) and the HTTP status each is sent with. */
export const DiscoveryErrorStatus = {
  invalid_profile_url: 400,
  profile_unreachable: 424,
  profile_malformed: 422,
  version_unsupported: 422,
} as const;
export type DiscoveryErrorCode = keyof typeof DiscoveryErrorStatus;

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
/** The store cannot serve the call now (its database is unavailable): HTTP 503, and when to try again. */
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

/** The -32000 errors sent with a status of their own (UCP: 409 idempotency, 429 rate limit, 503 unavailable); the others travel with 200. */
const PROTOCOL_ERROR_STATUS = new Map<string, number>([
  ['idempotency_conflict', 409],
  ['idempotency_in_progress', 409],
  ['rate_limit_exceeded', 429],
  ['unavailable', 503],
]);

/** The HTTP status a JSON-RPC error response travels with. */
export function httpStatusOf(error: { code: number; data?: unknown }): number {
  switch (error.code) {
    case JsonRpcCode.parseError:
    case JsonRpcCode.invalidRequest:
      return 400;
    case JsonRpcCode.internalError:
      return 500;
    case JsonRpcCode.protocolError:
      return PROTOCOL_ERROR_STATUS.get((error.data as { code?: string } | undefined)?.code ?? '') ?? 200;
    case JsonRpcCode.discoveryFailed: {
      const code = (error.data as { code?: string } | undefined)?.code;
      return code && code in DiscoveryErrorStatus ? DiscoveryErrorStatus[code as DiscoveryErrorCode] : 400;
    }
    default:
      return 200;
  }
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

/** Adds the storefront Error fields to a JSON-RPC error body the SDK produced with a non-200 status. */
export function withStorefrontFields(status: number, body: unknown): unknown {
  if (status === 200 || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const rpc = body as { id?: JsonRpcId; error?: JsonRpcErrorObject };
  if (!rpc.error || typeof rpc.error.message !== 'string') return body;
  return errorResponseBody(status, rpc.id ?? null, rpc.error);
}
