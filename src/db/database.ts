/**
 * One SQL interface over two engines: embedded PostgreSQL (PGlite) by default, a PostgreSQL server via
 * DATABASE_URL. The same SQL and migrations run on both.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A transaction: queries, and scripts of several statements (a migration file, run whole). */
export interface Transaction extends Queryable {
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn in one transaction; it commits when fn resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Hears NOTIFY on the channels (delivered when the notifying transaction commits). On a server it holds one
   * connection of its own, outside the pool, and makes it again with backoff when it is lost.
   */
  listen(channels: readonly string[], onNotify: (channel: string, payload: string) => void, options?: ListenOptions): Promise<Listening>;
  /** The embedded database only: its data directory as an uncompressed tarball (a backup; the tests' template). */
  dumpDataDir?(): Promise<Blob | File>;
  /** A server's connection pool now: connections open, idle, and queries waiting for one (undefined for PGlite). */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called when a lost connection is made again: notifications sent meanwhile were missed. */
  onReconnect?: () => void;
  /** The connection was lost, or making it again failed (it is tried again, waiting longer each time). */
  onError?: (error: Error) => void;
}

export interface Listening {
  close(): Promise<void>;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The application_name of a server's listening connection (how to find it in pg_stat_activity). */
export const LISTEN_APPLICATION_NAME = 'storefront-listen';
const RECONNECT_FIRST_DELAY_MS = 250;
const RECONNECT_MAX_DELAY_MS = 10_000;

// int8 ids fit in a JS number (they stay below 2^53); read them as numbers on both engines.
const parseInt8 = (value: string) => Number(value);

export class DatabaseInUseError extends Error {}

/** The database was closed (the store is stopping): nothing more runs on it. */
export class DatabaseClosedError extends Error {
  constructor() {
    super('the database is closed: the store is stopping');
    this.name = 'DatabaseClosedError';
  }
}

/** Socket errors: the server (or the way to it) is not there. */
const UNREACHABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * SQLSTATEs of a server that is going away or not taking connections: admin_shutdown (57P01, a fast stop or
 * restart), crash_shutdown (57P02), cannot_connect_now (57P03, starting up or shutting down), too_many_connections
 * (53300); the whole class 08 (connection exception) is matched by its prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** What node-postgres says when a connection ends, cannot be made in time, or a server stops answering a query. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/, // unexpectedly (the server went away), or due to connection timeout
  /^timeout exceeded when trying to connect$/, // the pool's connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable$/,
  /^Query read timeout$/, // query_timeout: the server stopped answering
];

/**
 * Whether an error means the database cannot be reached or is restarting, rather than that a statement was wrong:
 * requests that need it are answered 503 with Retry-After, and the caller may retry. A statement whose connection
 * was lost may still have committed, so this says "unavailable", never "nothing was written".
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let seen = 0; error instanceof Error && seen < 5; seen++) {
    if (error instanceof DatabaseClosedError) return true;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && (UNREACHABLE_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    const { message } = error;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
    // Connecting to a name with several addresses fails with one error per address.
    if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
    error = error.cause;
  }
  return false;
}

/**
 * Embedded PostgreSQL belongs to one process: a second one opening the same DATA_DIR would corrupt it.
 * A lock file holding the owner's pid keeps a second server or `storefront import` out while the first runs.
 */
function lockDataDir(dataDir: string): () => void {
  const lockFile = path.join(dataDir, 'storefront.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockFile, 'utf8').trim());
      if (owner && owner !== process.pid && processAlive(owner)) {
        throw new DatabaseInUseError(
          `the embedded database in DATA_DIR is in use by process ${owner}; stop it first, or use DATABASE_URL to share a PostgreSQL server`,
        );
      }
      rmSync(lockFile, { force: true }); // left behind by a process that died
    }
  }
  throw new DatabaseInUseError('could not lock the embedded database in DATA_DIR');
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How background work (polls, purges, the listener) reports a failure: what failed, and why. */
export type BackgroundReport = (what: string, error: unknown) => void;

/** While the database stays unavailable, each kind of background failure is reported at most this often. */
export const OUTAGE_REPORT_INTERVAL_MS = 60_000;

