/**
 * The fast path: a single `tools/call` request in exactly the envelope the SDK would accept is answered
 * here, by the same ToolCalls the SDK server uses, without building a Web Request/Response pair per call
 * (that alone costs more than a catalog search). Anything else, even slightly different, goes to the SDK,
 * which answers it (and its errors) as the protocol says. Both paths give the same answer to a call.
 */
import { errorResponseBody, httpStatusOf, internalError, JsonRpcError, type JsonRpcId } from '../jsonrpc-errors.js';
import type { ToolCalls } from '../tools/tool-calls.js';
import type { ToolCaller } from '../tools/tool.js';
import { LEGACY_MCP_VERSIONS } from './sdk-servers.js';

export interface FastCall {
  id: string | number;
  name: string;
  arguments: Record<string, unknown> | undefined;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

const ENVELOPE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta']);

/** The call, when the body is exactly `{jsonrpc: "2.0", id, method: "tools/call", params: {name, arguments?, _meta?}}`. */
export function exactToolsCall(body: unknown, protocolVersion: string | undefined): FastCall | undefined {
  if (protocolVersion !== undefined && !(LEGACY_MCP_VERSIONS as readonly string[]).includes(protocolVersion)) return undefined;
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !hasOnlyKeys(body, ENVELOPE_KEYS)) return undefined;
  const { id, params } = body;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined;
  if (!isPlainObject(params) || typeof params.name !== 'string' || !hasOnlyKeys(params, PARAMS_KEYS)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  if (params._meta !== undefined && !isPlainObject(params._meta)) return undefined;
  return { id, name: params.name, arguments: params.arguments as Record<string, unknown> | undefined };
}

export interface FastAnswer {
  status: number;
  body: string;
}

export async function answerToolsCall(tools: ToolCalls, call: FastCall, caller: ToolCaller): Promise<FastAnswer> {
  const id = JSON.stringify(call.id);
  try {
    const outcome = await tools.call(call.name, call.arguments, caller);
    return {
      status: 200,
      body:
        `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${outcome.jsonString ?? JSON.stringify(outcome.json)}}],` +
        `"structuredContent":${outcome.json},"isError":${outcome.isError}}}`,
    };
  } catch (error) {
    const rpc = error instanceof JsonRpcError ? error : internalError();
    const status = httpStatusOf(rpc);
    const errorObject = { code: rpc.code, message: rpc.message, ...(rpc.data !== undefined ? { data: rpc.data } : {}) };
    return { status, body: JSON.stringify(errorResponseBody(status, call.id as JsonRpcId, errorObject)) };
  }
}
