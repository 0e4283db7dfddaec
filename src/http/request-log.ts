/**
 * Request logging (issue [operations], items 3 and 5): one pino JSON line per request, written when its answer
 * has gone (method, path, route, status, response time, client address, and the `request_id` every line of the
 * request carries), instead of Fastify's two (arrival and answer). It is Fastify's own log controller that
 * writes it, from the listener Fastify already has on each answer, so logging adds no hook to a request.
 *
 * A request's own logger (`request.log`, with its request id bound) is made only when something logs through it
 * (an error, a warning): the completion line carries the id itself and goes through the root logger, so most
 * requests never pay for a pino child logger.
 *
 * Lines go to stdout through pino's asynchronous destination (stdoutDestination), bounded in memory.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { LogController } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.js';
import { REQUEST_ID_LOG_LABEL, clientAddress } from './request-id.js';
import type { RoutePatterns } from './route-patterns.js';

/** What may wait to be written to stdout: at ~300 bytes a line, about 50,000 lines. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
/** Lines are written to stdout once this many bytes wait... */
const LOG_WRITE_BYTES = 4096;
/** ...or at least this often (a line waits at most this long). */
const LOG_WRITE_EVERY_MS = 200;
/** How long a shutdown waits for the log to be written out. */
const FLUSH_WAIT_MS = 2000;
/** Dropped lines are reported on stderr at most this often. */
const DROP_REPORT_INTERVAL_MS = 60_000;
/**
 * One line per request at completion; nothing on arrival; no URL query, no header and no path a client wrote in any
 * line: a request is named by its route's pattern, or a path the route table cleared (RoutePatterns.loggedPath).
 */
export class RequestLogController extends LogController {
  /** `enabled` false: no request lines at all (the logger is off, e.g. in tests and the bench). */
  constructor(
    private readonly routes: RoutePatterns,
    enabled = true,
  ) {
    super({ requestIdLogLabel: REQUEST_ID_LOG_LABEL, disableRequestLogging: !enabled });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.disableRequestLogging === true) return;
    const status = reply.statusCode;
    const route = request.routeOptions.url;
    const line = completionLine(request.id, request.method, this.routes.loggedPath(request.url, route), route, status, reply.elapsedTime, clientAddress(request));
    // The line carries its request id itself: through the root logger, no child logger is made for it.
    const log = reply.log instanceof RequestLogger ? reply.log.root : reply.log;
    if (error) log.error({ ...line, err: error }, 'request failed while answering');
    else log[completionLevel(status)](line, 'request completed');
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

/** A request's completion line: `route` is the pattern that answered it (none when no route matched). */
export function completionLine(requestId: string, method: string, path: string, route: string | undefined, status: number, elapsedMs: number, address: string) {
  return {
    [REQUEST_ID_LOG_LABEL]: requestId,
    method,
    path,
    route: route ?? null,
    status,
    response_ms: Math.round(elapsedMs * 100) / 100,
    remote_address: address,
  };
}

/**
 * A completion line's level: error for a failure of ours (500), warn for a 503 (the store said it is unavailable for
 * a while: a database outage or a draining instance, each also reported once on its own), info for the rest. An
 * outage under load then fills no error alert with thousands of lines that say the same.
 */
export function completionLevel(status: number): 'info' | 'warn' | 'error' {
  return status === 503 ? 'warn' : status >= 500 ? 'error' : 'info';
}

/** The stream pino writes the log's lines to (stdoutDestination). */
export interface StdoutDestination extends pino.DestinationStream {
  /** Writes out what is kept; `done` is called once everything logged before it is written. */
  flush(done?: (error?: Error) => void): void;
  /** Writes out what is kept, synchronously (pino calls it after a fatal line). */
  flushSync(): void;
  /** Stops writing and closes the descriptor. */
  destroy(): void;
  /** Lines dropped so far (the bound was reached). */
  droppedLines(): number;
}

/** sonic-boom in contentMode 'buffer' takes Buffers: its types declare a string only. */
type BufferDestination = Omit<ReturnType<typeof pino.destination>, 'write'> & { write(chunk: Buffer): boolean };

/**
 * The process's stdout as the log's destination: pino's own asynchronous destination (sonic-boom). Lines gather in
 * memory and go out together in one background write, so a slow reader of stdout (a full pipe to
 * journald or docker) never blocks the event loop; what waits is bounded (LOG_BUFFER_MAX_BYTES): past it lines are
 * dropped and counted on stderr rather than growing memory without end. pino writes what is kept synchronously when
 * the process exits, and `flushRequestLog` empties it on shutdown, so a normal stop loses no line.
 *
 * Each line is encoded to UTF-8 once, as pino hands it over, and sonic-boom keeps Buffers (its contentMode 'buffer'),
 * counting each batch's bytes as it grows. Given strings (its default), it measures the UTF-8 length of the whole batch
 * waiting again for every line it adds, flattening it each time: a product read with logs at info cost about 4 µs of
 * CPU more that way (docs/performance.md, "The log's destination").
 */
export function stdoutDestination(fd = 1, maxBytes = LOG_BUFFER_MAX_BYTES): StdoutDestination {
  // Lines gather until LOG_WRITE_BYTES are waiting, or for at most LOG_WRITE_EVERY_MS: one write for many lines (a write
  // per line cost a busy store about a tenth of its CPU).
  const destination = pino.destination({
    dest: fd,
    sync: false,
    contentMode: 'buffer',
    minLength: LOG_WRITE_BYTES,
    periodicFlush: LOG_WRITE_EVERY_MS,
    maxLength: maxBytes,
  }) as unknown as BufferDestination;
  let dropped = 0;
  let reportedAt = 0;
  destination.on('drop', () => {
    dropped++;
    const now = Date.now();
    if (now - reportedAt < DROP_REPORT_INTERVAL_MS) return;
    reportedAt = now;
    process.stderr.write(`storefront: stdout is not keeping up with the log: ${dropped} line(s) dropped so far\n`);
  });
  return {
    // Looked up on each line: pino replaces the destination's write when stdout is gone (EPIPE).
    write: (line: string) => destination.write(Buffer.from(line)),
    // sonic-boom's flush(done) calls back once a write leaves at most minLength bytes waiting: a second flush writes
    // those, so that done means everything logged before it is written.
    flush: (done) => (done ? destination.flush(() => destination.flush(done)) : destination.flush()),
    flushSync: () => destination.flushSync(),
    destroy: () => destination.destroy(),
    droppedLines: () => dropped,
  };
}

/** One per process, as stdout is. */
let stdoutLog: pino.DestinationStream | undefined;

/**
 * A request's logger (Fastify's childLoggerFactory): the pino child with the request id bound is made on the first
 * line the request logs through it, so a request that only gets its completion line never makes one.
 */
export class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    readonly root: FastifyBaseLogger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
    /** The URL as the client asked it: a line names it as `routes` does (loggedPath), never as asked. */
    private readonly askedUrl?: string,
    private readonly routes?: RoutePatterns,
  ) {}

  private get log(): FastifyBaseLogger {
    return (this.made ??= this.root.child(this.bindings, this.options));
  }

  get level(): pino.LevelWithSilentOrString {
    return this.made?.level ?? this.options.level ?? this.root.level;
  }

  set level(level: pino.LevelWithSilentOrString) {
    this.log.level = level;
  }

  fatal(...line: unknown[]): void {
    (this.log.fatal as LogLine)(...this.withoutUrl(line));
  }
  error(...line: unknown[]): void {
    (this.log.error as LogLine)(...this.withoutUrl(line));
  }
  warn(...line: unknown[]): void {
    (this.log.warn as LogLine)(...this.withoutUrl(line));
  }
  info(...line: unknown[]): void {
    (this.log.info as LogLine)(...this.withoutUrl(line));
  }
  debug(...line: unknown[]): void {
    (this.log.debug as LogLine)(...this.withoutUrl(line));
  }
  trace(...line: unknown[]): void {
    (this.log.trace as LogLine)(...this.withoutUrl(line));
  }
  silent(): void {}

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.log.child(bindings, options);
  }

  // Fastify writes the URL into a few messages of its own (a reply sent twice): a capability path must not reach the log.
  private withoutUrl(line: unknown[]): unknown[] {
    const { askedUrl, routes } = this;
    if (askedUrl === undefined || routes === undefined) return line;
    const logged = routes.loggedPath(askedUrl, undefined);
    if (logged === askedUrl) return line;
    const query = askedUrl.indexOf('?');
    const rename = (text: string) => {
      const renamed = text.replaceAll(askedUrl, logged);
      return query < 0 ? renamed : renamed.replaceAll(askedUrl.slice(0, query), logged);
    };
    return line.map((part) => renamed(part, rename));
  }
}

