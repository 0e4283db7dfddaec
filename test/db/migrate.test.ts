/** Migrations run each file whole, in its own transaction, once, on both backends. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { ALL_BACKENDS, dropTestDatabases } from '../helpers/store.js';

after(dropTestDatabases);

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-migrations-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A migration with a PL/pgSQL function: its body holds semicolons followed by new lines. */
const FUNCTION_MIGRATION = `-- a trigger function, as later migrations will need
create table audit (id serial primary key, note text not null);
create function add_note(text) returns integer language plpgsql as $$
declare
  new_id integer;
begin
  insert into audit (note) values ($1) returning id into new_id;
  return new_id;
end;
$$;
`;

// The database layer's own tests run on every backend, whatever STOREFRONT_TEST_BACKENDS narrows (CI's Node 24 step).
for (const backend of ALL_BACKENDS) {
  describe(`migrations (${backend.name})`, () => {
    it('a migration with a $$ function body applies whole, and only once', async () => {
      const dir = path.join(scratch, backend.name);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(path.join(dir, '001_audit.sql'), FUNCTION_MIGRATION);
      const migrations = loadMigrations(pathToFileURL(`${dir}/`));
      const { db } = await backend.open();
      try {
        assert.deepEqual(await migrate(db, migrations), ['001_audit']);
        assert.deepEqual(await migrate(db, migrations), []);
        const [row] = await db.query<{ id: number }>(`select add_note('hello') as id`);
        assert.equal(row!.id, 1);
      } finally {
        await db.close();
      }
    });

    it('the store migrations apply to an empty database and a second run finds nothing to do', async () => {
      const { db } = await backend.open();
      try {
        const applied = await migrate(db);
        assert.deepEqual(applied, loadMigrations().map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`));
        assert.deepEqual(await migrate(db), []);
      } finally {
        await db.close();
      }
    });
  });
}
