/**
 * Request logging (#11, items 3 and 5), read from a real process's stdout: each request is one JSON line when it
 * is answered (method, path as the route table names it, route, status, response time, client address, request id), never a
 * line on arrival; an error's lines carry the request's id; no line holds the cart cookie, an Authorization header,
 * a token or id from a capability path, or the query; LOG_LEVEL still chooses what is written; and a normal stop
 * (SIGTERM) loses no line of the requests answered before it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { freePort } from '../helpers/browser.js';
import { cliTargets, scriptArgs, storefrontArgs } from '../helpers/cli.js';
import { POSTGRES_URL } from '../helpers/store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-request-log-'));
const databases: string[] = [];
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  for (const database of databases) await admin.query(`drop database if exists ${database} with (force)`).catch(() => {});
  await admin.end();
});

type Line = Record<string, unknown>;

interface Server {
  origin: string;
  /** Stops the process with SIGTERM and returns every line it wrote on stdout, parsed. */
  stop(): Promise<{ code: number | null; lines: Line[]; raw: string }>;
}

/**
 * `storefront serve` as npm start runs it, or (`crashRoute`) the same app built by a script that adds a route
 * throwing an error, since the served app has none; both log to stdout through the app's logger options.
 */
async function startServer(env: Record<string, string>, options: { crashRoute?: boolean } = {}): Promise<Server> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = options.crashRoute ? scriptArgs(crashApp) : storefrontArgs('serve');
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: origin },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const start = Date.now();
  while ((await fetch(`${origin}/healthz`).catch(() => undefined))?.status !== 200) {
    if (Date.now() - start > 60_000 || child.exitCode !== null) {
      child.kill('SIGKILL');
      assert.fail(`the store did not start: ${stdout}`);
    }
    await sleep(100);
  }
  return {
    origin,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      const lines = stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Line);
      return { code, lines, raw: stdout };
    },
  };
}

/** The app of `serve`, plus GET /test/crash that throws; stops like serve on SIGTERM (close, flush, exit 0). */
const crashApp = (from: (name: string) => string) => `
const { loadConfig } = await import(${JSON.stringify(from('config'))});
const { openStore } = await import(${JSON.stringify(from('store'))});
const { buildApp } = await import(${JSON.stringify(from('app'))});
const { flushRequestLog } = await import(${JSON.stringify(from('http/request-log'))});
const config = loadConfig();
const store = await openStore(config);
const app = await buildApp(store, {
  logger: true,
  extend: (root) => root.get('/test/crash', { config: { rateLimit: 'other' } }, async () => { throw new Error('boom in /srv/storefront/secret.ts'); }),
});
process.on('SIGTERM', async () => {
  await app.close();
  await store.close();
  await flushRequestLog(app.log);
  process.exit(0);
});
await app.listen({ port: config.port, host: config.host });
`;

const completions = (lines: Line[]) => lines.filter((line) => line.msg === 'request completed');

const targets = cliTargets(scratch, 'sf_log', databases);