/** `part` (a message, an error, or a line's object with its `err`) with its text renamed. */
function renamed(part: unknown, rename: (text: string) => string): unknown {
  if (typeof part === 'string') return rename(part);
  if (part instanceof Error) {
    const message = rename(part.message);
    const stack = part.stack === undefined ? undefined : rename(part.stack);
    if (message === part.message && stack === part.stack) return part;
    return Object.assign(Object.create(Object.getPrototypeOf(part) as object) as Error, part, { message, stack });
  }
  if (typeof part === 'object' && part !== null && 'err' in part && part.err instanceof Error) {
    const err = renamed(part.err, rename);
    return err === part.err ? part : { ...part, err };
  }
  return part;
}

type LogLine = (...line: unknown[]) => void;

/** Where log lines go instead of stdout (tests read them): each call is one JSON line with its newline. */
export interface LogDestination {
  write(line: string): unknown;
}

/**
 * The logger options of the Fastify instance: pino at LOG_LEVEL on stdout, and this module's request lines, which name
 * a request by `routes` (the app adds its routes to it as they are declared).
 */
export function loggerOptions(
  destination: boolean | LogDestination | undefined,
  config: Config,
  routes: RoutePatterns,
): Pick<FastifyServerOptions, 'logger' | 'logController' | 'childLoggerFactory'> {
  if (!destination) return { logger: false, logController: new RequestLogController(routes, false) };
  return {
    logger: {
      level: config.logLevel,
      stream: destination === true ? (stdoutLog ??= stdoutDestination()) : destination,
      // Fastify's own serializer would write the URL of any line given a `req`: its method and logged path only.
      serializers: { req: (request: FastifyRequest) => ({ method: request.method, path: routes.loggedPath(request.url, request.routeOptions?.url) }) },
    },
    logController: new RequestLogController(routes),
    childLoggerFactory: (logger, bindings, options, raw) =>
      new RequestLogger(logger, bindings, options, (raw as { originalUrl?: string }).originalUrl ?? raw.url, routes),
  };
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
