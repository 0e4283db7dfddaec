/**
 * What a client can send that never reaches a route, over a real socket (inject cannot send it): no Host,
 * an unmet Expect, an over-long URL, a request that never finishes arriving. Every answer is the JSON Error
 * `{status, message, description}` with `status` equal to the HTTP status, and no connection is held forever.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { STATUS_MESSAGE } from '../../src/http/errors.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { schemaErrors } from '../helpers/schemas.js';

after(dropTestDatabases);

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
  /** Milliseconds from the first byte sent to the server closing the connection. */
  closedAfter: number;
}

function parseAnswer(raw: string, closedAfter: number): RawAnswer {
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let text = raw.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    for (let rest = text; ; ) {
      const size = parseInt(rest.slice(0, rest.indexOf('\r\n')), 16);
      if (!size) break;
      const start = rest.indexOf('\r\n') + 2;
      decoded += rest.slice(start, start + size);
      rest = rest.slice(start + size + 2);
    }
    text = decoded;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text, body, closedAfter };
}

/**
 * Writes `parts` to a fresh connection, `gap` ms apart, and reads until the server closes it. Fails when the
 * server has not closed it after `deadline` ms (a connection held open is the defect some tests look for).
 */
function exchange(port: number, parts: string[], options: { gap?: number; deadline?: number } = {}): Promise<RawAnswer> {
  const { gap = 0, deadline = 10_000 } = options;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const send = (index: number) => {
      if (index >= parts.length || socket.destroyed) return;
      socket.write(parts[index]!);
      timer = setTimeout(() => send(index + 1), gap);
    };
    const giveUp = setTimeout(() => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`the server still held the connection after ${deadline} ms; received: ${Buffer.concat(chunks).toString().slice(0, 200)}`));
    }, deadline);
    socket.on('connect', () => send(0));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {}); // a reset after the answer is still an answer
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(giveUp);
      resolve(parseAnswer(Buffer.concat(chunks).toString('utf8'), Date.now() - started));
    });
  });
}

function assertJsonError(answer: RawAnswer, status: number): any {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/, JSON.stringify(answer.headers));
  assert.ok(answer.body, `a JSON body, got ${JSON.stringify(answer.text)}`);
  assert.deepEqual(schemaErrors('Error', answer.body), []);
  assert.equal(answer.body.status, status);
  assert.equal(typeof answer.body.description, 'string');
  return answer.body;
}

const listen = async (t: TestStore) => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as net.AddressInfo).port;
};

