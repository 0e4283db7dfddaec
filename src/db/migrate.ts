/** Versioned SQL migrations (migrations/NNN_name.sql), each applied once, in order, in its own transaction. */
import { readdirSync, readFileSync } from 'node:fs';
import type { Database, Queryable } from './database.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(new URL(file, dir), 'utf8'),
    }));
}

/** Applies the migrations not yet applied (each file whole, in its own transaction); returns the names it applied. */
export async function migrate(db: Database, migrations: Migration[] = loadMigrations()): Promise<string[]> {
  // Instances starting together on a fresh server would race on creating the table: one creates, the others wait.
  await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('storefront:migrate'))");
    await tx.query(`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`);
  });
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      // Several instances may start at once against one server: one applies, the others wait and skip.
      await tx.query('lock table schema_migrations in exclusive mode');
      const rows = await tx.query('select 1 from schema_migrations where version = $1', [migration.version]);
      if (rows.length > 0) return false;
      // Whole, as PostgreSQL reads a script: a function body with semicolons ($$ … $$) stays one statement.
      await tx.exec(migration.sql);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (done) applied.push(migrationName(migration));
  }
  return applied;
}

/** A migration as its file is named: 005_checkout. */
export function migrationName(migration: Migration): string {
  return `${String(migration.version).padStart(3, '0')}_${migration.name}`;
}

/** The migrations not yet applied to this database (its readiness says so). */
export async function pendingMigrations(db: Queryable, migrations: readonly Migration[] = loadMigrations()): Promise<Migration[]> {
  const rows = await db.query<{ version: number }>('select version from schema_migrations');
  const applied = new Set(rows.map((row) => Number(row.version)));
  return migrations.filter((migration) => !applied.has(migration.version));
}
