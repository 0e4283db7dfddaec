/**
 * RFC 9421 HTTP Message Signatures on what the store sends (order webhooks), as UCP's REST binding asks
 * (Message Signatures, "REST Request Signing"): one signature, `sig1`, over the method, authority, path (and
 * query when there is one), the `UCP-Agent` header when the request carries it, and the body through its
 * RFC 9530 `Content-Digest` and its `Content-Type`; parameters `created` and `keyid`; ES256 with the raw r||s
 * encoding (64 bytes), not DER.
 */
import { createHash, sign, type KeyObject } from 'node:crypto';

/** The key a signature is made with: its `kid` (published in the profile's `signing_keys`) and its private half. */
export interface SignatureKey {
  kid: string;
  privateKey: KeyObject;
}

export interface RequestToSign {
  method: string;
  url: string | URL;
  /** The request's header fields; `content-type` and `content-digest` are required (a webhook has a body). */
  headers: Readonly<Record<string, string>>;
}

export interface SignatureHeaders {
  'signature-input': string;
  signature: string;
}

const LABEL = 'sig1';

/** The RFC 9530 `Content-Digest` of a body: SHA-256 over its raw bytes, no canonicalisation. */
export function contentDigest(body: Buffer | string): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** An RFC 8941 sf-string: printable ASCII only, `"` and `\` escaped. */
export function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error('A signature parameter must be printable ASCII.');
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** A header field's value in the signature base (RFC 9421 §2.1): trimmed; a line break would forge base lines. */
function fieldValue(headers: Readonly<Record<string, string>>, name: string): string {
  const value = headers[name];
  if (value === undefined) throw new Error(`The ${name} header to be signed is missing.`);
  if (/[\r\n]/.test(value)) throw new Error(`The ${name} header holds a line break.`);
  return value.trim();
}

/**
 * Signs a request: returns its `Signature-Input` and `Signature` header values. `created` is unix seconds (now by
 * default). The signature base is built exactly as RFC 9421 §2.5 writes it, so any conforming verifier agrees.
 */
export function signRequest(request: RequestToSign, key: SignatureKey, created = Math.floor(Date.now() / 1000)): SignatureHeaders {
  const url = typeof request.url === 'string' ? new URL(request.url) : request.url;
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const derived: Record<string, string> = {
    '@method': request.method.toUpperCase(),
    // WHATWG URL's host is lower-case and omits the scheme's default port, as RFC 9421 §2.2.3 asks.
    '@authority': url.host,
    '@path': url.pathname || '/',
    '@query': url.search,
  };
  const components = [
    '@method',
    '@authority',
    '@path',
    ...(url.search ? ['@query'] : []),
    // UCP verifiers require ucp-agent covered when the header is sent (Message Signatures, request verification).
    ...('ucp-agent' in headers ? ['ucp-agent'] : []),
    // A webhook's id and time are bound too: a captured event cannot be replayed under another id past a receiver's dedupe.
    ...(['webhook-id', 'webhook-timestamp'] as const).filter((name) => name in headers),
    'content-digest',
    'content-type',
  ];
  const params = `(${components.map((name) => `"${name}"`).join(' ')});created=${Math.trunc(created)};keyid=${sfString(key.kid)}`;
  const lines = components.map((name) => `"${name}": ${name.startsWith('@') ? derived[name] : fieldValue(headers, name)}`);
  const base = [...lines, `"@signature-params": ${params}`].join('\n');
  const signature = sign('sha256', Buffer.from(base, 'utf8'), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return { 'signature-input': `${LABEL}=${params}`, signature: `${LABEL}=:${signature.toString('base64')}:` };
}
