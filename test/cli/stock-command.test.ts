/**
 * The merchant's stock commands against a running store, as a merchant runs them: the store is a real process
 * (`storefront serve`), the commands run here through the function the binary runs (a process of their own reaches
 * the store the same way). On PostgreSQL the running store is told of the change (LISTEN/NOTIFY) and picks it up at
 * once; on the embedded database the running store runs the command itself (through its control socket), so the
 * change shows at once. The same path lets `storefront import` run while it serves. "At once" is checked as "within
 * 15 s": far above what a loaded machine takes (each wait is reported), and on PostgreSQL still well under the 30 s
 * safety poll, so the change cannot have come in by the poll.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { cliTargets, runCli, runCommand, storefrontArgs } from '../helpers/cli.js';
import { POSTGRES_URL } from '../helpers/store.js';
import { freePort } from '../helpers/browser.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-stock-'));
const databases: string[] = [];
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  for (const database of databases) await admin.query(`drop database if exists ${database} with (force)`).catch(() => {});
  await admin.end();
});


const storefront = runCommand;

/** How long a change made by another process may take to show in the running store (the PostgreSQL safety poll is 30 s). */
const NOTIFIED_WITHIN_MS = 15_000;

async function available(origin: string, handle: string): Promise<boolean | undefined> {
  const response = await fetch(`${origin}/products/${handle}.js`);
  if (response.status !== 200) return undefined;
  return ((await response.json()) as { available: boolean }).available;
}

/** Polls until `check` holds; returns the milliseconds it took, or fails after `limitMs`. */
async function within(limitMs: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > limitMs) assert.fail(`${what}: not seen within ${limitMs} ms`);
    await sleep(50);
  }
  return Date.now() - start;
}

/** `within(NOTIFIED_WITHIN_MS, …)`, reporting how long the change took to show. */
async function shows(t: TestContext, what: string, check: () => Promise<boolean>): Promise<void> {
  t.diagnostic(`${what}: shown after ${await within(NOTIFIED_WITHIN_MS, what, check)} ms`);
}

const targets = cliTargets(scratch, 'sf_cli', databases);

for (const target of targets) {
  describe(`storefront stock, with the store running (${target.name})`, () => {
    let server: ChildProcess;
    let origin: string;
    let env: Record<string, string>;

    before(async () => {
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      env = { ...(await target.env()), PORT: String(port), HOST: '127.0.0.1', BASE_URL: origin, RATE_LIMIT: 'off' };
      server = spawn(process.execPath, storefrontArgs('serve'), { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: 'inherit' });
      await within(60_000, 'the store starting', async () => (await fetch(`${origin}/healthz`).catch(() => undefined))?.status === 200);
    });
    after(async () => {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    });

    it('`stock set` reaches the running store at once (not by the safety poll), and `stock` lists the new level', async (t) => {
      assert.equal(await available(origin, 'decaf-capsules'), true);
      const set = await storefront(['stock', 'set', 'ESP-DEC-10', '0'], env);
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, /ESP-DEC-10 \(variant \d+\): 0 on hand \(was 150\)/);
      await shows(t, 'sold out', async () => (await available(origin, 'decaf-capsules')) === false);

      const listed = await storefront(['stock'], env);
      assert.equal(listed.code, 0, listed.stderr);
      const lines = listed.stdout.trim().split('\n');
      assert.match(lines[0]!, /^SKU\s+VARIANT ID\s+PRODUCT\s+ON HAND$/);
      assert.match(listed.stdout, /^ESP-DEC-10\s+\d+\s+Decaf Espresso Capsules\s+0$/m);
      assert.match(listed.stdout, /^ESP-RIS-10\s+\d+\s+Espresso Capsules - Ristretto \/ 10 capsules\s+400$/m);

      assert.equal((await storefront(['stock', 'set', 'ESP-DEC-10', '12'], env)).code, 0);
      await shows(t, 'back in stock', async () => (await available(origin, 'decaf-capsules')) === true);
    });

    it('an unknown SKU or a bad quantity: one clear line, exit 1, nothing changed', async () => {
      for (const [args, message] of [
        [['stock', 'set', 'NO-SUCH-SKU', '3'], /no variant has the SKU "NO-SUCH-SKU"; nothing was changed/],
        [['stock', 'set', 'ESP-DEC-10', '-1'], /QUANTITY must be a whole number from 0/],
      ] as const) {
        const result = await storefront([...args], env);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
        assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
        assert.match(result.stderr, message);
      }
      assert.match((await storefront(['stock'], env)).stdout, /^ESP-DEC-10\s+\d+\s+Decaf Espresso Capsules\s+12$/m);
    });

    it('`import` runs while the store serves, and the store shows the product at once (not by the safety poll)', async (t) => {
      const file = path.join(scratch, `kettle-${target.name.replace(/\W/g, '')}.json`);
      writeFileSync(file, JSON.stringify({ products: [{ handle: 'travel-kettle', title: 'Travel Kettle', variants: [{ sku: 'KET-1', price: 3400, inventory_quantity: 4 }] }] }));
      const result = await storefront(['import', file], env);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /products: 1 created/);
      await shows(t, 'the imported product', async () => (await available(origin, 'travel-kettle')) === true);
    });
  });
}

describe('storefront help and argument checks', () => {
  // What only a process shows: its exit code.
  it('--help lists the commands and exits 0', () => {
    const result = runCli(['--help'], {});
    assert.equal(result.code, 0);
    assert.match(result.stdout, /stock set SKU QUANTITY/);
    assert.match(result.stdout, /import FILE/);
  });

  it('a quantity that is not a whole number from 0 is refused before anything is opened', async () => {
    for (const quantity of ['2.5', '0x10', '1000000001']) {
      const result = await storefront(['stock', 'set', 'ESP-DEC-10', quantity], { DATA_DIR: path.join(scratch, 'never-opened') });
      assert.equal(result.code, 1, quantity);
      assert.match(result.stderr, /^storefront: QUANTITY must be a whole number from 0 to 1000000000, got ".*"; nothing was changed\n$/);
    }
    const missing = await storefront(['stock', 'set', 'ESP-DEC-10'], {});
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /QUANTITY must be a whole number/);
  });
});