/**
 * Keeps an outage readable in the log: background work that fails because the database is unavailable reports
 * the first failure of each kind, then at most one line per `intervalMs`, counting the ones left out (a poll every
 * few seconds would otherwise write a line per tick for as long as the outage lasts). Other failures are all reported.
 */
export function quietDuringOutage(report: BackgroundReport, options: { intervalMs?: number; now?: () => number } = {}): BackgroundReport {
  const { intervalMs = OUTAGE_REPORT_INTERVAL_MS, now = Date.now } = options;
  const outages = new Map<string, { reportedAt: number; leftOut: number }>();
  return (what, error) => {
    if (!isDatabaseUnavailable(error)) return report(what, error);
    const last = outages.get(what);
    const at = now();
    if (last && at - last.reportedAt < intervalMs) {
      last.leftOut++;
      return;
    }
    const leftOut = last?.leftOut ?? 0;
    outages.set(what, { reportedAt: at, leftOut: 0 });
    report(leftOut > 0 ? `${what} (${leftOut} more like it since the last report)` : what, error);
  };
}

/** How long closing waits for the database work under way (a request's statements, a refresh) before it closes anyway. */
export const CLOSE_WAIT_MS = 2000;
/** Work has settled once none has run for this long: a request's next statement follows its last within far less. */
const SETTLED_AFTER_MS = 20;

/**
 * The work under way on a database, so that closing waits for it: a request still running when the server has
 * stopped (its client gone, so nothing held the server open) finishes its statements instead of finding the
 * database closed between two of them. Work may start while closing waits; once closed, it is refused.
 */
class WorkUnderWay {
  private running = 0;
  private lastActive = 0;
  private closed = false;

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new DatabaseClosedError();
    this.running++;
    this.lastActive = performance.now();
    try {
      return await work();
    } finally {
      this.running--;
      this.lastActive = performance.now();
    }
  }

  /** Waits until no work has run for SETTLED_AFTER_MS, or `maxMs` at most; work is refused from then on. */
  async close(maxMs: number): Promise<void> {
    const giveUpAt = performance.now() + maxMs;
    for (let now = performance.now(); now < giveUpAt; now = performance.now()) {
      if (this.running === 0 && now - this.lastActive >= SETTLED_AFTER_MS) break;
      await sleep(Math.min(SETTLED_AFTER_MS, giveUpAt - now));
    }
    this.closed = true;
  }
}

/**
 * A failed statement's error, kept from repeating the values the statement was given: it may reach a log line
 * (`{ err }`), and those values are checkout ids (capabilities), emails and addresses. PGlite attaches the
 * statement's parameters to its error (`params`, `queryOptions`); PostgreSQL's DETAIL quotes rows and keys ("Key
 * (key)=(…) already exists", "Failing row contains (…)"), its CONTEXT (`where`) quotes JSON input and bound
 * parameters, and a data exception's message (SQLSTATE class 22) quotes the value it could not read. The same
 * error is returned (its class and `code` are what callers test), without those. The SQL text stays: values are
 * always parameters.
 */
export function withoutQueryValues<E>(error: E): E {
  if (!(error instanceof Error)) return error;
  const fields = error as unknown as Record<string, unknown>;
  // Only the engines' errors: an error of the store's own thrown out of a transaction keeps its fields.
  const fromPglite = 'params' in fields && typeof fields.query === 'string';
  const fromServer = typeof fields.code === 'string' && typeof fields.severity === 'string';
  if (!fromPglite && !fromServer) return error;
  for (const field of ['params', 'queryOptions', 'detail', 'where'] as const) delete fields[field];
  if (fromServer && (fields.code as string).startsWith('22')) {
    const { message } = error;
    const redacted = message.replace(/"[\s\S]*"/, '"…"');
    if (redacted !== message) {
      const stack = error.stack;
      error.message = redacted;
      if (stack !== undefined) error.stack = stack.replace(message, redacted);
    }
  }
  return error;
}

const rethrowWithoutValues = (error: unknown): never => {
  throw withoutQueryValues(error);
};

/**
 * Either engine's database, closing gracefully: close() waits for the work under way (CLOSE_WAIT_MS at most), and
 * anything asked of it afterwards fails with DatabaseClosedError, where an ended pg pool says "Cannot use a pool
 * after calling end on the pool" and a closed PGlite throws a TypeError from inside its module. Closing twice is
 * closing once.
 */
