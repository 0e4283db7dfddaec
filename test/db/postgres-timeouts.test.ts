/**
 * The PostgreSQL pool never waits forever: connecting gives up after its timeout, a statement that runs too
 * long is cancelled by the server, and a pooled connection that dies while idle is reported, not ignored.
 * (PostgreSQL only: the embedded database has no connection to lose.)
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { openPostgres } from '../../src/db/database.js';
import { POSTGRES_URL } from '../helpers/store.js';

describe('PostgreSQL timeouts', () => {
  const sockets: Socket[] = [];
  // A server that accepts connections and never says a word: a database host that hangs.
  const silent = createServer((socket) => sockets.push(socket));
  after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });

  it('connecting to a server that never answers fails after the connection timeout', { timeout: 15_000 }, async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const started = Date.now();
    await assert.rejects(openPostgres(`postgres://postgres@127.0.0.1:${port}/test`, { connectionTimeoutMs: 300 }), /timeout/i);
    // Far above the 300 ms asked for, for a loaded machine; the defect is waiting for ever.
    assert.ok(Date.now() - started < 10_000, `gave up after ${Date.now() - started} ms`);
  });

  it('a statement running past the statement timeout is cancelled', { timeout: 15_000 }, async () => {
    const db = await openPostgres(POSTGRES_URL, { statementTimeoutMs: 200 });
    try {
      await assert.rejects(db.query('select pg_sleep(3)'), (error: unknown) => (error as { code?: string }).code === '57014');
      await assert.rejects(
        db.transaction((tx) => tx.query('select pg_sleep(3)')),
        (error: unknown) => (error as { code?: string }).code === '57014',
      );
      assert.deepEqual(await db.query<{ one: number }>('select 1 as one'), [{ one: 1 }], 'the pool still works');
    } finally {
      await db.close();
    }
  });

  it('an idle pooled connection that loses its server is reported, and the next query gets a new one', { timeout: 15_000 }, async () => {
    const lost: Error[] = [];
    const db = await openPostgres(POSTGRES_URL, { poolSize: 1, onError: (error) => lost.push(error) });
    const admin = await openPostgres(POSTGRES_URL, { poolSize: 1 });
    try {
      const [{ pid }] = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')) as [{ pid: number }];
      await admin.query('select pg_terminate_backend($1)', [pid]);
      // The report comes when the pool's client sees its socket close: wait for it, however slow the machine.
      const deadline = Date.now() + 10_000;
      while (lost.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(lost.length, 1, 'the lost connection was reported within 10 s');
      assert.deepEqual(await db.query<{ one: number }>('select 1 as one'), [{ one: 1 }]);
    } finally {
      await admin.close();
      await db.close();
    }
  });
});
