/**
 * The store's RFC 9421 request signatures, checked by an independent implementation (http-message-signatures'
 * verifier with Node's ES256 verification): what the store signs verifies, and altering the body or the target
 * breaks it.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createVerifier, httpbis } from 'http-message-signatures';
import { contentDigest, signRequest } from '../../../src/ucp/webhooks/message-signature.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const KID = 'store-key-1';
const COVERED = ['@method', '@authority', '@path', 'content-digest', 'content-type'];

/** A verifier that knows one key, from its published JWK, as a platform would read it from the store's profile. */
async function verifies(request: { method: string; url: string; headers: Record<string, string> }, key: KeyObject = publicKey): Promise<boolean> {
  const verifyingKey = createPublicKey({ key: key.export({ format: 'jwk' }), format: 'jwk' });
  const result = await httpbis.verifyMessage(
    {
      keyLookup: async (params) =>
        params.keyid === KID ? { id: KID, algs: ['ecdsa-p256-sha256'], verify: createVerifier(verifyingKey, 'ecdsa-p256-sha256') } : null,
      requiredFields: COVERED,
      requiredParams: ['created', 'keyid'],
    },
    request,
  );
  return result === true;
}

/** A signed POST as the store sends an order event. */
function signedWebhook(url: string, body: string, extra: Record<string, string> = {}) {
  const headers = { 'content-type': 'application/json', 'content-digest': contentDigest(body), ...extra };
  return { method: 'POST', url, headers: { ...headers, ...signRequest({ method: 'POST', url, headers }, { kid: KID, privateKey }) }, body };
}

describe('RFC 9530 Content-Digest', () => {
  it('is sha-256 of the raw bytes, base64 between colons (the RFC 9530 example)', () => {
    assert.equal(contentDigest('{"hello": "world"}\n'), 'sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:');
    assert.equal(contentDigest('{"hello": "world"}'), 'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:');
    assert.equal(contentDigest(Buffer.from('{"hello": "world"}')), contentDigest('{"hello": "world"}'));
  });
});

describe('RFC 9421 request signatures (ES256)', () => {
  const url = 'https://platform.example.com/webhooks/ucp/orders';
  const body = '{"id":"ord_1","label":"#1001"}';

  it('a signed webhook verifies with an independent verifier, over the components UCP requires', async () => {
    const request = signedWebhook(url, body);
    assert.ok(await verifies(request));
    assert.match(request.headers['signature-input'], /^sig1=\("@method" "@authority" "@path" "content-digest" "content-type"\);created=\d+;keyid="store-key-1"$/);
    const raw = Buffer.from(/^sig1=:([A-Za-z0-9+/=]+):$/.exec(request.headers.signature)![1]!, 'base64');
    assert.equal(raw.length, 64, 'raw r||s, not DER');
  });

  it('covers the UCP-Agent header when the request carries it, and the query when there is one', async () => {
    const withAgent = signedWebhook(`${url}?shop=42`, body, { 'ucp-agent': 'profile="https://shop.example/.well-known/ucp"' });
    assert.match(withAgent.headers['signature-input'], /^sig1=\("@method" "@authority" "@path" "@query" "ucp-agent" "content-digest" "content-type"\);/);
    assert.ok(await verifies(withAgent));
    assert.equal(await verifies({ ...withAgent, url: `${url}?shop=43` }), false, 'another query');
    assert.equal(await verifies({ ...withAgent, headers: { ...withAgent.headers, 'ucp-agent': 'profile="https://evil.example/.well-known/ucp"' } }), false);
  });

  it('fails when the body is altered: its digest no longer matches, and a recomputed digest breaks the signature', async () => {
    const request = signedWebhook(url, body);
    const altered = body.replace('#1001', '#1002');
    assert.notEqual(contentDigest(altered), request.headers['content-digest'], 'the digest check catches the altered body');
    assert.equal(await verifies({ ...request, headers: { ...request.headers, 'content-digest': contentDigest(altered) } }), false);
  });

  it('fails when the path, the host, the method or the content type is altered, or another key is used', async () => {
    const request = signedWebhook(url, body);
    assert.equal(await verifies({ ...request, url: 'https://platform.example.com/webhooks/ucp/other' }), false);
    assert.equal(await verifies({ ...request, url: 'https://other.example.com/webhooks/ucp/orders' }), false);
    assert.equal(await verifies({ ...request, method: 'PUT' }), false);
    assert.equal(await verifies({ ...request, headers: { ...request.headers, 'content-type': 'text/plain' } }), false);
    assert.equal(await verifies(request, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey), false);
  });

  it('signs the authority without a default port and with any other one', async () => {
    const onDefault = signedWebhook('https://platform.example.com:443/hooks', body);
    assert.ok(await verifies({ ...onDefault, url: 'https://platform.example.com/hooks' }));
    const onOther = signedWebhook('http://127.0.0.1:8080/hooks', body);
    assert.ok(await verifies(onOther));
    assert.equal(await verifies({ ...onOther, url: 'http://127.0.0.1:8081/hooks' }), false);
  });

  it('uses the created time given, and refuses a header value with a line break', () => {
    const headers = { 'content-type': 'application/json', 'content-digest': contentDigest(body) };
    assert.match(signRequest({ method: 'POST', url, headers }, { kid: KID, privateKey }, 1_738_617_600)['signature-input'], /;created=1738617600;/);
    assert.throws(() => signRequest({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json\r\nx: y' } }, { kid: KID, privateKey }));
    assert.throws(() => signRequest({ method: 'POST', url, headers: { 'content-type': 'application/json' } }, { kid: KID, privateKey }), /content-digest/);
  });
});
