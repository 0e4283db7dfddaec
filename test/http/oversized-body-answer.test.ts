/**
 * A client still sending a body over the limit reads its 413 (issue 35, finding 9): the store reads and discards the
 * rest of the body (up to a bound) before it closes the connection, so a client that writes the whole body before it
 * reads (Node's http client) gets the answer, not EPIPE. Sent over a real socket by node:http, on every kind of body:
 * the storefront's JSON, multipart and forms, the commerce endpoint's JSON-RPC, and a chunked body with no length.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const MIB = 1024 * 1024;
/**
 * Over what the loopback's socket buffers hold on this machine (a 3 MiB body fits in them whole, so a store closing at
 * once went unnoticed), under the 16 MiB the store reads of a refused body.
 */
const PAST_THE_BUFFERS = 12 * MIB;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The JSON body, or the text of any other. */
  body: any;
  /** Resolves when the store has closed the connection. */
  closed: Promise<void>;
}

/**
 * POSTs `size` bytes to `path` on a connection of its own, writing the whole body (waiting for the socket to drain)
 * before it reads the answer; declares the length unless `chunked`. Rejects with the socket's error (EPIPE,
 * ECONNRESET) if the store closes the connection before the answer is read.
 */
function postOversized(origin: string, path: string, contentType: string, { size = PAST_THE_BUFFERS, chunked = false } = {}): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': contentType, host: new URL(origin).host, ...(chunked ? {} : { 'content-length': String(size) }) };
    const request = httpRequest({ host: hostname, port, method: 'POST', path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = String(response.headers['content-type']).startsWith('application/json');
        resolve({ status: response.statusCode!, headers: response.headers, body: json ? JSON.parse(text) : text, closed });
      });
    });
    const closed = new Promise<void>((done) => request.on('close', done));
    request.on('error', reject);
    // Nothing is read until the whole body is written: a client that writes before it reads (most do).
    request.on('socket', (socket) => {
      socket.pause();
      request.once('finish', () => socket.resume());
    });
    let sent = 0;
    const write = () => {
      while (sent < size) {
        const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, size - sent));
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', write);
      }
      request.end();
    };
    write();
  });
}

const PAYLOAD_TOO_LARGE = { status: 413, message: 'Payload too large' };

for (const backend of backends) {
  describe(`a body over the limit is answered 413 to a client still sending it (${backend.name})`, () => {
    let t: TestStore;
    let origin: string;
    before(async () => {
      t = await startTestStore(backend);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    after(() => t.close());

    /** The connection is closed after the answer, and the store serves the next request. */
    async function closedThenServes(answer: Answer) {
      assert.equal(answer.headers.connection, 'close');
      await answer.closed;
      const next = await fetch(`${origin}/cart.js`);
      assert.equal(next.status, 200);
      await next.arrayBuffer();
    }

    it('3 MiB of JSON to /cart/add.js, and 12 MiB: the storefront Error', async () => {
      for (const size of [3 * MIB, PAST_THE_BUFFERS]) {
        const answer = await postOversized(origin, '/cart/add.js', 'application/json', { size });
        assert.equal(answer.status, 413);
        assert.deepEqual({ status: answer.body.status, message: answer.body.message }, PAYLOAD_TOO_LARGE);
        assert.equal(typeof answer.body.description, 'string');
        await closedThenServes(answer);
      }
    });

    it('a multipart form to /cart/add.js: the storefront Error', async () => {
      const answer = await postOversized(origin, '/cart/add.js', 'multipart/form-data; boundary=xyz');
      assert.equal(answer.status, 413);
      assert.deepEqual({ status: answer.body.status, message: answer.body.message }, PAYLOAD_TOO_LARGE);
      await closedThenServes(answer);
    });

    it('a urlencoded form to the approval form (16 KiB): the storefront Error; to the checkout form: its page', async () => {
      const approval = await postOversized(origin, '/checkout/approve/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'application/x-www-form-urlencoded');
      assert.equal(approval.status, 413);
      assert.deepEqual({ status: approval.body.status, message: approval.body.message }, PAYLOAD_TOO_LARGE);
      await closedThenServes(approval);
      const checkout = await postOversized(origin, '/checkout', 'application/x-www-form-urlencoded');
      assert.equal(checkout.status, 413);
      assert.match(String(checkout.headers['content-type']), /^text\/html/);
      await closedThenServes(checkout);
    });

    it('3 MiB to /api/ucp/mcp, and 12 MiB: the JSON-RPC error (HTTP 200, the spec: the envelope alone)', async () => {
      for (const size of [3 * MIB, PAST_THE_BUFFERS]) {
        const answer = await postOversized(origin, '/api/ucp/mcp', 'application/json', { size });
        assert.equal(answer.status, 200);
        assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'id', 'jsonrpc']);
        assert.match(answer.body.error.message, /too large/i);
        assert.equal(answer.body.jsonrpc, '2.0');
        assert.equal(answer.body.id, null);
        assert.equal(answer.body.error.code, -32000);
        await closedThenServes(answer);
      }
    });

    it('a chunked body (no Content-Length) to /cart/add.js: refused once it passes the limit, answered once it has all arrived', async () => {
      const answer = await postOversized(origin, '/cart/add.js', 'application/json', { chunked: true });
      assert.equal(answer.status, 413);
      assert.deepEqual({ status: answer.body.status, message: answer.body.message }, PAYLOAD_TOO_LARGE);
      await closedThenServes(answer);
    });

    it('a body past what the store reads of it (40 MiB over 16 MiB): the connection is closed on a client still sending, and the store goes on', async () => {
      await assert.rejects(postOversized(origin, '/cart/add.js', 'application/json', { size: 40 * MIB }), /EPIPE|ECONNRESET/);
      const next = await fetch(`${origin}/cart.js`);
      assert.equal(next.status, 200);
      await next.arrayBuffer();
    });
  });
}
