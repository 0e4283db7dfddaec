/**
 * The MCP endpoint on the official SDK (@modelcontextprotocol/sdk 1.x), stateless: each HTTP request gets
 * a fresh Streamable HTTP transport (the SDK's stateless transport serves one request), connected to a
 * server taken from a pool. A server is connected to one transport at a time, and building one (request
 * handlers) costs more than answering a call, so servers are reused, not rebuilt. Their JSON Schema validator
 * is the commerce door's one Ajv (one-ajv.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { httpStatusOf, internalError, JsonRpcCode, type JsonRpcErrorObject } from '../jsonrpc-errors.js';
import { ucpJsonSchemaValidator } from '../schemas/one-ajv.js';
import { serverInfo, serverInstructions, type StoreIdentity } from './server-identity.js';
import { catalogSearchDescription, searchCatalogTool } from '../tools/catalog-tools.js';
import type { ListedTool, ToolCalls } from '../tools/tool-calls.js';
import type { ToolCaller, ToolOutcome } from '../tools/tool.js';

/** MCP revisions `initialize` agrees to; a client asking for another gets the latest (MCP lifecycle). */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** Tools; and logging, so clients may set a level (the server sends no log notifications on stateless calls). */
const SERVER_CAPABILITIES = { tools: {}, logging: {} };

/** Idle servers kept for reuse; beyond this, a burst's extra servers are dropped after use. */
const MAX_IDLE_SERVERS = 64;

export function callToolResult(outcome: ToolOutcome): CallToolResult {
  return { content: [{ type: 'text', text: outcome.json }], structuredContent: JSON.parse(outcome.json), isError: outcome.isError };
}

/** A pooled server, and the client of the request it serves now (a server serves one request at a time). */
interface PooledServer {
  server: Server;
  caller?: ToolCaller;
}

export class SdkServers {
  private readonly idle: PooledServer[] = [];
  /** The SDK's JSON Schema validator: the one on the commerce door's Ajv (one-ajv.ts), not a new Ajv. */
  readonly jsonSchemaValidator = ucpJsonSchemaValidator;

  private readonly info: ReturnType<typeof serverInfo>;
  private readonly instructions: string;
  /** tools/list: the tools as listed, search_catalog naming the store whose products it searches. */
  private readonly listed: ListedTool[];

  constructor(
    private readonly tools: ToolCalls,
    store: StoreIdentity,
  ) {
    this.info = serverInfo(store);
    this.instructions = serverInstructions(store);
    this.listed = tools.listed.map((tool) => (tool.name === searchCatalogTool.name ? { ...tool, description: catalogSearchDescription(store.storeName) } : tool));
  }

  /** Answers one HTTP request (already parsed) through the SDK's transport; `caller`: the client it serves. */
  async handle(request: Request, parsedBody: unknown, caller: ToolCaller): Promise<Response> {
    const pooled = this.idle.pop() ?? this.create();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    pooled.caller = caller;
    try {
      await pooled.server.connect(transport);
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await transport.close();
      pooled.caller = undefined;
      if (this.idle.length < MAX_IDLE_SERVERS) this.idle.push(pooled);
    }
  }

  private create(): PooledServer {
    const server = new Server(this.info, {
      capabilities: SERVER_CAPABILITIES,
      instructions: this.instructions,
      jsonSchemaValidator: this.jsonSchemaValidator,
    });
    server.setRequestHandler(InitializeRequestSchema, (request) => {
      const requested = request.params.protocolVersion;
      return {
        protocolVersion: MCP_PROTOCOL_VERSIONS.find((version) => version === requested) ?? LATEST_PROTOCOL_VERSION,
        capabilities: SERVER_CAPABILITIES,
        serverInfo: this.info,
        instructions: this.instructions,
      };
    });
    const pooled: PooledServer = { server };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listed }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      // With JSON responses, handleRequest answers only once every call of the request has run: the caller is set.
      if (!pooled.caller) throw internalError();
      return callToolResult(await this.tools.call(request.params.name, request.params.arguments, pooled.caller));
    });
    return pooled;
  }
}

/** Names the first problem of a ZodError message (a JSON list of issues), e.g. `params.protocolVersion: Invalid input`. */
function firstIssue(message: string): string {
  try {
    const issues: unknown = JSON.parse(message);
    const issue: unknown = Array.isArray(issues) ? issues[0] : undefined;
    if (typeof issue === 'object' && issue !== null) {
      const path = 'path' in issue && Array.isArray(issue.path) ? issue.path.join('.') : '';
      return `${path || 'params'}: ${'message' in issue && typeof issue.message === 'string' ? issue.message : 'invalid'}`;
    }
  } catch {
    // not a list of issues
  }
  return 'params do not match the method';
}

function corrected(error: JsonRpcErrorObject): JsonRpcErrorObject {
  // The body was parsed already, so "parse error" means a JSON value that is no JSON-RPC message.
  if (error.code === JsonRpcCode.parseError) return { code: JsonRpcCode.invalidRequest, message: 'Invalid Request: not a JSON-RPC 2.0 message' };
  // The SDK reports params failing a method's request schema as an internal error; our own handlers
  // send exactly "Internal error" for what is really ours.
  if (error.code === JsonRpcCode.internalError && error.message !== 'Internal error') {
    return { code: JsonRpcCode.invalidParams, message: `Invalid params: ${firstIssue(error.message)}` };
  }
  return error;
}

/**
 * The SDK's answer with JSON-RPC codes corrected where the SDK differs from JSON-RPC (above), and the HTTP
 * status a single error travels with (UCP: -32001 as 400/422/424, -32603 as 500).
 */
export function correctedSdkAnswer(status: number, body: unknown): { status: number; body: unknown } {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    if (typeof message === 'object' && message !== null && 'error' in message && isErrorObject(message.error)) message.error = corrected(message.error);
  }
  const single = Array.isArray(body) || typeof body !== 'object' || body === null || !('error' in body) ? undefined : body.error;
  return { status: status === 200 && isErrorObject(single) ? httpStatusOf(single) : status, body };
}

/** A JSON-RPC error object as the SDK answers one. */
function isErrorObject(value: unknown): value is JsonRpcErrorObject {
  return typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'number' && 'message' in value && typeof value.message === 'string';
}
