/**
 * Drives the commerce endpoint over a real socket: a test store listening on 127.0.0.1 (the SDK client
 * needs one), raw JSON-RPC posts as a UCP client sends them, and a loopback server for agent profiles.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { startTestStore, type Backend, type TestStore } from '../helpers/store.js';
import { answerSchemaErrors } from './official-schemas.js';

export interface ListeningStore extends TestStore {
  /** http://127.0.0.1:PORT/api/ucp/mcp */
  mcpUrl: string;
  origin: string;
}

export async function startListeningStore(backend: Backend, config: Partial<Config> = {}): Promise<ListeningStore> {
  const test = await startTestStore(backend, {
    config: { rateLimit: false, mcpAllowedHosts: ['127.0.0.1'], allowInsecureProfiles: true, ...config },
  });
  await test.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = test.app.server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return { ...test, origin, mcpUrl: `${origin}/api/ucp/mcp` };
}

export interface RpcAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One POST as a UCP client sends it: `Accept: application/json` only, no initialize, no session. */
export async function postRpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

let nextId = 1;

/** tools/call over a raw POST; returns the whole answer. */
export function callTool(url: string, name: string, args: unknown, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  return postRpc(url, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }, headers);
}

/**
 * tools/call through the app without a socket (`inject`), as a UCP client posts it: the answer must be a result
 * whose structuredContent validates against the official schema of the tool's answer, in the release it names; returns that content.
 */
export async function injectToolCall(app: FastifyInstance, name: string, args: Record<string, unknown>): Promise<any> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/ucp/mcp',
    headers: { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = JSON.parse(response.body);
  assert.ok(body.result, response.body);
  const structured = body.result.structuredContent;
  assert.deepEqual(answerSchemaErrors(name, structured), [], `${name}: ${JSON.stringify(structured).slice(0, 600)}`);
  return structured;
}

export function agentMeta(profile: string): { 'ucp-agent': { profile: string } } {
  return { 'ucp-agent': { profile } };
}

/** A UCP platform profile (2026-04-08) declaring the given capabilities. */
export function platformProfile(capabilities: string[], version = '2026-04-08'): object {
  return {
    ucp: {
      version,
      services: {
        'dev.ucp.shopping': [
          {
            version,
            spec: 'https://ucp.dev/2026-04-08/specification/overview',
            transport: 'mcp',
            schema: 'https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json',
          },
        ],
      },
      capabilities: Object.fromEntries(
        capabilities.map((name) => [
          name,
          [{ version, spec: 'https://ucp.dev/2026-04-08/specification/overview', schema: 'https://ucp.dev/2026-04-08/schemas/shopping/catalog_search.json' }],
        ]),
      ),
      payment_handlers: {},
    },
  };
}

export interface ProfileServer {
  url(path: string): string;
  /** Requests received per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/** Serves agent profiles on 127.0.0.1 over plain http (the store allows that only with UCP_ALLOW_INSECURE_PROFILES). */
export async function startProfileServer(routes: Record<string, Route>): Promise<ProfileServer> {
  const hits = new Map<string, number>();
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (route) return route(request, response);
    response.writeHead(404).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const json = (body: unknown, headers: Record<string, string> = {}): Route => (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** A POST with a Host header of our choosing (fetch does not let a caller set Host). */
export function postWithHost(url: string, host: string, body: unknown): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
