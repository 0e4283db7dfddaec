/**
 * The fast path, for MCP 2025 clients (no `_meta` envelope claim, no 2026 header): a single `tools/call` in exactly
 * the envelope the SDK accepts is answered here by the same ToolCalls the SDK server uses, and a bare `tools/list`
 * from a body prepared once, without classifying the request or building a Web Request/Response pair per call
 * (measured: the SDK's way costs about twice the call; docs/performance.md). Anything else, even slightly different,
 * goes to the SDK, which answers it (and its errors) as the protocol says. The answers are the SDK's byte for byte
 * (its member order: result or error, then jsonrpc, then id); test/ucp/mcp-raw.test.ts compares them.
 */
import { errorResponseBody, httpStatusOf, internalError, JsonRpcError, type JsonRpcId } from '../jsonrpc-errors.js';
import type { ToolCalls } from '../tools/tool-calls.js';
import type { ToolCaller } from '../tools/tool.js';
import { LEGACY_MCP_VERSIONS, MODERN_MCP_VERSION } from './sdk-servers.js';

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
/** The key of `_meta` whose presence makes a request MCP 2026-07-28 traffic (the SDK's envelope claim). */
const MODERN_CLAIM = 'io.modelcontextprotocol/protocolVersion';

/** `_meta` a 2025 call may carry on the fast path: none, or a progress token as the SDK's schema has it. */
function isPlainLegacyMeta(meta: Record<string, unknown>): boolean {
  for (const key in meta) {
    if (key !== 'progressToken' || !isRpcId(meta[key])) return false;
  }
  return true;
}

/** The envelope keys of a 2026-07-28 `_meta` the fast path takes (the SDK's classification has checked them); any other goes to the SDK. */
const MODERN_META_KEYS = new Set([MODERN_CLAIM, 'io.modelcontextprotocol/clientCapabilities', 'io.modelcontextprotocol/clientInfo']);

const isLegacyHeader = (protocolVersion: string | undefined) =>
  protocolVersion === undefined || (LEGACY_MCP_VERSIONS as readonly string[]).includes(protocolVersion);
const isRpcId = (id: unknown): id is string | number => typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));

/** A `tools/call` in exactly the envelope the SDK accepts: `{jsonrpc: "2.0", id, method: "tools/call", params: {name, arguments?, _meta?}}`. */
function exactCall(body: unknown): { call: FastCall; meta: unknown } | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !hasOnlyKeys(body, ENVELOPE_KEYS)) return undefined;
  const { id, params } = body;
  if (!isRpcId(id) || !isPlainObject(params) || typeof params.name !== 'string' || !hasOnlyKeys(params, PARAMS_KEYS)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  return { call: { id, name: params.name, arguments: params.arguments as Record<string, unknown> | undefined }, meta: params._meta };
}

/** A 2025 client's exact call: no 2026 header, and a `_meta` (if any) that the SDK's 2025 schema accepts. */
export function exactToolsCall(body: unknown, protocolVersion: string | undefined): FastCall | undefined {
  if (!isLegacyHeader(protocolVersion)) return undefined;
  const exact = exactCall(body);
  if (!exact || (exact.meta !== undefined && (!isPlainObject(exact.meta) || !isPlainLegacyMeta(exact.meta)))) return undefined;
  return exact.call;
}

/** The id of a body that is exactly `{jsonrpc: "2.0", id, method: "tools/list"}` (no params) from a 2025 client. */
export function exactToolsList(body: unknown, protocolVersion: string | undefined): string | number | undefined {
  if (!isLegacyHeader(protocolVersion) || !isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/list') return undefined;
  if (body.params !== undefined || !hasOnlyKeys(body, ENVELOPE_KEYS) || !isRpcId(body.id)) return undefined;
  return body.id;
}

/** The SDK's answer to a 2025 `tools/list`, but for its id: `{"result":…,"jsonrpc":"2.0","id":` (then the id and `}`). */
export const preparedToolsList = (listed: unknown) => `{"result":${JSON.stringify({ tools: listed })},"jsonrpc":"2.0","id":`;

export interface FastAnswer {
  status: number;
  body: string;
}

/**
 * A tools/call the SDK classified as MCP 2026-07-28 (`classifyInboundRequest`: envelope, headers), in the exact
 * envelope: `params` is `{name, arguments?, _meta}`, `_meta` names 2026-07-28 and holds only the envelope's keys, and
 * the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers say the same as the body.
 */
export function exactModernToolsCall(body: unknown, headers: Record<string, string | string[] | undefined>): FastCall | undefined {
  const exact = exactCall(body);
  if (!exact || !isPlainObject(exact.meta) || exact.meta[MODERN_CLAIM] !== MODERN_MCP_VERSION || !hasOnlyKeys(exact.meta, MODERN_META_KEYS)) return undefined;
  const { call } = exact;
  // The SDK requires these headers and that they name the body's revision, method and tool (a gateway may route on
  // them); anything else, an encoded name included, is the SDK's to answer.
  if (headers['mcp-protocol-version'] !== MODERN_MCP_VERSION || headers['mcp-method'] !== 'tools/call' || headers['mcp-name'] !== call.name) return undefined;
  return call;
}

/** What the SDK adds to a 2026-07-28 result after the tool's members: `resultType` and the server's name in `_meta`. */
export const modernResultTail = (serverInfo: object) =>
  `,"resultType":"complete","_meta":${JSON.stringify({ 'io.modelcontextprotocol/serverInfo': serverInfo })}`;

/** `resultTail`: members after the tool's (a 2026-07-28 result's, modernResultTail); none for 2025 clients. */
export async function answerToolsCall(tools: ToolCalls, call: FastCall, caller: ToolCaller, resultTail = ''): Promise<FastAnswer> {
  const id = JSON.stringify(call.id);
  try {
    const outcome = await tools.call(call.name, call.arguments, caller);
    return {
      status: 200,
      body:
        `{"result":{"content":[{"type":"text","text":${outcome.jsonString ?? JSON.stringify(outcome.json)}}],` +
        `"structuredContent":${outcome.json},"isError":${outcome.isError}${resultTail}},"jsonrpc":"2.0","id":${id}}`,
    };
  } catch (error) {
    const rpc = error instanceof JsonRpcError ? error : internalError();
    const status = httpStatusOf(rpc);
    const errorObject = { code: rpc.code, message: rpc.message, ...(rpc.data !== undefined ? { data: rpc.data } : {}) };
    return { status, body: JSON.stringify(errorResponseBody(status, call.id as JsonRpcId, errorObject)) };
  }
}
