/**
 * No log line carries a statement's values. A failing query's error reaches the log (`{ err }`, serialised by pino
 * with all its fields), and on PGlite that error carried every parameter (`params`: checkout ids, which are bearer
 * capabilities, emails, addresses); on both engines PostgreSQL's DETAIL and CONTEXT quote rows, keys and JSON
 * input, and a data exception's message quotes the value it could not read. Each failure below is made with a
 * recognisable value, answered 500 and logged; the log says what failed (its SQLSTATE) and never the value.
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { ALL_BACKENDS, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

/** A value no log line may show: shaped like a checkout id, the capability the issue names. */
const secret = (name: string) => `chk_SECRET${name.toUpperCase()}0123456789`;

/** Failing statements, each with the SQLSTATE it fails with and the way it used to leak on a server too. */
const FAILURES: { name: string; code: string; run: (db: Database) => Promise<unknown> }[] = [
  // A NUL in text: refused while binding the parameter (PGlite attached the parameters to the error).
  { name: 'nul', code: '22021', run: (db) => db.query('insert into leak_probe (id, email) values ($1, $2)', [10, `${secret('nul')}\u0000`]) },
  // DETAIL: Key (email)=(…) already exists.
  { name: 'duplicate', code: '23505', run: (db) => db.query('insert into leak_probe (id, email) values ($1, $2)', [11, secret('duplicate')]) },
  // DETAIL: Failing row contains (…).
  { name: 'check', code: '23514', run: (db) => db.query('insert into leak_probe (id, email, n) values ($1, $2, $3)', [12, secret('check'), -1]) },
  // The message: invalid input syntax for type integer: "…".
  { name: 'integer', code: '22P02', run: (db) => db.query('select $1::int as n', [secret('integer')]) },
  // CONTEXT: JSON data, line 1: {"email":"…
  {
    name: 'jsonb',
    code: '22P05',
    run: (db) => db.query('insert into leak_probe (id, email, doc) values ($1, $2, $3)', [13, 'x', JSON.stringify({ email: `${secret('jsonb')}\u0000` })]),
  },
  // Inside a transaction, as the store's units of work run.
  { name: 'transaction', code: '22P02', run: (db) => db.transaction((tx) => tx.query('select $1::uuid as id', [secret('transaction')])) },
];

// The database layer's own tests run on every backend, whatever STOREFRONT_TEST_BACKENDS narrows (CI's Node 24 step).
for (const backend of ALL_BACKENDS) {
  describe(`a failing query's values stay out of the log (${backend.name})`, () => {
    let t: TestStore;
    const lines: string[] = [];
    before(async () => {
      t = await startTestStore(backend, {
        seedDemo: false,
        app: {
          logger: { write: (line: string) => void lines.push(line) },
          extend: (app) => {
            app.post<{ Params: { name: string } }>('/test/query-failure/:name', { config: { rateLimit: 'other' } }, async (request) => {
              await FAILURES.find((failure) => failure.name === request.params.name)!.run(t.store.db);
              return { ran: true };
            });
          },
        },
      });
      await t.store.db.exec('create table leak_probe (id int primary key, email text not null unique, doc jsonb, n int check (n > 0))');
      await t.store.db.query('insert into leak_probe (id, email) values ($1, $2)', [1, secret('duplicate')]);
    });
    after(() => t.close());

    for (const failure of FAILURES) {
      it(`${failure.name} (${failure.code}): answered 500 and logged with its SQLSTATE, never the value`, async () => {
        lines.length = 0;
        const response = await t.app.inject({ method: 'POST', url: `/test/query-failure/${failure.name}` });
        assert.equal(response.statusCode, 500, response.body);
        assert.ok(!response.body.includes(secret(failure.name)));
        const logged = lines.find((line) => (JSON.parse(line) as { msg?: string }).msg === 'request failed');
        assert.ok(logged, `a line reports the failure:\n${lines.join('')}`);
        assert.equal((JSON.parse(logged) as { err: { code: string } }).err.code, failure.code, logged);
        for (const line of lines) assert.ok(!line.includes(secret(failure.name)), `a log line carries the query's value:\n${line}`);
      });
    }

    it('the error a caller catches keeps its class and SQLSTATE but carries no value, however it is printed', async () => {
      for (const failure of FAILURES) {
        const error = await failure.run(t.store.db).then(
          () => assert.fail(`${failure.name} did not fail`),
          (caught: unknown) => caught as Error & { code?: string },
        );
        assert.equal(error.code, failure.code, failure.name);
        for (const text of [inspect(error, { depth: 5 }), JSON.stringify(error), String(error.stack), error.message]) {
          assert.ok(!text.includes(secret(failure.name)), `${failure.name}: ${text}`);
        }
      }
    });
  });
}