for (const backend of backends) {
  describe(`answers before any route, over a socket (${backend.name})`, () => {
    let t: TestStore;
    let port: number;
    before(async () => {
      t = await startTestStore(backend, { config: { rateLimit: false } });
      port = await listen(t);
    });
    after(() => t.close());

    it('an HTTP/1.1 request without Host: 400 JSON naming Host', async () => {
      const body = assertJsonError(await exchange(port, ['GET /products.json HTTP/1.1\r\nConnection: close\r\n\r\n']), 400);
      assert.equal(body.message, STATUS_MESSAGE[400]);
      assert.match(body.description, /Host/);
      // HTTP/1.0 has no Host: it is answered as usual.
      const old = await exchange(port, ['GET /products.json?limit=1 HTTP/1.0\r\n\r\n']);
      assert.equal(old.status, 200, old.text);
      assert.equal(old.body.products.length, 1);
    });

    it('an Expect the server cannot meet: 417 JSON', async () => {
      const answer = await exchange(port, ['GET /products.json HTTP/1.1\r\nHost: store.test\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n']);
      const body = assertJsonError(answer, 417);
      assert.equal(body.message, STATUS_MESSAGE[417]);
      assert.match(body.description, /Expect/);
      // Expect: 100-continue is met: the body follows and the request is answered.
      const payload = JSON.stringify({ items: [{ id: 42100000001, quantity: 1 }] });
      const added = await exchange(port, [
        `POST /cart/add.js HTTP/1.1\r\nHost: store.test\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        payload,
      ], { gap: 50 });
      assert.equal(added.status, 100); // the interim answer; the cart follows it
      assert.match(added.text, /^HTTP\/1\.1 200 OK\r\n[^]*"item_count":1/);
    });

    it('a URL of 20 KB: 431 JSON', async () => {
      const answer = await exchange(port, [`GET /products.json?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: store.test\r\n\r\n`]);
      assert.equal(assertJsonError(answer, 431).message, STATUS_MESSAGE[431]);
    });

    it('a handle of thousands of characters is a handle that does not exist: 404 JSON from its route, with the request id', async () => {
      for (const path of [`/products/${'a'.repeat(600)}.js`, `/collections/${'a'.repeat(6000)}/products.json`, `/cart/c/${'A'.repeat(10_000)}`]) {
        const answer = await exchange(port, [`GET ${path} HTTP/1.1\r\nHost: store.test\r\nConnection: close\r\n\r\n`]);
        assert.equal(assertJsonError(answer, 404).message, STATUS_MESSAGE[404], path.slice(0, 30));
        assert.ok(answer.headers['x-request-id'], path.slice(0, 30));
      }
    });

    it('DELETE, GET, PUT and PATCH on the MCP endpoint with a JSON content type: 405 with Allow: POST, whatever the body', async () => {
      for (const [method, body] of [
        ['DELETE', ''],
        ['DELETE', '{}'],
        ['DELETE', '{"jsonrpc": '],
        ['GET', ''],
        ['PUT', '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
        ['PATCH', '{}'],
      ] as const) {
        const answer = await exchange(port, [
          `${method} /api/ucp/mcp HTTP/1.1\r\nHost: store.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        ]);
        const error = assertJsonError(answer, 405);
        assert.equal(error.message, STATUS_MESSAGE[405]);
        assert.equal(answer.headers.allow, 'POST');
        assert.equal(error.jsonrpc, '2.0');
        assert.equal(error.error.code, -32000);
      }
    });
  });

  describe(`server timeouts (${backend.name})`, () => {
    let t: TestStore;
    let port: number;
    before(async () => {
      // Short limits so the test is quick; the defaults are tens of seconds. The bounds below are far above these
      // limits (a loaded machine may be slow to close) and far below the defaults: the defect they catch is a
      // connection held open.
      t = await startTestStore(backend, {
        config: { rateLimit: false },
        app: { timeouts: { requestTimeout: 600, headersTimeout: 400, keepAliveTimeout: 300, checkInterval: 100 } },
      });
      port = await listen(t);
    });
    after(() => t.close());

    it('the defaults bound every phase of a request', async () => {
      const other = await startTestStore(backend, { config: { rateLimit: false } });
      try {
        const server = other.app.server;
        assert.ok(server.requestTimeout > 0 && server.requestTimeout <= 60_000, `requestTimeout ${server.requestTimeout}`);
        assert.ok(server.headersTimeout > 0 && server.headersTimeout <= server.requestTimeout, `headersTimeout ${server.headersTimeout}`);
        assert.ok(server.keepAliveTimeout > 0 && server.keepAliveTimeout <= 120_000, `keepAliveTimeout ${server.keepAliveTimeout}`);
        // No per-socket idle timer by default: it cost about 15% of product-read throughput (see src/app.ts).
        assert.equal(server.timeout, 0, `socket idle timeout ${server.timeout}`);
      } finally {
        await other.close();
      }
    });

    it('a body sent one byte at a time is cut off at the request timeout with 408 JSON', async () => {
      const head = 'POST /cart/add.js HTTP/1.1\r\nHost: store.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
      const answer = await exchange(port, [head, ...'{"items":[{"id":42100000001,"quantity":1}]}'.split('')], { gap: 150, deadline: 10_000 });
      assert.equal(assertJsonError(answer, 408).message, STATUS_MESSAGE[408]);
      assert.ok(answer.closedAfter < 5000, `closed after ${answer.closedAfter} ms`);
    });

    it('headers sent one byte at a time are cut off too', async () => {
      const head = 'GET /products.json HTTP/1.1\r\nHost: store.test\r\nX-Slow: ' + 'x'.repeat(40) + '\r\n\r\n';
      const answer = await exchange(port, head.split(''), { gap: 100, deadline: 10_000 });
      assertJsonError(answer, 408);
      assert.ok(answer.closedAfter < 5000, `closed after ${answer.closedAfter} ms`);
    });

    it('three such connections at once are all closed', async () => {
      const head = 'POST /cart/add.js HTTP/1.1\r\nHost: store.test\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n';
      const answers = await Promise.all([1, 2, 3].map(() => exchange(port, [head, ...'{"items":[]}'.split('')], { gap: 200, deadline: 10_000 })));
      for (const answer of answers) assert.equal(answer.status, 408);
    });

    it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
      const answer = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: store.test\r\n\r\n'], { deadline: 10_000 });
      assert.equal(answer.status, 200);
      assert.ok(answer.closedAfter < 5000, `closed after ${answer.closedAfter} ms`);
    });

    it('a request that arrives in time is answered as usual', async () => {
      const answer = await exchange(port, ['GET /products.json?limit=2 HTTP/1.1\r\nHost: store.test\r\nConnection: close\r\n\r\n']);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.products.length, 2);
    });
  });
}
