/**
 * Posting an order event to the platform's webhook, against a receiver on 127.0.0.1 (insecure profiles allowed, as
 * in tests): the platform gets the order with the Standard Webhooks headers, the UCP-Agent, the Content-Digest and
 * a signature it verifies with the key the store's own /.well-known/ucp publishes. A 2xx is delivered; anything
 * else is a DeliveryError, retryable unless the URL breaks the rules profile URLs follow.
 */
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createVerifier, httpbis } from 'http-message-signatures';
import { DeliveryError } from '../../../src/outbox/delivery.js';
import { contentDigest } from '../../../src/ucp/webhooks/message-signature.js';
import { SigningKeys, type PublishedKey } from '../../../src/ucp/webhooks/signing-keys.js';
import { checkWebhookUrl, sendWebhook } from '../../../src/ucp/webhooks/webhook-sender.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../../helpers/store.js';

after(dropTestDatabases);

interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A platform's webhook endpoint on loopback: answers by path, records every request. */
async function startReceiver(routes: Record<string, (response: http.ServerResponse) => void>) {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      received.push({ method: request.method ?? '', path, headers: request.headers, body: Buffer.concat(chunks) });
      const route = routes[path];
      if (route) route(response);
      else response.writeHead(404).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    hits: (path: string) => received.filter((r) => r.path === path).length,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Verifies a received request as a platform does, with the keys the store's profile publishes. */
async function verifiedWithProfileKeys(request: Received, published: PublishedKey[]): Promise<boolean> {
  const result = await httpbis.verifyMessage(
    {
      keyLookup: async ({ keyid }) => {
        const jwk = published.find((key) => key.kid === keyid);
        if (!jwk) return null;
        return { id: jwk.kid, algs: ['ecdsa-p256-sha256'], verify: createVerifier(createPublicKey({ key: { ...jwk } as JsonWebKey, format: 'jwk' }), 'ecdsa-p256-sha256') };
      },
      requiredFields: ['@method', '@authority', '@path', 'content-digest', 'content-type'],
      requiredParams: ['created', 'keyid'],
    },
    { method: request.method, url: `http://${request.headers.host}${request.path}`, headers: request.headers as Record<string, string> },
  );
  return result === true;
}

const order = JSON.stringify({ id: 'ord_test', label: '#1001', checkout_id: 'chk_test' });

for (const backend of backends) {
  describe(`${backend.name}: posting an order event to the platform's webhook`, () => {
    let test: TestStore;
    let keys: SigningKeys;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let busyThenOk = 0;
    before(async () => {
      test = await startTestStore(backend, { config: { baseUrl: 'https://shop.example', allowInsecureProfiles: true } });
      // The same database as the store's: the same key the store signs with and publishes.
      keys = await SigningKeys.open(test.store.db, undefined);
      receiver = await startReceiver({
        '/hooks/orders': (response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ucp":{"version":"2026-04-08"}}'),
        '/hooks/busy': (response) => response.writeHead(503).end('try later'),
        '/hooks/flaky': (response) => (busyThenOk++ === 0 ? response.writeHead(503).end() : response.writeHead(204).end()),
        '/hooks/gone': (response) => response.writeHead(410).end(),
        '/hooks/moved': (response) => response.writeHead(302, { location: '/hooks/orders' }).end(),
        '/hooks/silent': () => {},
        '/hooks/chatty': (response) => {
          response.writeHead(200);
          const chunk = Buffer.alloc(64 * 1024, 'x');
          const write = () => (response.destroyed ? undefined : response.write(chunk) ? setImmediate(write) : response.once('drain', write));
          write();
        },
      });
    });
    after(async () => {
      await receiver.close();
      await test.close();
    });

    const options = { businessProfileUrl: 'https://shop.example/.well-known/ucp', allowInsecure: true };
    const send = (path: string, eventId = 'evt_test', extra: { allowInsecure?: boolean; timeoutMs?: number } = {}) =>
      sendWebhook({ url: receiver.url(path), body: order, timestamp: 1_767_225_600 }, eventId, { keys, ...options, ...extra });

    it("delivers: the platform gets the order, the Standard Webhooks headers and UCP-Agent, and verifies the digest and the signature with the store profile's key", async () => {
      await send('/hooks/orders', 'evt_delivered');
      const request = receiver.received.find((r) => r.headers['webhook-id'] === 'evt_delivered')!;
      assert.equal(request.method, 'POST');
      assert.equal(request.body.toString('utf8'), order);
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers['webhook-timestamp'], '1767225600');
      assert.equal(request.headers['ucp-agent'], 'profile="https://shop.example/.well-known/ucp"');
      assert.equal(request.headers['content-digest'], contentDigest(request.body), 'the digest is of the raw body');
      assert.match(String(request.headers['signature-input']), /^sig1=\("@method" "@authority" "@path" "ucp-agent" "webhook-id" "webhook-timestamp" "content-digest" "content-type"\);created=\d+;keyid="[^"]+"$/);

      const profile = await getJson(test.app, '/.well-known/ucp');
      const published = profile.body.keys as PublishedKey[] | undefined;
      assert.ok(Array.isArray(published), 'the store profile publishes keys');
      assert.ok(published.every((key) => !('d' in key)));
      assert.ok(await verifiedWithProfileKeys(request, published), 'verifies with a key of /.well-known/ucp');
      assert.equal(await verifiedWithProfileKeys({ ...request, path: '/hooks/other' }, published), false);
    });

    it('a 503 is a retryable failure; the retry carries the same Webhook-Id and is delivered', async () => {
      await assert.rejects(send('/hooks/busy'), (error: DeliveryError) => {
        assert.ok(error instanceof DeliveryError);
        assert.equal(error.retryable, true);
        assert.equal(error.message, 'the platform answered HTTP 503');
        assert.ok(!error.logReason.includes('127.0.0.1') && !error.logReason.includes(String(receiver.port)) && !error.logReason.includes('/hooks'));
        return true;
      });
      await assert.rejects(send('/hooks/flaky', 'evt_retried'), DeliveryError);
      await send('/hooks/flaky', 'evt_retried');
      assert.deepEqual(receiver.received.filter((r) => r.path === '/hooks/flaky').map((r) => r.headers['webhook-id']), ['evt_retried', 'evt_retried']);
    });

    it('a 4xx is a failure to retry too (UCP: retry failed deliveries)', async () => {
      await assert.rejects(send('/hooks/gone'), (error: DeliveryError) => error instanceof DeliveryError && error.retryable && /HTTP 410/.test(error.message));
    });

    it('a 302 is a failure, and the redirect is not followed', async () => {
      const before = receiver.hits('/hooks/orders');
      await assert.rejects(send('/hooks/moved'), (error: DeliveryError) => error instanceof DeliveryError && error.retryable && /HTTP 302/.test(error.message));
      assert.equal(receiver.hits('/hooks/moved'), 1);
      assert.equal(receiver.hits('/hooks/orders'), before, 'the Location was not fetched');
    });

    it('a platform that never answers fails at the deadline, retryable', async () => {
      const started = Date.now();
      await assert.rejects(send('/hooks/silent', 'evt_silent', { timeoutMs: 300 }), (error: DeliveryError) => {
        assert.equal(error.retryable, true);
        assert.equal(error.message, 'the platform did not answer within 300 ms');
        return true;
      });
      assert.ok(Date.now() - started < 5000);
    });

    it('an endless answer body is cut off, and the delivery counts', async () => {
      await send('/hooks/chatty', 'evt_chatty', { timeoutMs: 5000 });
    });

    it('https is required unless insecure profiles are allowed: an http URL is refused for good, without a request', async () => {
      const before = receiver.received.length;
      await assert.rejects(send('/hooks/orders', 'evt_plain', { allowInsecure: false }), (error: DeliveryError) => {
        assert.ok(error instanceof DeliveryError);
        assert.equal(error.retryable, false);
        assert.match(error.message, /https/);
        return true;
      });
      assert.equal(receiver.received.length, before);
      assert.equal(checkWebhookUrl(receiver.url('/hooks/orders'), false), undefined);
      assert.equal(checkWebhookUrl(receiver.url('/hooks/orders'), true), receiver.url('/hooks/orders'));
      assert.equal(checkWebhookUrl('https://platform.example.com/webhooks/ucp/orders', false), 'https://platform.example.com/webhooks/ucp/orders');
      for (const bad of ['http://platform.example.com/hooks', 'https://10.0.0.1/hooks', 'https://169.254.169.254/latest', 'https://user:pw@platform.example.com/h', 'https://hooks.internal/h', 'not a url', 'http://10.0.0.1/h']) {
        assert.equal(checkWebhookUrl(bad, false), undefined, bad);
        assert.equal(checkWebhookUrl(bad, true), undefined, `${bad} (insecure allowed)`);
      }
    });

    it('a host that resolves to a private address is refused inside the lookup, without connecting, for good', async (t) => {
      const lookup = t.mock.method(dns, 'lookup', ((_hostname: string, _options: unknown, callback: (error: null, addresses: dns.LookupAddress[]) => void) =>
        callback(null, [{ address: '10.0.0.7', family: 4 }])) as unknown as typeof dns.lookup);
      await assert.rejects(
        sendWebhook({ url: 'https://hooks.platform-shop.com/orders', body: order, timestamp: 1 }, 'evt_private', { keys, ...options, allowInsecure: false }),
        (error: DeliveryError) => {
          assert.ok(error instanceof DeliveryError);
          assert.equal(error.retryable, false);
          assert.match(error.message, /resolves to an address this store does not post to/);
          assert.ok(!error.logReason.includes('platform-shop'));
          return true;
        },
      );
      assert.equal(lookup.mock.calls[0]?.arguments[0], 'hooks.platform-shop.com');
    });
  });
}
