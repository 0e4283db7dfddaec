/**
 * The product read answered on arrival (#11, item 5; src/storefront/product-read-on-arrival.ts), over real sockets
 * (app.inject goes straight to Fastify, so it gives the route's own answer to compare with): the same status,
 * body and headers as the route for the same request (ETag and 304, CORS, HSTS over https, the request id a
 * trusted proxy sends); Fastify's hooks never run for it; every request it does not take reaches Fastify and is
 * answered as before; and each read counts once against the rate limit, in memory and in Redis, with the 429,
 * the metrics series and the rate-limited counter as for any other route.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest, Agent, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { BUDGETS } from '../../src/http/rate-limit.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const PRODUCT = '/products/decaf-capsules.js';
const REDIS_URL = 'redis://127.0.0.1:6379';
/** Headers that differ between any two answers, or that Node's socket layer adds and inject does not. */
const PER_ANSWER = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'transfer-encoding']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A store listening on loopback, and how many answers Fastify sent (its onResponse hook). */
interface Listening extends TestStore {
  origin: string;
  port: number;
  reachedFastify(): number;
}

async function listening(backend: (typeof backends)[number], config: Partial<Config> = {}): Promise<Listening> {
  let reached = 0;
  const test = await startTestStore(backend, {
    config,
    app: { extend: (app: FastifyInstance) => app.addHook('onResponse', (_request, _reply, done) => (reached++, done())) },
  });
  await test.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = test.app.server.address() as AddressInfo;
  return { ...test, port, origin: `http://127.0.0.1:${port}`, reachedFastify: () => reached };
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
after(() => agent.destroy());

/** One request over a socket (raw headers, no decoding), on a kept-alive connection. */
function overSocket(origin: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${origin}${path}`, { method, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** The route's own answer to the same request, through Fastify without a socket. */
async function throughRoute(app: FastifyInstance, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const response = await app.inject({ method: method as 'GET', url: path, headers: { host: '127.0.0.1', ...headers } });
  return { status: response.statusCode, headers: response.headers as IncomingHttpHeaders, body: response.rawPayload };
}

function comparable({ status, headers, body }: Answer) {
  const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_ANSWER.has(name)));
  return { status, headers: kept, body: body.toString('utf8') };
}

async function assertSameAnswer(test: Listening, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const socketAnswer = await overSocket(test.origin, path, headers, method);
  const routeAnswer = await throughRoute(test.app, path, headers, method);
  assert.deepEqual(comparable(socketAnswer), comparable(routeAnswer), `${method} ${path} ${JSON.stringify(headers)}`);
  assert.ok(socketAnswer.headers['x-request-id'], 'the answer has a request id');
  return socketAnswer;
}

for (const backend of backends) {
  describe(`product read on arrival (${backend.name})`, () => {
    let test: Listening;
    let https: Listening;
    before(async () => {
      test = await listening(backend);
      https = await listening(backend, { baseUrl: 'https://store.test', trustProxy: loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy });
    });
    after(async () => {
      await test?.close();
      await https?.close();
    });

    it('answers what the route answers (200, 304 by ETag, any Origin, HSTS over https), without Fastify', async () => {
      const before = test.reachedFastify();
      const first = await assertSameAnswer(test, PRODUCT);
      assert.equal(first.status, 200);
      assert.equal(JSON.parse(first.body.toString('utf8')).handle, 'decaf-capsules');
      assert.match(String(first.headers['x-request-id']), UUID);
      const etag = String(first.headers.etag);
      assert.equal((await assertSameAnswer(test, PRODUCT, { 'if-none-match': etag })).status, 304);
      assert.equal((await assertSameAnswer(test, PRODUCT, { 'if-none-match': `"other", W/${etag}` })).status, 304);
      assert.equal((await assertSameAnswer(test, PRODUCT, { 'if-none-match': '"other"' })).status, 200);
      assert.equal((await assertSameAnswer(test, PRODUCT, { origin: 'https://theme.example' })).headers['access-control-allow-origin'], '*');
      // Each comparison sent one request through the route; the socket's never reached Fastify.
      assert.equal(test.reachedFastify() - before, 5, 'only the inject requests ran Fastify hooks');

      const secure = await assertSameAnswer(https, PRODUCT, { 'x-request-id': 'from-the-proxy.42' });
      assert.equal(secure.headers['strict-transport-security'], 'max-age=31536000');
      assert.equal(secure.headers['x-request-id'], 'from-the-proxy.42', 'a trusted proxy id is kept');
      assert.match(String((await overSocket(test.origin, PRODUCT, { 'x-request-id': 'forged' })).headers['x-request-id']), UUID, 'an untrusted id is not');
    });

    it('hands everything else to Fastify, answered as before', async () => {
      for (const [path, status, method] of [
        ['/products/no-such-product.js', 404, 'GET'],
        ['/products/Decaf-Capsules.js', 404, 'GET'],
        [`${PRODUCT}?view=quick`, 200, 'GET'],
        ['/products/decaf%2Dcapsules.js', 200, 'GET'],
        [`${PRODUCT}/`, 200, 'GET'],
        [PRODUCT, 200, 'HEAD'],
        [PRODUCT, 405, 'DELETE'],
      ] as const) {
        const before = test.reachedFastify();
        const answer = await assertSameAnswer(test, path, {}, method);
        assert.equal(answer.status, status, `${method} ${path}`);
        assert.equal(test.reachedFastify() - before, 2, `${method} ${path} went through Fastify both ways`);
      }
      // HTTP/1.1 without Host: the arrival hook's 400.
      const socket = connect(test.port, '127.0.0.1');
      socket.write(`GET ${PRODUCT} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      let raw = '';
      for await (const chunk of socket) raw += String(chunk);
      assert.match(raw, /^HTTP\/1\.1 400 /);
      assert.match(raw, /Host header/);
    });
  });

  for (const counters of ['memory', 'redis'] as const) {
    describe(`product read on arrival, rate limited in ${counters} (${backend.name})`, () => {
      const prefix = `sf-test-arrival-${randomBytes(6).toString('hex')}:`;
      let test: Listening;
      let redis: Redis | undefined;
      before(async () => {
        test = await listening(backend, {
          rateLimit: true,
          trustProxy: loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy,
          // A Redis command slower than the 200 ms default serves its request unlimited (fail open): the budget's
          // edge is counted exactly only if none times out, on a loaded machine too.
          ...(counters === 'redis' ? { redisUrl: REDIS_URL, redisKeyPrefix: prefix, redisCommandTimeoutMs: 5000 } : {}),
        });
        if (counters === 'redis') redis = new Redis(REDIS_URL);
      });
      after(async () => {
        await test?.close();
        if (redis) {
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          redis.disconnect();
        }
      });

      it('counts each read once: the budget answers, then 429 with Retry-After from the arrival hook, in the metrics', async () => {
        const client = { 'x-forwarded-for': '198.51.100.23' };
        const budget = BUDGETS.catalog.max;
        const over = 3;
        const statuses: number[] = [];
        let limited: Answer | undefined;
        const before = test.reachedFastify();
        for (let i = 0; i < budget + over; i++) {
          const answer = await overSocket(test.origin, PRODUCT, client);
          statuses.push(answer.status);
          if (answer.status === 429) limited ??= answer;
        }
        assert.equal(statuses.filter((status) => status === 200).length, budget);
        assert.deepEqual(statuses.slice(budget), Array(over).fill(429));
        assert.equal(test.reachedFastify() - before, over, 'only the refused reads went on to Fastify');
        assert.ok(limited);
        assert.ok(Number(limited.headers['retry-after']) >= 1);
        assert.equal(limited.headers['x-ratelimit-remaining'], '0');
        assert.deepEqual(Object.keys(JSON.parse(limited.body.toString('utf8'))).sort(), ['description', 'message', 'status']);
        // Another client is not limited.
        assert.equal((await overSocket(test.origin, PRODUCT, { 'x-forwarded-for': '198.51.100.24' })).status, 200);
        if (redis) assert.equal(Number(await redis.get(`${prefix}rate-limit:catalog:198.51.100.23`)), budget + over, 'counted once each');

        const metrics = (await overSocket(test.origin, '/metrics')).body.toString('utf8');
        const series = (status: number) =>
          Number(new RegExp(`^storefront_http_requests_total\\{method="GET",route="/products/:handle.js",status_code="${status}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
        assert.equal(series(200), budget + 1);
        assert.equal(series(429), over);
        assert.match(metrics, new RegExp(`^storefront_rate_limited_requests_total\\{route_class="catalog"\\} ${over}$`, 'm'));
      });
    });
  }
}
