/**
 * A bad value stops `storefront serve` with one line naming the variable, before the database is opened: a HOST
 * naming no address, a DATABASE_URL whose server cannot be used (without its password in the line).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-bad-config-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function serveWith(env: Record<string, string>) {
  const dataDir = path.join(scratch, `data-${Math.random().toString(36).slice(2)}`);
  const result = runCli(['serve'], { PORT: '0', DATA_DIR: dataDir, ...env });
  return { ...result, lines: result.stderr.trim().split('\n'), dataDir };
}

describe('storefront serve with a bad value', () => {
  for (const [what, host] of [
    ['a HOST that is no host name', 'not a host'],
    ['a HOST naming no address', 'not-a-host.invalid'],
  ] as const) {
    it(`${what}: one line naming HOST, exit 1, the database never opened`, () => {
      const result = serveWith({ HOST: host });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.lines.length, 1, result.stderr);
      assert.match(result.lines[0]!, /^storefront: bad configuration: HOST: /);
      assert.equal(existsSync(result.dataDir), false, 'the embedded database was not opened');
    });
  }

  it('a DATABASE_URL whose server refuses: one line naming DATABASE_URL and the server, not its password', () => {
    const result = serveWith({ DATABASE_URL: 'postgres://shop:s3cret-word@127.0.0.1:1/shopdb' });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.lines.length, 1, result.stderr);
    assert.match(result.lines[0]!, /^storefront: bad configuration: DATABASE_URL: cannot use the PostgreSQL server at 127\.0\.0\.1:1\/shopdb \(ECONNREFUSED/);
    assert.doesNotMatch(result.stderr, /s3cret-word/);
  });
});
