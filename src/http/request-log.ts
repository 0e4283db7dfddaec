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
 * Lines go to stdout through StdoutLog: encoded into a buffer in memory and written by a background write in
 * batches (LOG_BATCH_BYTES, or at least every LOG_FLUSH_INTERVAL_MS), so many lines share one write and a slow
 * reader of stdout (a full pipe to journald or docker) never blocks the event loop. What it keeps is bounded
 * (LOG_BUFFER_MAX_BYTES): past it lines are dropped and counted on stderr rather than growing memory without end.
 * `flushRequestLog` empties it on shutdown, and it is written synchronously on process exit, so a normal stop
 * loses no line.
 */
import { write, writeSync } from 'node:fs';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { LogController } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.js';
import { REQUEST_ID_LOG_LABEL, clientAddress } from './request-id.js';

/** What may wait to be written to stdout: at ~300 bytes a line, about 50,000 lines. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
/**
 * Lines are written to stdout in batches of at least this many bytes (about a hundred request lines), or when
 * LOG_FLUSH_INTERVAL_MS has passed. Without a minimum, each write under way was followed by another of the few
 * lines gathered meanwhile, each a hand-off to a worker thread.
 */
const LOG_BATCH_BYTES = 32_768;
/** Lines are encoded into slabs of this size; a batch written is a part of one (or, where a slab ran out, of two). */
const LOG_SLAB_BYTES = 256 * 1024;
/** A quiet store's lines wait at most this long in the buffer. */
const LOG_FLUSH_INTERVAL_MS = 1000;
/** How long a write refused because stdout is full (EAGAIN) waits before it is tried again. */
const RETRY_FULL_MS = 10;
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
    const route = request.routeOptions.url;
    const line = completionLine(request.id, request.method, request.url, route, status, reply.elapsedTime, clientAddress(request));
    // The line carries its request id itself: through the root logger, no child logger is made for it.
    const log = reply.log instanceof RequestLogger ? reply.log.root : reply.log;
    if (error) log.error({ ...line, err: error }, 'request failed while answering');
    else logCompleted(log, line);
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
export function completionLine(requestId: string, method: string, url: string, route: string | undefined, status: number, elapsedMs: number, address: string) {
  const query = url.indexOf('?');
  const path = route !== undefined && SECRET_IN_PATH.test(route) ? route : (query < 0 ? url : url.slice(0, query)).slice(0, MAX_LOGGED_PATH);
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

type CompletionLine = ReturnType<typeof completionLine>;
const COMPLETED = 'request completed';

/**
 * Writes a completion line as the root logger would (see `completionLevel`): the same bytes pino writes for
 * `root[level](line, 'request completed')`, its level, time, pid and hostname taken from pino itself, but put
 * together in one template instead of pino's walk over the object's keys. It is the one line every request writes:
 * through pino it cost about 2.5 µs of CPU per request on the benchmarked product read.
 * test/http/request-log-line.test.ts compares its lines with pino's.
 */
export function logCompleted(root: FastifyBaseLogger, line: CompletionLine): void {
  const level = completionLevel(line.status);
  let write = lineWriters.get(root);
  if (write === undefined) lineWriters.set(root, (write = lineWriter(root)));
  write(level, line);
}

/**
 * A completion line's level: error for a failure of ours (500), warn for a 503 (the store said it is unavailable for
 * a while: a database outage or a draining instance, each also reported once on its own), info for the rest. An
 * outage under load then fills no error alert with thousands of lines that say the same.
 */
export function completionLevel(status: number): CompletionLevel {
  return status === 503 ? 'warn' : status >= 500 ? 'error' : 'info';
}

type CompletionLevel = 'info' | 'warn' | 'error';
type LineWriter = (level: CompletionLevel, line: CompletionLine) => void;
const lineWriters = new WeakMap<FastifyBaseLogger, LineWriter>();

function lineWriter(root: FastifyBaseLogger): LineWriter {
  const logger = root as FastifyBaseLogger & Record<symbol, unknown> & Partial<Pick<pino.Logger, 'isLevelEnabled'>>;
  const { streamSym, chindingsSym, timeSym, lsCacheSym, messageKeySym } = pino.symbols;
  const stream = logger[streamSym] as { write?: (text: string) => unknown } | undefined;
  const levelPrefix = logger[lsCacheSym] as Record<number, string> | undefined;
  // Not a plain pino logger writing to a stream: through the logger itself.
  const plain =
    typeof stream?.write === 'function' && levelPrefix !== undefined && typeof logger[timeSym] === 'function' && logger[messageKeySym] === 'msg' && typeof logger.isLevelEnabled === 'function';
  if (!plain) {
    return (level, line) => root[level](line, COMPLETED);
  }
  const bindings = String(logger[chindingsSym] ?? '');
  const time = logger[timeSym] as () => string;
  const prefix = { info: levelPrefix[pino.levels.values.info!]!, warn: levelPrefix[pino.levels.values.warn!]!, error: levelPrefix[pino.levels.values.error!]! };
  return (level, line) => {
    if (!logger.isLevelEnabled!(level)) return;
    stream!.write!(
      `${prefix[level]}${time()}${bindings},"${REQUEST_ID_LOG_LABEL}":${jsonString(line[REQUEST_ID_LOG_LABEL])},"method":${jsonString(line.method)},` +
        `"path":${jsonString(line.path)},"route":${line.route === null ? 'null' : jsonString(line.route)},"status":${line.status},` +
        `"response_ms":${hundredths(line.response_ms)},"remote_address":${jsonString(line.remote_address)},"msg":"${COMPLETED}"}\n`,
    );
  };
}

/** What JSON.stringify writes other than as itself: a quote, a backslash, a control character, a lone surrogate. */
const ESCAPED_IN_JSON = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON.stringify writes it. Most are plain (an id, a method, a path, an address), and for those a test
 * and a template cost about a third of JSON.stringify's call.
 */
function jsonString(text: string): string {
  return ESCAPED_IN_JSON.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * A number of milliseconds rounded to hundredths (completionLine's response_ms) as JSON writes it (12, 12.5,
 * 12.05), from integers: V8's shortest form of a fraction cost about 0.4 µs a line, an integer's about 0.05.
 */
function hundredths(ms: number): string {
  const cents = Math.round(ms * 100);
  if (!(cents >= 0 && cents < 1e15)) return JSON.stringify(ms);
  const whole = Math.floor(cents / 100);
  const part = cents - whole * 100;
  if (part === 0) return String(whole);
  return part % 10 === 0 ? `${whole}.${part / 10}` : `${whole}.${part < 10 ? '0' : ''}${part}`;
}

/**
 * The process's stdout as the log's destination: lines are encoded into a buffer and written out by one background write
 * at a time, a batch of at least LOG_BATCH_BYTES (or whatever is there after LOG_FLUSH_INTERVAL_MS). Written by
 * hand rather than with pino.destination (sonic-boom): that one measures the UTF-8 length of its whole pending
 * buffer again for every line it appends, and with logging at info a product read cost 80 µs of CPU through it
 * against 70 µs through this (57.5 µs without request lines; serve processes side by side, 10 rounds).
 */
export class StdoutLog {
  /** The slab the next lines are encoded into, from `start` (what is not yet taken) to `used`. */
  private slab: Buffer;
  private start = 0;
  private used = 0;
  private linesInSlab = 0;
  /** Parts of earlier slabs not yet taken, with their line counts. */
  private sealed: Buffer[] = [];
  private sealedLines = 0;
  /** Bytes kept (sealed and in the slab). */
  private size = 0;
  private writing = false;
  private waiting: Array<() => void> = [];
  private dropped = 0;
  private reportedAt = 0;

  /** `fd`, `maxBytes` and `slabBytes` are for tests (stdout, LOG_BUFFER_MAX_BYTES, LOG_SLAB_BYTES). */
  constructor(
    private readonly fd = 1,
    private readonly maxBytes = LOG_BUFFER_MAX_BYTES,
    private readonly slabBytes = LOG_SLAB_BYTES,
  ) {
    this.slab = Buffer.allocUnsafeSlow(slabBytes);
    setInterval(() => this.writeOut(), LOG_FLUSH_INTERVAL_MS).unref();
    process.once('exit', () => this.writeOutNow());
  }

  /**
   * pino's stream interface: one line (with its newline), encoded as UTF-8 into the slab at once. Keeping the string
   * and joining its batch later cost about 3 µs of CPU per logged request (by then the string's pieces had left the
   * processor's caches); encoding it at once measured about 2 µs less, pinned side by side (docs/performance.md, fifth pass).
   */
  write(line: string): boolean {
    if (this.size + line.length > this.maxBytes) {
      this.drop(1);
      return false;
    }
    // A UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    if (line.length * 3 > this.slab.length - this.used) this.nextSlab(line.length * 3);
    const bytes = this.slab.write(line, this.used);
    this.used += bytes;
    this.size += bytes;
    this.linesInSlab++;
    if (this.size >= LOG_BATCH_BYTES) this.writeOut();
    return true;
  }

  /** Lines dropped so far (the bound was reached). */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Writes out what is kept; `done` is called once all of it is written (pino's logger.flush calls this). */
  flush(done?: () => void): void {
    if (done) this.waiting.push(done);
    this.writeOut();
    this.settle();
  }

  /** The slab's lines not yet taken go with the sealed parts; the next lines go to the rest of the slab. */
  private seal(): void {
    if (this.used === this.start) return;
    this.sealed.push(this.slab.subarray(this.start, this.used));
    this.sealedLines += this.linesInSlab;
    this.start = this.used;
    this.linesInSlab = 0;
  }

  /** A new slab for a line of up to `bytes` (the old one is freed once its parts have been written). */
  private nextSlab(bytes: number): void {
    this.seal();
    this.slab = Buffer.allocUnsafeSlow(Math.max(this.slabBytes, bytes));
    this.start = this.used = 0;
  }

  private writeOut(): void {
    if (this.writing || this.size === 0) return;
    const { chunk, lineCount } = this.take();
    this.writing = true;
    this.send(chunk, lineCount);
  }

  /** What is kept, as one buffer; nothing is kept after. */
  private take(): { chunk: Buffer; lineCount: number } {
    this.seal();
    const chunk = this.sealed.length === 1 ? this.sealed[0]! : Buffer.concat(this.sealed);
    const lineCount = this.sealedLines;
    this.sealed = [];
    this.sealedLines = 0;
    this.size = 0;
    return { chunk, lineCount };
  }

  private send(chunk: Buffer, lineCount: number): void {
    write(this.fd, chunk, 0, chunk.length, null, (error: NodeJS.ErrnoException | null, bytes: number) => {
      if (error?.code === 'EAGAIN') {
        // A non-blocking stdout whose reader is behind: the same bytes again shortly.
        setTimeout(() => this.send(chunk, lineCount), RETRY_FULL_MS).unref();
        return;
      }
      if (error) this.drop(lineCount);
      else if (bytes < chunk.length) return this.send(chunk.subarray(bytes), lineCount);
      this.writing = false;
      if (this.size >= LOG_BATCH_BYTES || (this.waiting.length > 0 && this.size > 0)) this.writeOut();
      else this.settle();
    });
  }

  /** Calls the flushes waiting once nothing is kept or being written. */
  private settle(): void {
    if (this.writing || this.size > 0 || this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const done of waiting) done();
  }

  /** On exit: what is kept, written synchronously (a write still under way may land after it). */
  private writeOutNow(): void {
    if (this.size === 0) return;
    try {
      writeSync(this.fd, this.take().chunk);
    } catch {
      // stdout is gone or full at exit: nothing more can be done.
    }
  }

  private drop(lines: number): void {
    this.dropped += lines;
    const now = Date.now();
    if (now - this.reportedAt < DROP_REPORT_INTERVAL_MS) return;
    this.reportedAt = now;
    process.stderr.write(`storefront: stdout is not keeping up with the log: ${this.dropped} line(s) dropped so far\n`);
  }
}

/** One per process, as stdout is. */
let stdoutLog: StdoutLog | undefined;

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
    (this.log.fatal as LogLine)(...line);
  }
  error(...line: unknown[]): void {
    (this.log.error as LogLine)(...line);
  }
  warn(...line: unknown[]): void {
    (this.log.warn as LogLine)(...line);
  }
  info(...line: unknown[]): void {
    (this.log.info as LogLine)(...line);
  }
  debug(...line: unknown[]): void {
    (this.log.debug as LogLine)(...line);
  }
  trace(...line: unknown[]): void {
    (this.log.trace as LogLine)(...line);
  }
  silent(): void {}

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.log.child(bindings, options);
  }
}

type LogLine = (...line: unknown[]) => void;

/** Where log lines go instead of stdout (tests read them): each call is one JSON line with its newline. */
export interface LogDestination {
  write(line: string): unknown;
}

/** The logger options of the Fastify instance: pino at LOG_LEVEL on stdout, and this module's request lines. */
export function loggerOptions(
  destination: boolean | LogDestination | undefined,
  config: Config,
): Pick<FastifyServerOptions, 'logger' | 'logController' | 'childLoggerFactory'> {
  if (!destination) return { logger: false, logController: new RequestLogController(false) };
  return {
    logger: { level: config.logLevel, stream: destination === true ? (stdoutLog ??= new StdoutLog()) : destination },
    logController: new RequestLogController(),
    childLoggerFactory: (logger, bindings, options) => new RequestLogger(logger, bindings, options),
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
