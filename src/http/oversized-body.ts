/**
 * A 413 a client can read. A store that answers a body over its limit and closes at once, while the client is still
 * sending, leaves unread bytes on the connection: the close becomes a reset, and a client that writes its whole body
 * before it reads (Node's http client, most clients) gets EPIPE or ECONNRESET instead of the answer. So the rest of
 * the body is read and thrown away first, up to a bound, and the answer then closes the connection (a body past the
 * bound is still arriving: the connection cannot be reused).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** At most this much of a refused body is read and thrown away... */
export const DISCARDED_BODY_MAX_BYTES = 16 * 1024 * 1024;
/** ...for at most this long; past either, the answer goes out and the connection is closed all the same. */
export const DISCARD_BODY_MAX_MS = 5_000;

/**
 * Before any 413 is answered (Fastify's body limit on a declared length or on a chunked body that grew past it, a
 * multipart form's own limits), whatever handler answers it (the store's JSON, the commerce endpoint's JSON-RPC, a
 * page), the rest of the body is read and thrown away, and the answer closes the connection. An onError hook: it runs
 * only for a request that failed.
 */
export function installOversizedBodyDiscard(app: FastifyInstance): void {
  app.addHook('onError', async (request, reply, error) => {
    if (error.statusCode !== 413) return;
    await discardBody(request);
    reply.header('connection', 'close');
  });
}

function discardBody({ raw }: FastifyRequest): Promise<void> {
  // `complete` is node:http's; `readableEnded` also holds for a body that was read to its end through another stream.
  if (raw.complete || raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', counted).off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const counted = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DISCARDED_BODY_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DISCARD_BODY_MAX_MS);
    raw.on('data', counted).on('end', done).on('close', done).on('error', done);
    // Nothing else reads it now (a multipart parser stopped at its limits would hold it back), and what arrives is
    // dropped once counted (after the bounds too, until the connection closes).
    raw.unpipe();
    raw.resume();
  });
}
