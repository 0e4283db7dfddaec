/**
 * The README's "Try it" commands work as written: every command of the section's ```sh blocks is run with bash, as a
 * newcomer pastes it, against a store listening on loopback with `npm start`'s defaults (demo catalog, rate limits
 * on, the default approval proof), `http://localhost:3000` rewritten to the store's address. Each must exit 0 and
 * answer what the README says it answers. One backend (PGlite): the commands exercise the doors, not the database.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../helpers/browser.js';
import { PROJECT_ROOT } from '../helpers/project-root.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

const README = path.join(PROJECT_ROOT, 'README.md');
const README_BASE = 'http://localhost:3000';

/** The commands of the README's "Try it" section: every ```sh block, continuation lines joined, comments and blank lines left out. */
function tryItCommands(markdown: string): string[] {
  const start = markdown.indexOf('\n## Try it\n');
  assert.ok(start >= 0, 'the README has a "## Try it" section');
  const rest = markdown.slice(start + 1);
  const next = rest.indexOf('\n## ', 1);
  const section = next < 0 ? rest : rest.slice(0, next);
  const commands: string[] = [];
  for (const block of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    let pending = '';
    for (const line of block[1]!.split('\n')) {
      if (pending === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
      if (line.endsWith('\\')) {
        pending += line.slice(0, -1);
        continue;
      }
      commands.push((pending + line).trim());
      pending = '';
    }
    assert.equal(pending, '', 'no command ends a block with a continuation');
  }
  return commands;
}

function run(command: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { cwd, timeout: 10_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** What the README says each command answers; `matches` picks the command by what it asks. */
interface Expectation {
  name: string;
  matches(command: string): boolean;
  check(body: any, base: string, seen: Map<string, any>): void;
}

function mcpMethod(command: string): string | undefined {
  return /"method":"([^"]+)"/.exec(command)?.[1];
}

function toolName(command: string): string | undefined {
  return /"name":"([a-z_]+)","arguments"/.exec(command)?.[1];
}

/** A tool's answer: structuredContent, with the same JSON as text in content[0]. */
function toolResult(body: any): any {
  assert.equal(body.jsonrpc, '2.0');
  assert.ok(body.result, JSON.stringify(body).slice(0, 500));
  assert.notEqual(body.result.isError, true);
  const structured = body.result.structuredContent;
  assert.deepEqual(JSON.parse(body.result.content[0].text), structured);
  return structured;
}

const EXPECTATIONS: Expectation[] = [
  {
    name: 'a product',
    matches: (c) => c.includes('/products/energy-drink-stick.js'),
    check(body) {
      assert.equal(body.id, 7100000002);
      assert.equal(body.title, 'Energy Drink Stick');
      assert.equal(body.handle, 'energy-drink-stick');
      assert.ok(Array.isArray(body.variants) && body.variants.length > 0);
      assert.ok(Number.isInteger(body.price), 'prices are integer cents');
    },
  },
  {
    name: 'a collection page',
    matches: (c) => c.includes('/collections/drink-sticks/products.json'),
    check(body) {
      assert.equal(body.products.length, 2);
      for (const product of body.products) assert.equal(typeof product.handle, 'string');
    },
  },
  {
    name: 'predictive search',
    matches: (c) => c.includes('/search/suggest.json'),
    check(body) {
      const products = body.resources.results.products;
      assert.ok(products.length > 0 && products.length <= 3, `${products.length} products`);
      assert.match(products[0].handle, /capsules$/, 'the capsules first');
    },
  },
  {
    name: 'a cart add',
    matches: (c) => c.includes('/cart/add.js'),
    check(body, _base, seen) {
      assert.equal(body.items[0].variant_id, 42100000001);
      seen.set('cart token', body.token);
    },
  },
  {
    name: 'the cart read back with the cookie jar',
    matches: (c) => c.includes('/cart.js'),
    check(body, _base, seen) {
      assert.equal(body.token, seen.get('cart token'), 'the cookie jar keeps the same cart');
      assert.equal(body.item_count, 2);
      assert.equal(body.total_price, 2998);
      assert.equal(body.items[0].variant_id, 42100000001);
    },
  },
  {
    name: 'the UCP profile',
    matches: (c) => c.includes('/.well-known/ucp'),
    check(body, base) {
      assert.equal(body.ucp.version, '2026-08-25');
      assert.equal(typeof body.ucp.supported_versions['2026-04-08'], 'string');
      const [service] = body.ucp.services['dev.ucp.shopping'];
      assert.equal(service.transport, 'mcp');
      assert.equal(service.endpoint, `${base}/api/ucp/mcp`);
      assert.equal(typeof body.ucp.capabilities, 'object');
    },
  },
  {
    name: 'MCP initialize',
    matches: (c) => mcpMethod(c) === 'initialize',
    check(body) {
      assert.equal(body.result.protocolVersion, '2025-06-18');
      assert.equal(body.result.serverInfo.name, 'storefront');
      assert.match(body.result.instructions, /search_catalog/);
    },
  },
  {
    name: 'MCP tools/list',
    matches: (c) => mcpMethod(c) === 'tools/list',
    check(body) {
      const names: string[] = body.result.tools.map((tool: { name: string }) => tool.name);
      assert.equal(names.length, 13, names.join(', '));
      assert.equal(names[0], 'search_catalog');
      assert.equal(names.at(-1), 'get_order');
    },
  },
  {
    name: 'MCP search_catalog',
    matches: (c) => mcpMethod(c) === 'tools/call' && toolName(c) === 'search_catalog',
    check(body) {
      const answer = toolResult(body);
      assert.equal(answer.ucp.version, '2026-08-25');
      assert.equal(answer.ucp.status, 'success');
      assert.ok(answer.products.length > 0 && answer.products.length <= 2);
    },
  },
  {
    name: 'MCP create_cart',
    matches: (c) => mcpMethod(c) === 'tools/call' && toolName(c) === 'create_cart',
    check(body, base, seen) {
      const cart = toolResult(body);
      assert.equal(cart.ucp.status, 'success');
      assert.equal(typeof cart.id, 'string');
      assert.equal(cart.line_items[0].item.id, '42100000001');
      assert.equal(cart.line_items[0].quantity, 2);
      assert.ok(cart.totals.some((total: { type: string; amount: number }) => total.type === 'total' && total.amount === 2998));
      assert.ok(cart.continue_url.startsWith(`${base}/cart/c/`), cart.continue_url);
      seen.set('continue_url', cart.continue_url);
    },
  },
];

describe('the README\'s "Try it" commands', () => {
  let store: TestStore;
  let base: string;
  let cwd: string;
  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // npm start's defaults (rate limits on, the default proof); only the address differs.
    const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused' });
    store = await startTestStore(backends[0]!, { config });
    await store.app.listen({ host: '127.0.0.1', port });
    cwd = mkdtempSync(path.join(tmpdir(), 'readme-try-it-'));
  });
  after(async () => {
    await store?.close();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('run as written, each answers what the README says', async () => {
    const commands = tryItCommands(readFileSync(README, 'utf8'));
    assert.ok(commands.length >= EXPECTATIONS.length, `${commands.length} commands`);
    const seen = new Map<string, any>();
    const checked = new Set<string>();
    for (const command of commands) {
      assert.ok(command.startsWith('curl '), `a plain curl line: ${command}`);
      assert.ok(command.includes(README_BASE), `against ${README_BASE}: ${command}`);
      const expectation = EXPECTATIONS.filter((e) => e.matches(command));
      assert.equal(expectation.length, 1, `exactly one expectation for: ${command}`);
      const result = await run(command.replaceAll(README_BASE, base), cwd);
      assert.equal(result.code, 0, `${command}\nexit ${result.code}: ${result.stderr}`);
      let body: unknown;
      assert.doesNotThrow(() => (body = JSON.parse(result.stdout)), `JSON from: ${command}\n${result.stdout.slice(0, 500)}`);
      expectation[0]!.check(body, base, seen);
      checked.add(expectation[0]!.name);
    }
    assert.deepEqual(
      EXPECTATIONS.map((e) => e.name).filter((name) => !checked.has(name)),
      [],
      'every door the README promises a curl for has one',
    );

    // The approval's first step as the README tells it: the cart's continue_url shows the cart in a browser, and its
    // button takes it over. (fetch sends Sec-Fetch-Mode: cors, which a browser's navigation never does; curl sends
    // what it is told.)
    const opened = await run(`curl -s -D - -H 'Accept: text/html' '${seen.get('continue_url')}'`, cwd);
    assert.equal(opened.code, 0);
    assert.match(opened.stdout, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(opened.stdout, /^set-cookie: cart=/im);
    assert.match(opened.stdout, /<button type="submit" class="primary">Open this cart here<\/button>/);
    const taken = await run(`curl -s -o /dev/null -D - -X POST -H 'Accept: text/html' -H 'Content-Type: application/x-www-form-urlencoded' '${seen.get('continue_url')}'`, cwd);
    assert.equal(taken.code, 0);
    assert.match(taken.stdout, /^HTTP\/1\.1 303 /);
    assert.match(taken.stdout, /^location: \/cart\r$/im);
    assert.match(taken.stdout, /^set-cookie: cart=/im);
  });
});