function closingGracefully(db: Database): Database {
  const work = new WorkUnderWay();
  let closing: Promise<void> | undefined;
  return {
    ...db,
    query: <T extends Row>(sql: string, params?: readonly unknown[]) => work.run(() => db.query<T>(sql, params)),
    // A failure at begin or commit (a deferred constraint) quotes values as a statement's does.
    transaction: (fn) => work.run(() => db.transaction(fn).catch(rethrowWithoutValues)),
    exec: (sql) => work.run(() => db.exec(sql).catch(rethrowWithoutValues)),
    listen: (channels, onNotify, options) => work.run(() => db.listen(channels, onNotify, options)),
    close: () => (closing ??= work.close(CLOSE_WAIT_MS).then(() => db.close())),
  };
}

const reportOnStderr: BackgroundReport = (what, error) => console.error(`storefront: ${what}: ${(error as Error)?.message ?? String(error)}`);

export interface PgliteOptions {
  /** A data directory dumped with `dumpDataDir()` to start from (tests clone a migrated template this way). */
  loadDataDir?: Blob | File;
  /**
   * Server settings for this start (`-c name=value` after PGlite's own start parameters). Each start zeroes the
   * shared memory they size: with PGlite's default (shared_buffers 128MB) a start takes about a second of CPU, with
   * 8MB about half; the tests' small databases start hundreds of times with less.
   */
  settings?: Record<string, string>;
}

export async function openPglite(dataDir: string | undefined, options: PgliteOptions = {}): Promise<Database> {
  let unlock = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    unlock = lockDataDir(dataDir);
  }
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, {
      parsers: { [pgliteTypes.INT8]: parseInt8 },
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      ...(options.settings ? { startParams: [...PGlite.defaultStartParams, ...Object.entries(options.settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])] } : {}),
    });
  } catch (error) {
    unlock();
    throw error;
  }
  // Every statement's failure is cleaned where it happens: code inside a transaction may catch and log it.
  const run = async <T extends Row>(target: Pick<PGlite, 'query'>, sql: string, params?: readonly unknown[]) =>
    (await target.query<T>(sql, params as unknown[] | undefined).catch(rethrowWithoutValues)).rows;
  return closingGracefully({
    kind: 'pglite',
    query: (sql, params) => run(db, sql, params),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          query: (sql, params) => run(tx, sql, params),
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
    exec: async (sql) => {
      await db.exec(sql);
    },
    async listen(channels, onNotify) {
      const stops = await Promise.all(channels.map((channel) => db.listen(channel, (payload) => onNotify(channel, payload))));
      return {
        close: async () => {
          for (const stop of stops) await stop();
        },
      };
    },
    dumpDataDir: () => db.dumpDataDir('none'),
    poolStats: () => undefined,
    close: async () => {
      await db.close();
      unlock();
    },
  });
}

export interface PostgresOptions {
  poolSize?: number;
  /** How long to wait for a connection (new or from the pool) before the query fails. */
  connectionTimeoutMs?: number;
  /** The longest a statement may run on the server; a transaction idle this long is ended too. */
  statementTimeoutMs?: number;
  /** Where a pool's connection errors go (an idle connection losing its server); nothing else reports them. */
  onError?: (error: Error) => void;
}

export const POSTGRES_DEFAULTS = { poolSize: 10, connectionTimeoutMs: 5_000, statementTimeoutMs: 30_000 } as const;

/**
 * The server at the database URL could not be used when the store opened it (refused, not found, a wrong password,
 * no such database). The message names the server (host, port, database), never the URL's user or password.
 */
