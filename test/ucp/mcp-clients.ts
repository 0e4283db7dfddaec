/**
 * The official MCP clients an agent developer uses, behind one small face for tests: the v1 SDK
 * (`@modelcontextprotocol/sdk`, MCP 2025-11-25 with initialize) and the v2 SDK (`@modelcontextprotocol/client`,
 * pinned to MCP 2026-07-28: server/discover, `_meta` on every request, no session). Each records the HTTP status of
 * every answer it received, so a test can say what travelled on the wire as well as what the client made of it.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

export type McpClientKind = 'v1' | 'v2';

export const MCP_CLIENTS: readonly { kind: McpClientKind; label: string; protocolVersion: string }[] = [
  { kind: 'v1', label: 'MCP SDK v1 client, MCP 2025-11-25', protocolVersion: '2025-11-25' },
  { kind: 'v2', label: 'MCP SDK v2 client, MCP 2026-07-28', protocolVersion: '2026-07-28' },
];

export interface CallResult {
  content?: unknown;
  structuredContent?: any;
  isError?: boolean;
}

export interface AgentClient {
  kind: McpClientKind;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<CallResult>;
  listTools(): Promise<{ tools: { name: string; description?: string; inputSchema: any; outputSchema?: any; annotations?: unknown }[] }>;
  ping(): Promise<unknown>;
  /** The MCP revision the client and the store agreed on. */
  protocolVersion(): string | undefined;
  serverName(): string | undefined;
  instructions(): string | undefined;
  /** The HTTP status of each answer the client received, in order. */
  statuses: number[];
  /** The headers of the last answer. */
  lastHeaders(): Headers | undefined;
  close(): Promise<void>;
}

export async function connectAgentClient(kind: McpClientKind, url: string, name = 'storefront-test-agent'): Promise<AgentClient> {
  const statuses: number[] = [];
  let headers: Headers | undefined;
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    headers = response.headers;
    return response;
  };
  const info = { name, version: '1.0.0' };
  if (kind === 'v1') {
    const client = new ClientV1(info);
    const transport = new TransportV1(new URL(url), { fetch: recordingFetch });
    await client.connect(transport);
    return {
      kind,
      callTool: (params) => client.callTool(params) as Promise<CallResult>,
      listTools: () => client.listTools() as ReturnType<AgentClient['listTools']>,
      ping: () => client.ping(),
      protocolVersion: () => transport.protocolVersion,
      serverName: () => client.getServerVersion()?.name,
      instructions: () => client.getInstructions(),
      statuses,
      lastHeaders: () => headers,
      close: () => client.close(),
    };
  }
  const client = new ClientV2(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new TransportV2(new URL(url), { fetch: recordingFetch }));
  return {
    kind,
    callTool: (params) => client.callTool(params) as Promise<CallResult>,
    listTools: () => client.listTools() as ReturnType<AgentClient['listTools']>,
    ping: () => client.ping(),
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    serverName: () => client.getServerVersion()?.name,
    instructions: () => client.getInstructions(),
    statuses,
    lastHeaders: () => headers,
    close: () => client.close(),
  };
}
