/**
 * One SQL interface over two engines: embedded PostgreSQL (PGlite) by default, a PostgreSQL server via
 * DATABASE_URL. The same SQL and migrations run on both.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
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

/** The application_name of a server's listening connection (how to find it in pg_stat_activity). */
export const LISTEN_APPLICATION_NAME = 'storefront-listen';
const RECONNECT_FIRST_DELAY_MS = 250;
const RECONNECT_MAX_DELAY_MS = 10_000;

// int8 ids fit in a JS number (they stay below 2^53); read them as numbers on both engines.
const parseInt8 = (value: string) => Number(value);

export class DatabaseInUseError extends Error {}

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

export interface PgliteOptions {
  /** A data directory dumped with `dumpDataDir()` to start from (tests clone a migrated template this way). */
  loadDataDir?: Blob | File;
}

export async function openPglite(dataDir: string | undefined, options: PgliteOptions = {}): Promise<Database> {
  let unlock = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    unlock = lockDataDir(dataDir);
  }
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, { parsers: { [pgliteTypes.INT8]: parseInt8 }, ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) });
  } catch (error) {
    unlock();
    throw error;
  }
  const run = async <T extends Row>(target: Pick<PGlite, 'query'>, sql: string, params?: readonly unknown[]) =>
    (await target.query<T>(sql, params as unknown[] | undefined)).rows;
  return {
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
    close: async () => {
      await db.close();
      unlock();
    },
  };
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

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  const { poolSize, connectionTimeoutMs, statementTimeoutMs } = { ...POSTGRES_DEFAULTS, ...options };
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: connectionTimeoutMs,
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
  const onError = options.onError ?? ((error: Error) => console.error(`storefront: database connection lost: ${error.message}`));
  pool.on('error', (error) => onError(error));
  const run = async <T extends Row>(target: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) =>
    (await target.query(sql, params as unknown[] | undefined)).rows as T[];
  try {
    await run(pool, 'select 1');
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await fn({
          query: (sql, params) => run(client, sql, params),
          exec: async (sql) => {
            await client.query(sql);
          },
        });
        await client.query('commit');
        client.release();
        return result;
      } catch (error) {
        // A connection that cannot even roll back is broken: the pool drops it instead of reusing it.
        const broken = await client.query('rollback').then(
          () => false,
          () => true,
        );
        client.release(broken);
        throw error;
      }
    },
    exec: async (sql) => {
      await pool.query(sql);
    },
    listen: (channels, onNotify, listenOptions) => listenOnPostgres(url, connectionTimeoutMs, channels, onNotify, listenOptions),
    close: () => pool.end(),
  };
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
