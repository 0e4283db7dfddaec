/** Sending JSON-RPC error answers from the HTTP layer of the commerce endpoint. */
import type { FastifyReply } from 'fastify';
import { errorResponseBody, type JsonRpcId } from '../jsonrpc-errors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The request's JSON-RPC id when it has a valid one (so an HTTP-level error can still name the call). */
export function requestId(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
}

/** `description`: the storefront Error's (non-200 answers); by default `data.content`, else the JSON-RPC message. */
export function sendRpcError(
  reply: FastifyReply,
  status: number,
  id: JsonRpcId,
  code: number,
  message: string,
  data?: Record<string, unknown>,
  description?: string,
) {
  return reply
    .code(status)
    .type(JSON_TYPE)
    .send(JSON.stringify(errorResponseBody(status, id, { code, message, ...(data ? { data } : {}) }, description)));
}