export class DatabaseUnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    let where = 'the given URL';
    try {
      const parsed = new URL(url);
      where = `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
    } catch {
      // Not a URL pg could read either: said by the reason below.
    }
    const error = cause as { code?: unknown; message?: unknown };
    const code = typeof error?.code === 'string' ? `${error.code}: ` : '';
    const reason = typeof error?.message === 'string' ? error.message.split('\n')[0]!.slice(0, 200) : 'no answer';
    super(`cannot use the PostgreSQL server at ${where} (${code}${reason})`);
    this.name = 'DatabaseUnreachableError';
  }
}

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  const { poolSize, connectionTimeoutMs, statementTimeoutMs } = { ...POSTGRES_DEFAULTS, ...options };
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: connectionTimeoutMs,
    // TCP keepalive: a pooled connection whose server vanished without a word is noticed and replaced.
    keepAlive: true,
    // Enforced by the server, and by the client too in case the server stops answering altogether.
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + 5_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server emits 'error'; unheard, that would crash the process. The pool
  // replaces the client on the next query; the error is reported.
  const report = quietDuringOutage(reportOnStderr);
  const onError = options.onError ?? ((error: Error) => report('database connection lost', error));
  pool.on('error', (error) => onError(error));
  const run = async <T extends Row>(target: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) =>
    (await target.query(sql, params as unknown[] | undefined).catch(rethrowWithoutValues)).rows as T[];
  try {
    await run(pool, 'select 1');
  } catch (error) {
    await pool.end().catch(() => {});
    throw new DatabaseUnreachableError(url, error);
  }
  return closingGracefully({
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    async transaction(fn) {
      const client = await pool.connect();
      // A checked-out client has no listener of the pool's: without this one, a server restarting between two of
      // the transaction's statements would emit an unheard 'error' and end the process. The statement under way
      // (or the next) fails too, and the transaction rolls back below.
      let lost: Error | undefined;
      const onLost = (error: Error) => {
        lost ??= error;
      };
      client.on('error', onLost);
      const release = (broken: boolean) => {
        client.removeListener('error', onLost);
        client.release(broken || lost !== undefined);
      };
      try {
        await client.query('begin');
        const result = await fn({
          query: (sql, params) => run(client, sql, params),
          exec: async (sql) => {
            await client.query(sql);
          },
        });
        await client.query('commit');
        release(false);
        return result;
      } catch (error) {
        // A connection that cannot even roll back is broken: the pool drops it instead of reusing it.
        const broken = await client.query('rollback').then(
          () => false,
          () => true,
        );
        release(broken);
        throw error;
      }
    },
    exec: async (sql) => {
      await pool.query(sql);
    },
    listen: (channels, onNotify, listenOptions) => listenOnPostgres(url, connectionTimeoutMs, channels, onNotify, listenOptions),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  });
}

/** One client of its own (a pooled one would be handed to other queries), made again with backoff when lost. */
async function listenOnPostgres(
  url: string,
  connectionTimeoutMs: number,
  channels: readonly string[],
  onNotify: (channel: string, payload: string) => void,
  options: ListenOptions = {},
): Promise<Listening> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = RECONNECT_FIRST_DELAY_MS;

  const connect = async (): Promise<pg.Client> => {
    // TCP keepalive: a connection whose server vanished without a word is noticed, not listened to forever.
    const next = new pg.Client({ connectionString: url, application_name: LISTEN_APPLICATION_NAME, connectionTimeoutMillis: connectionTimeoutMs, keepAlive: true });
    let listening = false;
    let lost = false;
    const lose = (error?: Error) => {
      if (!listening || lost) return; // a failure while connecting rejects connect() instead
      lost = true;
      void next.end().catch(() => {});
      if (client === next) client = undefined;
      if (closed) return;
      options.onError?.(error ?? new Error('the listening connection closed'));
      reconnectLater();
    };
    next.on('error', lose);
    next.on('end', () => lose());
    next.on('notification', (message) => {
      if (!closed) onNotify(message.channel, message.payload ?? '');
    });
    try {
      await next.connect();
      for (const channel of channels) await next.query(`listen "${channel.replaceAll('"', '""')}"`);
    } catch (error) {
      void next.end().catch(() => {});
      throw error;
    }
    listening = true;
    return next;
  };

  const reconnectLater = () => {
    retry = setTimeout(() => {
      retry = undefined;
      if (closed) return;
      connect().then(
        async (next) => {
          if (closed) return next.end();
          client = next;
          delay = RECONNECT_FIRST_DELAY_MS;
          options.onReconnect?.();
        },
        (error: unknown) => {
          if (closed) return;
          options.onError?.(error as Error);
          delay = Math.min(delay * 2, RECONNECT_MAX_DELAY_MS);
          reconnectLater();
        },
      );
    }, delay);
    retry.unref();
  };

  client = await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}

export function openDatabase(options: { databaseUrl?: string | undefined; dataDir?: string | undefined }): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}
