/**
 * A platform's order webhook endpoint on loopback, and the checks a platform makes of what arrives, written from the
 * specifications (RFC 9421 through the `http-message-signatures` package, RFC 9530 with node:crypto), not from the
 * store's code: the digest of the raw body, then the signature with a key the store's profile publishes.
 */
import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createVerifier, httpbis } from 'http-message-signatures';

/** One request the receiver took, with the status it answered. */
export interface ReceivedEvent {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body bytes, as they came. */
  body: Buffer;
  status: number;
}

/** What the receiver knows when it decides an answer: the path, the headers, and how many times this Webhook-Id came (1 the first time). */
export interface Arrival {
  path: string;
  headers: http.IncomingHttpHeaders;
  attempt: number;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:PORT */
  origin: string;
  url(path: string): string;
  received: ReceivedEvent[];
  /** The requests to one path, in arrival order. */
  at(path: string): ReceivedEvent[];
  close(): Promise<void>;
}

/** The acknowledgement UCP's order event webhook answers with. */
const ACKNOWLEDGED = JSON.stringify({ ucp: { version: '2026-04-08' } });

/** An answer: a status, at once or after a while (a slow platform). */
export type Answer = number | { status: number; afterMs: number };

/** Starts a receiver on 127.0.0.1; `answer` picks each request's status (200 at once unless told). */
export async function startWebhookReceiver(answer: (arrival: Arrival) => Answer = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedEvent[] = [];
  const seen = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const id = String(request.headers['webhook-id'] ?? '');
      const attempt = (seen.get(id) ?? 0) + 1;
      seen.set(id, attempt);
      const chosen = answer({ path, headers: request.headers, attempt });
      const { status, afterMs } = typeof chosen === 'number' ? { status: chosen, afterMs: 0 } : chosen;
      received.push({ method: request.method ?? '', path, headers: request.headers, body: Buffer.concat(chunks), status });
      const reply = () => {
        if (response.destroyed) return;
        if (status >= 200 && status < 300) response.writeHead(status, { 'content-type': 'application/json' }).end(ACKNOWLEDGED);
        else response.writeHead(status).end();
      };
      if (afterMs > 0) setTimeout(reply, afterMs).unref();
      else reply();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    received,
    at: (path) => received.filter((event) => event.path === path),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A public key as a business profile publishes it (`keys`; `signing_keys` in a 2026-04-08 profile). */
export interface PublishedJwk {
  kid: string;
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  [member: string]: unknown;
}

/** RFC 9530 Content-Digest of raw bytes with SHA-256. */
export function sha256Digest(body: Buffer): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** Components a platform requires the store's signature to cover (UCP Message Signatures, REST request verification). */
const REQUIRED_COMPONENTS = ['@method', '@authority', '@path', 'ucp-agent', 'content-digest', 'content-type'];

/**
 * What is wrong with a received event, as a platform verifies it: the Content-Digest must be the SHA-256 of the
 * raw body, and the RFC 9421 signature must verify with an ES256 key the store's profile publishes, covering the
 * required components, with `created` and `keyid`. `origin` is where the platform registered its endpoint (the
 * authority it expects). Empty when it verifies.
 */
export async function verificationProblems(event: ReceivedEvent, keys: readonly PublishedJwk[], origin: string): Promise<string[]> {
  const problems: string[] = [];
  const digest = event.headers['content-digest'];
  if (digest !== sha256Digest(event.body)) problems.push(`content-digest ${String(digest)} is not the SHA-256 of the body`);
  try {
    const verified = await httpbis.verifyMessage(
      {
        keyLookup: async ({ keyid }) => {
          const jwk = keys.find((key) => key.kid === keyid);
          if (!jwk || jwk.kty !== 'EC' || jwk.crv !== 'P-256') return null;
          const { kty, crv, x, y } = jwk;
          const publicKey = createPublicKey({ key: { kty, crv, x, y } as JsonWebKey, format: 'jwk' });
          return { id: jwk.kid, algs: ['ecdsa-p256-sha256'], verify: createVerifier(publicKey, 'ecdsa-p256-sha256') };
        },
        requiredFields: REQUIRED_COMPONENTS,
        requiredParams: ['created', 'keyid'],
        // The clocks of store and platform are one clock here; a second either way is only rounding.
        tolerance: 5,
      },
      { method: event.method, url: `${origin}${event.path}`, headers: event.headers as Record<string, string | string[]> },
    );
    if (verified !== true) problems.push(`the signature does not verify (${String(verified)})`);
  } catch (error) {
    problems.push(`the signature does not verify: ${(error as Error).message}`);
  }
  return problems;
}