for (const target of targets) {
  describe(`request logging (${target.name})`, () => {
    // One database for the describe's stores, one after the other (a new one costs each start its migrations and seeding).
    let env: Promise<Record<string, string>> | undefined;
    const storeEnv = () => (env ??= target.env());

    it('one completion line per request with its id, route, status and time; none on arrival; no secret in any line', async () => {
      const server = await startServer({ ...(await storeEnv()), RATE_LIMIT: 'off' });
      const sent: { id: string; status: number; method: string; path: string; route: string | null }[] = [];
      let cartToken = '';
      let lines: Line[] = [];
      let raw = '';
      try {
        const request = async (method: string, url: string, expected: { path: string; route: string | null }, init: RequestInit = {}) => {
          const response = await fetch(`${server.origin}${url}`, { method, ...init });
          await response.arrayBuffer();
          sent.push({ id: response.headers.get('x-request-id')!, status: response.status, method, ...expected });
          return response;
        };
        await request('GET', '/products/decaf-capsules.js', { path: '/products/:handle.js', route: '/products/:handle.js' });
        await request('HEAD', '/products/decaf-capsules.js', { path: '/products/:handle.js', route: '/products/:handle.js' });
        await request('GET', '/products/no-such-thing.js', { path: '/products/:handle.js', route: '/products/:handle.js' });
        await request('GET', '/search/suggest.json?q=private%20words', { path: '/search/suggest.json', route: '/search/suggest.json' });
        // No route: only the words of the app's routes are kept; a wrong method is named by the route of its path.
        await request('GET', '/nothing/here?x=1', { path: '/*/*', route: null });
        await request('GET', '/cart/nothing-here', { path: '/cart/*', route: null });
        await request('DELETE', '/products/decaf-capsules.js', { path: '/products/:handle.js', route: null });
        const variantId = ((await (await fetch(`${server.origin}/products/decaf-capsules.js`)).json()) as { variants: { id: number }[] }).variants[0]!.id;
        const added = await request('POST', '/cart/add.js', { path: '/cart/add.js', route: '/cart/add.js' }, {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ id: variantId, quantity: 1 }] }),
        });
        cartToken = /cart=([^;]+)/.exec(added.headers.get('set-cookie') ?? '')![1]!;
        await request('GET', '/cart.js', { path: '/cart.js', route: '/cart.js' }, { headers: { cookie: `cart=${cartToken}`, authorization: 'Bearer s3cret-credential' } });
        await request('GET', `/cart/c/${cartToken}`, { path: '/cart/c/:token', route: '/cart/c/:token' }, { redirect: 'manual' });
        await request('GET', '/checkout/approve/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', { path: '/checkout/approve/:token', route: '/checkout/approve/:token' });
        await request('GET', '/orders/ord_not-a-real-order-id', { path: '/orders/:id', route: '/orders/:id' });
      } finally {
        ({ lines, raw } = await server.stop());
      }

      assert.ok(!lines.some((line) => line.msg === 'incoming request'), 'nothing is logged on arrival');
      for (const { id, status, method, path: loggedPath, route } of sent) {
        const ofRequest = lines.filter((line) => line.request_id === id);
        assert.equal(ofRequest.length, 1, `${method} ${loggedPath}: exactly one line`);
        const line = ofRequest[0]!;
        assert.equal(line.msg, 'request completed');
        assert.equal(line.level, 30);
        assert.deepEqual(
          { method: line.method, path: line.path, route: line.route, status: line.status, remote_address: line.remote_address },
          { method, path: loggedPath, route, status, remote_address: '127.0.0.1' },
        );
        assert.equal(typeof line.response_ms, 'number');
      }
      const ids = new Set(sent.map((s) => s.id));
      const others = completions(lines).filter((line) => !ids.has(String(line.request_id)) && line.path !== '/healthz');
      assert.equal(others.length, 1, 'besides the start-up probes, one line for the read of the variant id, nothing else');
      for (const line of lines) assert.ok(!('req' in line) && !('res' in line) && !('headers' in line), JSON.stringify(line));
      for (const secret of [cartToken, 's3cret-credential', 'private', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'ord_not-a-real-order-id']) {
        assert.ok(!raw.includes(secret), `no line holds ${secret}`);
      }
    });

    it('a 500: the error line (with its error) and the completion line carry the request id; LOG_LEVEL=warn writes only those', async () => {
      const server = await startServer({ ...(await storeEnv()), RATE_LIMIT: 'off', LOG_LEVEL: 'warn' }, { crashRoute: true });
      let lines: Line[] = [];
      let crashId = '';
      let readId = '';
      try {
        const read = await fetch(`${server.origin}/products/decaf-capsules.js`);
        await read.arrayBuffer();
        readId = read.headers.get('x-request-id')!;
        const crash = await fetch(`${server.origin}/test/crash`);
        crashId = crash.headers.get('x-request-id')!;
        assert.equal(crash.status, 500);
        const body = await crash.text();
        assert.ok(!body.includes('boom') && !body.includes('/srv/'), 'nothing internal reaches the client');
      } finally {
        ({ lines } = await server.stop());
      }
      assert.equal(lines.filter((line) => line.request_id === readId).length, 0, 'info lines are not written at warn');
      const ofCrash = lines.filter((line) => line.request_id === crashId);
      assert.equal(ofCrash.length, 2, JSON.stringify(ofCrash));
      const failed = ofCrash.find((line) => line.msg === 'request failed')!;
      assert.equal(failed.level, 50);
      assert.match(String((failed.err as { message?: string }).message), /boom/);
      assert.match(String((failed.err as { stack?: string }).stack), /Error: boom/);
      const completed = ofCrash.find((line) => line.msg === 'request completed')!;
      assert.equal(completed.level, 50);
      assert.equal(completed.status, 500);
      assert.equal(completed.route, '/test/crash');
    });

    it("behind a trusted proxy each line carries the proxy's X-Request-Id and the forwarded client address; an id it may not give is replaced", async () => {
      const server = await startServer({ ...(await storeEnv()), RATE_LIMIT: 'off', TRUST_PROXY: 'loopback' });
      const sent = [
        // The product read, a collection read, a write, and a 404.
        { url: '/products/decaf-capsules.js', id: 'edge-7f3a.1:product', client: '203.0.113.7' },
        { url: '/collections/all/products.json', id: 'edge-7f3a.2:collection', client: '203.0.113.8' },
        { url: '/cart/add.js', id: 'edge-7f3a.3:cart', client: '2001:db8::9', method: 'POST', body: '{"items":[]}' },
        { url: '/nothing/here', id: 'edge-7f3a.4:missing', client: '203.0.113.10' },
      ];
      const echoed: string[] = [];
      let lines: Line[] = [];
      let invalidEchoed = '';
      try {
        for (const { url, id, client, method = 'GET', body } of sent) {
          const headers: Record<string, string> = { 'x-request-id': id, 'x-forwarded-for': client, ...(body ? { 'content-type': 'application/json' } : {}) };
          const response = await fetch(`${server.origin}${url}`, { method, headers, body });
          await response.arrayBuffer();
          echoed.push(response.headers.get('x-request-id')!);
        }
        const invalid = await fetch(`${server.origin}/products/decaf-capsules.js`, { headers: { 'x-request-id': 'not allowed here' } });
        await invalid.arrayBuffer();
        invalidEchoed = invalid.headers.get('x-request-id')!;
      } finally {
        ({ lines } = await server.stop());
      }
      assert.deepEqual(echoed, sent.map(({ id }) => id), 'each answer echoes the proxy id');
      for (const { url, id, client } of sent) {
        const ofRequest = lines.filter((line) => line.request_id === id);
        assert.equal(ofRequest.length, 1, `${url}: one line with the proxy's id`);
        assert.equal(ofRequest[0]!.remote_address, client, `${url}: the forwarded client address`);
      }
      assert.notEqual(invalidEchoed, 'not allowed here');
      assert.match(invalidEchoed, /^[0-9a-f-]{36}$/);
      assert.equal(lines.filter((line) => line.request_id === invalidEchoed).length, 1, 'the replacement id is the one logged');
    });

    it('a normal stop (SIGTERM) loses no line: every request answered before it has its line', async () => {
      const server = await startServer({ ...(await storeEnv()), RATE_LIMIT: 'off' });
      const ids: string[] = [];
      let result: Awaited<ReturnType<Server['stop']>>;
      try {
        for (let round = 0; round < 10; round += 1) {
          const answers = await Promise.all(
            Array.from({ length: 50 }, () => fetch(`${server.origin}/collections/all/products.json`).then(async (r) => (await r.arrayBuffer(), r.headers.get('x-request-id')!))),
          );
          ids.push(...answers);
        }
      } finally {
        result = await server.stop();
      }
      assert.equal(result.code, 0);
      const logged = new Set(completions(result.lines).map((line) => String(line.request_id)));
      assert.equal(ids.filter((id) => !logged.has(id)).length, 0, `${ids.length} requests, ${logged.size} completion lines`);
      assert.equal(result.lines.at(-1)!.msg, 'stopped', 'the last line is the stop');
    });
  });
}
