/**
 * Request logging (issue [operations], items 3 and 5): one pino JSON line per request, written when its answer
 * has gone (method, path, route, status, response time, client address, and the `request_id` every line of the
 * request carries), instead of Fastify's two (arrival and answer). It is Fastify's own log controller that
 * writes it, from the listener Fastify already has on each answer, so logging adds no hook to a request.
 *
 * Lines go to stdout through pino's asynchronous destination: a line is appended to a buffer and written by a
 * background write in batches (LOG_BATCH_BYTES, or at least every LOG_FLUSH_INTERVAL_MS), so many lines share
 * one write and a slow reader of stdout (a full pipe to journald or docker) never blocks the event loop. The
 * buffer is bounded (LOG_BUFFER_MAX_BYTES): past it lines are dropped and counted on stderr rather than growing
 * memory without end. `flushRequestLog` empties it on shutdown, and pino flushes it synchronously on process
 * exit, so a normal stop loses no line.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { LogController } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.js';
import { REQUEST_ID_LOG_LABEL, clientAddress } from './request-id.js';

/** What may wait to be written to stdout: at ~300 bytes a line, about 50,000 lines. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
/**
 * Lines are written to stdout in batches of at least this many bytes (about a dozen request lines), or when
 * LOG_FLUSH_INTERVAL_MS has passed. Without a minimum, each write under way was followed by another of the few
 * lines gathered meanwhile, each a hand-off to a worker thread: a product read with logging at info cost 72 µs of
 * CPU that way and 64 µs with this batch (57 µs without logging; bench A/B, 4 rounds each).
 */
const LOG_BATCH_BYTES = 4096;
/** A quiet store's lines wait at most this long in the buffer. */
const LOG_FLUSH_INTERVAL_MS = 1000;
/** How long a shutdown waits for the log to be written out. */
const FLUSH_WAIT_MS = 2000;
/** Dropped lines are reported on stderr at most this often. */
const DROP_REPORT_INTERVAL_MS = 60_000;
/** Paths are cut to this length in the log (a URL may be up to 16 KiB of anything). */
const MAX_LOGGED_PATH = 200;
/**
 * Routes whose path holds a secret: a cart token (/cart/c/:token), an approval link's token, a checkout's or an
 * order's id (their pages are capability links). Their lines show the route instead of the path.
 */
const SECRET_IN_PATH = /:(?:token|id)(?:\/|$)/;

/** One line per request at completion; nothing on arrival; no URL query and no header in any line. */
export class RequestLogController extends LogController {
  /** `enabled` false: no request lines at all (the logger is off, e.g. in tests and the bench). */
  constructor(enabled = true) {
    super({ requestIdLogLabel: REQUEST_ID_LOG_LABEL, disableRequestLogging: !enabled });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.disableRequestLogging === true) return;
    const status = reply.statusCode;
    const line = completionLine(request, status, reply.elapsedTime);
    if (error) reply.log.error({ ...line, err: error }, 'request failed while answering');
    else if (status >= 500) reply.log.error(line, 'request completed');
    else reply.log.info(line, 'request completed');
  }

  // Fastify's default error handler runs only where the app's own does not (src/http/errors.ts logs there); the
  // completion line says the status, so only a 5xx gets a line of its own, with its error and not the URL.
  override defaultErrorLog(error: Error, _request: FastifyRequest, reply: FastifyReply): void {
    if (reply.statusCode >= 500) reply.log.error({ err: error }, 'request failed');
  }

  override writeHeadError(error: Error, _request: FastifyRequest, reply: FastifyReply): void {
    reply.log.warn({ err: error }, 'the answer could not be written');
  }

  override routeNotFound(): void {}
}

function completionLine(request: FastifyRequest, status: number, elapsedMs: number) {
  const route = request.routeOptions.url;
  const url = request.url;
  const query = url.indexOf('?');
  const path = route !== undefined && SECRET_IN_PATH.test(route) ? route : (query < 0 ? url : url.slice(0, query)).slice(0, MAX_LOGGED_PATH);
  return {
    method: request.method,
    path,
    route: route ?? null,
    status,
    response_ms: Math.round(elapsedMs * 100) / 100,
    remote_address: clientAddress(request),
  };
}

/** stdout, written in the background, bounded; drops are counted on stderr. */
function stdoutDestination(): pino.DestinationStream {
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
    maxLength: LOG_BUFFER_MAX_BYTES,
  });
  let dropped = 0;
  let reportedAt = 0;
  destination.on('drop', () => {
    dropped += 1;
    const now = Date.now();
    if (now - reportedAt < DROP_REPORT_INTERVAL_MS) return;
    reportedAt = now;
    process.stderr.write(`storefront: stdout is not keeping up with the log: ${dropped} line(s) dropped so far\n`);
  });
  return destination;
}

/** The logger options of the Fastify instance: pino at LOG_LEVEL on stdout, and this module's request lines. */
export function loggerOptions(enabled: boolean | undefined, config: Config): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  if (!enabled) return { logger: false, logController: new RequestLogController(false) };
  return { logger: { level: config.logLevel, stream: stdoutDestination() }, logController: new RequestLogController() };
}

/** Writes out what the log holds (on shutdown, before the process exits). */
export function flushRequestLog(log: FastifyBaseLogger): Promise<void> {
  const { flush } = log as Partial<Pick<pino.Logger, 'flush'>>;
  if (typeof flush !== 'function') return Promise.resolve(); // the logger is off
  // A stdout nobody reads any more would leave the flush waiting for ever: it gets FLUSH_WAIT_MS.
  return new Promise((resolve) => {
    const giveUp = setTimeout(resolve, FLUSH_WAIT_MS);
    flush.call(log, () => {
      clearTimeout(giveUp);
      resolve();
    });
  });
}
