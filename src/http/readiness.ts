/**
 * Readiness (GET /readyz): the database answers `select 1` within 2 s and every migration this build ships is
 * applied. A balancer sends traffic only to a ready instance; liveness (/healthz) never touches the database.
 */
import type { Queryable } from '../db/database.js';
import { migrationName, pendingMigrations, type Migration } from '../db/migrate.js';

const DATABASE_DEADLINE_MS = 2000;

/** Rejects when `work` has not settled within `ms`. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Which check fails, said for an operator, or undefined when the instance is ready. */
export function readinessCheck(db: Queryable, migrations: readonly Migration[]): () => Promise<string | undefined> {
  return async () => {
    try {
      await within(DATABASE_DEADLINE_MS, db.query('select 1'));
    } catch {
      return `The database does not answer: select 1 failed or took over ${DATABASE_DEADLINE_MS / 1000} s.`;
    }
    let missing: Migration[];
    try {
      missing = await within(DATABASE_DEADLINE_MS, pendingMigrations(db, migrations));
    } catch {
      return 'The migrations table cannot be read: run `storefront migrate`.';
    }
    if (missing.length === 0) return undefined;
    const names = missing.map(migrationName).join(', ');
    return `Migrations not applied: ${names}; run \`storefront migrate\`.`;
  };
}
