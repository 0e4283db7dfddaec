/**
 * The commerce endpoint's Host and Origin check (DNS-rebinding protection) on a real socket: the loopback
 * names (localhost, 127.0.0.1, [::1]) with the port the store listens on are accepted out of the box, beside
 * BASE_URL's host, so `curl http://127.0.0.1:PORT/api/ucp/mcp` works; any other name is refused with a 403
 * that names the setting allowing it (MCP_ALLOWED_HOSTS).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

/** A request with the Host (and Origin) of our choosing; fetch does not let a caller set Host. */
function send(port: number, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, path: '/api/ucp/mcp', method, headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

for (const backend of backends) {
  describe(`MCP endpoint: loopback names allowed by default (${backend.name})`, () => {
    let t: TestStore;
    let port: number;
    before(async () => {
      // No MCP_ALLOWED_HOSTS: only BASE_URL's host (store.test) and the loopback names.
      t = await startTestStore(backend, { config: { rateLimit: false, mcpAllowedHosts: [] } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => t.close());

    it('curl http://127.0.0.1:PORT/api/ucp/mcp reaches the endpoint (405 for a GET, not 403)', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/ucp/mcp`);
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('allow'), 'POST');
    });

    for (const name of ['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST']) {
      it(`Host ${name}:PORT is accepted`, async () => {
        const answer = await send(port, 'POST', { host: `${name}:${port}` }, PING);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.deepEqual(answer.body, { jsonrpc: '2.0', id: 1, result: {} });
      });
    }

    it("BASE_URL's host is still accepted", async () => {
      assert.equal((await send(port, 'POST', { host: 'store.test' }, PING)).status, 200);
    });

    it('a loopback name on another port than the one the store listens on is refused', async () => {
      for (const host of [`127.0.0.1:${port + 1}`, 'localhost', 'localhost:80']) {
        const refused = await send(port, 'POST', { host }, PING);
        assert.equal(refused.status, 200, host);
        assert.equal(refused.body.error?.code, -32000, host);
      }
    });

    it('a loopback Origin on this port passes; one on another port is refused', async () => {
      assert.equal((await send(port, 'POST', { host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` }, PING)).status, 200);
      const refused = await send(port, 'POST', { host: `127.0.0.1:${port}`, origin: 'http://localhost:8080' }, PING);
      assert.equal(refused.status, 200);
      assert.equal(refused.body.error.data.code, 'forbidden');
      assert.match(refused.body.error.data.content, /MCP_ALLOWED_HOSTS/);
    });

    it('a foreign Host is refused (HTTP 200, -32000 forbidden, the spec) with an error that names MCP_ALLOWED_HOSTS', async () => {
      const answer = await send(port, 'POST', { host: 'evil.example.com' }, PING);
      assert.equal(answer.status, 200);
      assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'id', 'jsonrpc']);
      assert.equal(answer.body.error.data.code, 'forbidden');
      assert.match(answer.body.error.data.content, /MCP_ALLOWED_HOSTS/);
      assert.match(answer.body.error.message, /MCP_ALLOWED_HOSTS/);
      assert.equal(answer.body.error.code, -32000);
    });
  });
}
