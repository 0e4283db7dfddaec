/**
 * The MCP endpoint on the official SDK v2 (@modelcontextprotocol/server), serving MCP 2026-07-28 beside the 2025
 * revisions from one server definition, stateless. A request is classified by the SDK (`classifyInboundRequest`, the
 * step its own `createMcpHandler` runs): 2026-07-28 traffic (a `_meta` envelope claim) goes to the SDK's
 * `createMcpHandler` (server/discover, `_meta`, `resultType`, the Mcp-Method/Mcp-Name checks, cache hints), strict
 * modern-only; 2025-era traffic (initialize, then calls without an envelope) to the SDK's Streamable HTTP transport
 * built per request with JSON answers, the documented composition for keeping 2025 clients as they were (the SDK's
 * own stateless fallback answers an event stream and wants `text/event-stream` in Accept, which UCP clients do not
 * send). A server is made per request from one definition: a v2 Server costs microseconds to build.
 * Tool calls reach the request's client (its rate budgets) through the Web Request the handler context carries.
 */
import {
  createMcpHandler,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type CallToolResult,
  type McpHttpHandler,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { internalError, JsonRpcCode, type JsonRpcErrorObject } from '../jsonrpc-errors.js';
import { ucpJsonSchemaValidator } from '../schemas/one-ajv.js';
import { catalogSearchDescription, searchCatalogTool } from '../tools/catalog-tools.js';
import type { ListedTool, ToolCalls } from '../tools/tool-calls.js';
import type { ToolCaller, ToolOutcome } from '../tools/tool.js';
import { serverInfo, serverInstructions, type StoreIdentity } from './server-identity.js';

/** The stateless 2026-07-28 revision, served through `createMcpHandler`. */
export const MODERN_MCP_VERSION = '2026-07-28';
/** 2025 revisions `initialize` agrees to; a client asking for another gets the first (MCP lifecycle). */
export const LEGACY_MCP_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
/** Every MCP revision the endpoint serves, newest first. */
export const MCP_PROTOCOL_VERSIONS = [MODERN_MCP_VERSION, ...LEGACY_MCP_VERSIONS] as const;

/** Tools; and logging, so 2025 clients may set a level (the server sends no log notifications on stateless calls). */
const SERVER_CAPABILITIES = { tools: {}, logging: {} };

/**
 * How long a 2026-07-28 client may keep `tools/list` and `server/discover` (their `ttlMs`): the tools and their
 * schemas change only with a new release of the program, and they are the same for every caller (`public`).
 */
const LIST_TTL_MS = 60 * 60 * 1000;

export function callToolResult(outcome: ToolOutcome): CallToolResult {
  return { content: [{ type: 'text', text: outcome.json }], structuredContent: JSON.parse(outcome.json), isError: outcome.isError };
}

export class SdkServers {
  readonly info: ReturnType<typeof serverInfo>;
  private readonly instructions: string;
  /** tools/list: the tools as listed, search_catalog naming the store whose products it searches. */
  readonly listed: ListedTool[];
  /** The client each request in flight serves, by the Web Request handed to the SDK (the handler context's `http.req`). */
  private readonly callers = new WeakMap<Request, ToolCaller>();
  private readonly modern: McpHttpHandler;
  /** The SDK's JSON Schema validator: the one on the commerce door's Ajv (one-ajv.ts), not a new Ajv. */
  readonly jsonSchemaValidator = ucpJsonSchemaValidator;

  /** `log`: where the SDK's own failures and refusals are reported (its error's name and message, never a body). */
  constructor(
    private readonly tools: ToolCalls,
    store: StoreIdentity,
    private readonly log?: Pick<FastifyBaseLogger, 'warn'>,
  ) {
    this.info = serverInfo(store);
    this.instructions = serverInstructions(store);
    this.listed = tools.listed.map((tool) => (tool.name === searchCatalogTool.name ? { ...tool, description: catalogSearchDescription(store.storeName) } : tool));
    // No handler here sends a message before its result, so every answer is one JSON body.
    this.modern = createMcpHandler(() => this.create([MODERN_MCP_VERSION]), { legacy: 'reject', onerror: this.reportError });
  }

  /** Answers one 2026-07-28 request (already parsed) through the SDK's handler; `caller`: the client it serves. */
  async handleModern(request: Request, parsedBody: unknown, caller: ToolCaller): Promise<Response> {
    this.callers.set(request, caller);
    return this.modern.fetch(request, { parsedBody });
  }

  /** Answers one 2025-era request (already parsed) through the SDK's Streamable HTTP transport, JSON answers. */
  async handleLegacy(request: Request, parsedBody: unknown, caller: ToolCaller): Promise<Response> {
    this.callers.set(request, caller);
    const server = this.create(LEGACY_MCP_VERSIONS);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    transport.onerror = this.reportError;
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await transport.close();
    }
  }

  private readonly reportError = (error: Error) => {
    this.log?.warn({ sdkError: { name: error.name, message: error.message.slice(0, 200) } }, 'MCP SDK reported an error');
  };

  private create(versions: readonly string[]): Server {
    const server = new Server(this.info, {
      capabilities: SERVER_CAPABILITIES,
      instructions: this.instructions,
      jsonSchemaValidator: this.jsonSchemaValidator,
      supportedProtocolVersions: [...versions],
      cacheHints: {
        'tools/list': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
        'server/discover': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
      },
    });
    server.setRequestHandler('tools/list', () => ({ tools: this.listed }));
    server.setRequestHandler('tools/call', async (request, context: ServerContext) => {
      const caller = context.http?.req ? this.callers.get(context.http.req) : undefined;
      if (!caller) throw internalError();
      return callToolResult(await this.tools.call(request.params.name, request.params.arguments, caller));
    });
    return server;
  }
}

/** The first problem of a ZodError message (a JSON list of issues), e.g. `params.protocolVersion: Invalid input`; else undefined. */
function firstIssue(message: string): string | undefined {
  try {
    const issues: unknown = JSON.parse(message);
    const issue: unknown = Array.isArray(issues) ? issues[0] : undefined;
    if (typeof issue === 'object' && issue !== null && 'message' in issue && typeof issue.message === 'string') {
      const path = 'path' in issue && Array.isArray(issue.path) ? issue.path.join('.') : '';
      return `${path || 'params'}: ${issue.message}`;
    }
  } catch {
    // not a list of issues
  }
  return undefined;
}

/** An error the SDK answered, with JSON-RPC codes corrected where the SDK differs from JSON-RPC. */
export function correctedError(error: JsonRpcErrorObject): JsonRpcErrorObject {
  // The body was parsed already, so "parse error" means a JSON value that is no JSON-RPC message.
  if (error.code === JsonRpcCode.parseError) return { code: JsonRpcCode.invalidRequest, message: 'Invalid Request: not a JSON-RPC 2.0 message' };
  // The SDK reports params failing a method's request schema as an internal error whose message is the zod
  // issue list: that is invalid params. Any other internal error (ours, or the SDK's own) stays one, in our words.
  const issue = error.code === JsonRpcCode.internalError ? firstIssue(error.message) : undefined;
  if (issue) return { code: JsonRpcCode.invalidParams, message: `Invalid params: ${issue}` };
  if (error.code === JsonRpcCode.internalError) return { code: error.code, message: 'Internal error' };
  return error;
}

/** A JSON-RPC error object as the SDK answers one. */
export function isErrorObject(value: unknown): value is JsonRpcErrorObject {
  return typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'number' && 'message' in value && typeof value.message === 'string';
}
