/**
 * The fuzz suite's shared parts: its settings (a fixed seed and a bounded number of cases, both overridable), the
 * generators of hostile JSON (NUL, lone surrogates, emoji, very long strings, huge and odd numbers, deep nesting,
 * `__proto__` keys), the checks every answer must pass (never 5xx, the documented shape, nothing internal in the
 * text), and a runner that prints the seed and the cases run per property.
 *
 * Settings (environment):
 * - FUZZ_SEED: the seed (default 20261125). Each backend runs with its own seed derived from it (seed, seed + 1), so
 *   the two explore different cases; both are printed.
 * - FUZZ_RUNS: the cases per property, split between the backends (default 40: 20 each). `npm run fuzz` runs 2000.
 * - FUZZ_COLLECT=1: a failing case is recorded and the run goes on; each property then prints every distinct
 *   failure it met (by its first line) instead of stopping at (and shrinking) the first one.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { backends, startTestStore, type Backend, type TestStore } from '../helpers/store.js';
import { json, platformProfile, startProfileServer, type ProfileServer } from '../ucp/mcp-harness.js';
import { STORE_CAPABILITIES } from '../ucp/agent-profile-server.js';

export const FUZZ_SEED = integerSetting('FUZZ_SEED', 20261125);
export const FUZZ_RUNS = integerSetting('FUZZ_RUNS', 40);
const COLLECT = process.env.FUZZ_COLLECT === '1';

function integerSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, not ${JSON.stringify(raw)}`);
  return value;
}

/** The cases one property runs on one backend: FUZZ_RUNS split between the backends (at least one). */
export function runsPerBackend(weight = 1): number {
  return Math.max(1, Math.ceil((FUZZ_RUNS * weight) / backends.length));
}

/** The seed of a backend: FUZZ_SEED for the first, FUZZ_SEED + 1 for the second. */
export function seedFor(backend: Backend): number {
  return (FUZZ_SEED + backends.indexOf(backend)) | 0;
}

/**
 * Runs one property on one backend with the suite's seed and case count, printing both (and, with FUZZ_COLLECT=1,
 * every distinct failure). A failure is reported with fast-check's shrunk counterexample and the seed/path that
 * replays it.
 */
export async function fuzz<T>(
  t: TestContext,
  backend: Backend,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  options: { weight?: number; examples?: T[] } = {},
): Promise<void> {
  const seed = seedFor(backend);
  const numRuns = runsPerBackend(options.weight);
  const failures = new Map<string, { count: number; message: string }>();
  const property = fc.asyncProperty(arbitrary, async (value) => {
    try {
      await predicate(value);
    } catch (error) {
      if (!COLLECT) throw error;
      const message = error instanceof Error ? error.message : String(error);
      const key = failureSignature(message);
      const seen = failures.get(key);
      if (seen) seen.count += 1;
      else failures.set(key, { count: 1, message: message.slice(0, 2000) });
    }
  });
  const examples = options.examples ?? [];
  // The examples (known hard cases) run first, on top of the random cases.
  const details = await fc.check(property, { seed, numRuns: numRuns + examples.length, examples: examples.map((example) => [example] as [T]) });
  t.diagnostic(
    `fast-check seed=${seed} cases=${details.numRuns} (${examples.length} fixed examples + up to ${numRuns} random)` +
      `${details.failed ? ', stopped at the first failure' : ''}; FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS}, backend ${backend.name}`,
  );
  for (const { count, message } of failures.values()) {
    t.diagnostic(`failure seen ${count}x: ${message}`);
    console.log(`# fuzz failure (${count}x) in ${t.fullName}:\n${message}\n`);
  }
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`${fc.defaultReportMessage(details) ?? 'property failed'}\nThe shrunk counterexample fails with:\n${cause}`);
  }
  if (failures.size) throw new Error(`${failures.size} distinct failure(s); see the diagnostics above`);
}

/** The first line of a failure, numbers and quoted text blurred: the same defect met twice is one entry. */
function failureSignature(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/\d+/g, 'N').slice(0, 200);
}

// ---------------------------------------------------------------------------------------------------------------
// Hostile JSON

/** A JSON text inserted as it is (numbers JSON.stringify cannot write, nesting too deep to build as objects). */
export class Raw {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}

  [fc.toStringMethod](): string {
    return `Raw(${this.label})`;
  }

  toJSON(): never {
    throw new Error('Raw JSON is written by toJson, not JSON.stringify');
  }
}

/** JSON text of a value that may hold Raw pieces and own `__proto__` keys (lone surrogates escaped, as JSON.stringify does). */
export function toJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .map((key) => `${JSON.stringify(key)}:${toJson(record[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** An object with exactly these own keys, `__proto__` included (a plain assignment would set the prototype). */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** Text the stores must not choke on. */
export const NASTY_TEXT = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\udbffy',
  '😀',
  '👩‍👩‍👧‍👦',
  '\u202e',
  '\ufeff',
  '\uffff',
  '\u2028',
  // What would rewrite a terminal or reorder a page (issue 35): escapes, C1 controls, bidi controls, invisible format characters.
  '\u001b[2J\u001b[H',
  '\u001b]52;c;cm0gLXJmIH4K\u0007',
  '\u009b31m',
  '\u0085',
  '\u007f',
  '\u202eteertS kaO 21',
  '\u2066x\u2069',
  '\u200b',
  '\u200d',
  '\u00ad',
  '\u061c',
  '\u200f',
  '\u2060',
  '\u{e0041}',
  '\r\n',
  "'",
  '"',
  '\\',
  '%',
  '%00',
  '%ED%A0%80',
  "' or 1=1 --",
  '\'); drop table carts; --',
  '$1',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  '__proto__',
  'constructor',
  ' ',
  '',
  'ESP-RIS-10',
  'decaf-capsules',
  '42100000001',
  '9007199254740993',
  'gid://shopify/ProductVariant/1',
  'chk_',
  'ord_',
  'https://example.com/profile.json',
  'http://127.0.0.1:1/x',
];

const textPiece = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_TEXT) },
);

/** Strings: short mixes of the nasty pieces, and now and then a very long one. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.array(textPiece, { maxLength: 4 }).map((parts) => parts.join('')) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('x', '😀', '\u0000', '\ud800', 'é', '%'), fc.integer({ min: 300, max: 40_000 }))
      .map(([unit, count]) => unit.repeat(count)),
  },
);

const RAW_NUMBERS = ['1e999', '-1e999', '1E400', '1e-400', '-0.0', '0.0000000000000000000000001', '123456789012345678901234567890', '9007199254740993', '1.0'];

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 20 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1, 2 ** 31, 2 ** 32 + 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, -1e308, 5e-324, 0.5, 1.5, 1e100),
  fc.constantFrom(...RAW_NUMBERS).map((text) => new Raw(text, text)),
);

/** JSON nested `depth` deep, written as text. */
export function nested(shape: 'array' | 'object' | 'mixed', depth: number): Raw {
  const open = shape === 'array' ? '[' : shape === 'object' ? '{"a":' : '{"a":[';
  const close = shape === 'array' ? ']' : shape === 'object' ? '}' : ']}';
  const levels = shape === 'mixed' ? Math.ceil(depth / 2) : depth;
  return new Raw(open.repeat(levels) + '1' + close.repeat(levels), `${shape} nested ${depth} deep`);
}

/** Deep nesting: mostly 20 to 200 levels, now and then 6,000 to 10,000. */
export const deepJson: fc.Arbitrary<Raw> = fc
  .tuple(
    fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
    fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 20, max: 200 }) }, { weight: 1, arbitrary: fc.integer({ min: 6000, max: 10_000 }) }),
  )
  .map(([shape, depth]) => nested(shape, depth));

/** Keys the store reads, keys it should ignore, and the prototype's. */
export const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'id',
  'ids',
  'meta',
  'ucp-agent',
  'profile',
  'idempotency-key',
  'catalog',
  'cart',
  'checkout',
  'cart_id',
  'line_items',
  'item',
  'quantity',
  'buyer',
  'email',
  'first_name',
  'fulfillment',
  'methods',
  'type',
  'destinations',
  'groups',
  'selected_option_id',
  'query',
  'selected',
  'filters',
  'context',
  'pagination',
  'cursor',
  'limit',
  'payment',
  'items',
  'updates',
  'properties',
  'selling_plan',
  'line',
  'note',
  'attributes',
];

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: hostileString },
);

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 4, arbitrary: hostileNumber },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 1, arbitrary: deepJson },
);

/** Any JSON value, hostile at every level. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 6 }).map(objectOf),
})).value;

/** A JSON object with hostile keys and values (the shape arguments and bodies should have, filled with anything). */
export const hostileObject: fc.Arbitrary<Record<string, unknown>> = fc.array(fc.tuple(hostileKey, hostileJson), { maxLength: 6 }).map(objectOf);

// ---------------------------------------------------------------------------------------------------------------
// Mutations of valid values

export type PathStep = string | number;

/** Every place in a JSON value (not the root): objects' keys and arrays' indexes, depth first. */
export function placesIn(value: unknown, prefix: PathStep[] = []): PathStep[][] {
  const places: PathStep[][] = [];
  if (Array.isArray(value)) {
    value.forEach((item, index) => places.push([...prefix, index], ...placesIn(item, [...prefix, index])));
  } else if (typeof value === 'object' && value !== null && !(value instanceof Raw)) {
    for (const key of Object.keys(value)) places.push([...prefix, key], ...placesIn((value as Record<string, unknown>)[key], [...prefix, key]));
  }
  return places;
}

export interface Mutation {
  /** Which place (modulo their number); the root's new key when there are none. */
  pick: number;
  /** `replace-text`: a text field (a string leaf) gets `text`; the others act on any place. */
  action: 'replace' | 'replace-text' | 'delete' | 'add-key' | 'wrap-in-array';
  key: string;
  value: unknown;
  text: string;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  action: fc.oneof(
    { weight: 6, arbitrary: fc.constant('replace' as const) },
    { weight: 4, arbitrary: fc.constant('replace-text' as const) },
    { weight: 1, arbitrary: fc.constant('delete' as const) },
    { weight: 1, arbitrary: fc.constant('add-key' as const) },
    { weight: 1, arbitrary: fc.constant('wrap-in-array' as const) },
  ),
  key: hostileKey,
  value: hostileJson,
  text: hostileString,
});

const copy = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(copy)
    : typeof value === 'object' && value !== null && !(value instanceof Raw)
      ? objectOf(Object.entries(value).map(([key, item]) => [key, copy(item)]))
      : value;

/** `valid` with one place replaced (or removed, or given a new key, or wrapped in an array); `valid` is left as it was. */
export function mutate(valid: Record<string, unknown>, change: Mutation): { value: Record<string, unknown>; path: string } {
  const value = copy(valid) as Record<string, unknown>;
  const all = placesIn(value);
  const textPlaces = all.filter((place) => typeof place.reduce((node: any, step) => node[step], value) === 'string');
  const places = change.action === 'replace-text' && textPlaces.length ? textPlaces : all;
  const place = places.length ? places[change.pick % places.length]! : [];
  const parentPath = place.slice(0, -1);
  let parent: any = value;
  for (const step of parentPath) parent = parent[step];
  const last = place[place.length - 1];
  const path = `$${place.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('')}`;
  if (last === undefined || change.action === 'add-key') {
    const target = last === undefined ? value : parent[last];
    const holder = typeof target === 'object' && target !== null && !Array.isArray(target) ? target : value;
    Object.defineProperty(holder, change.key, { value: change.value, enumerable: true, writable: true, configurable: true });
    return { value, path: `${holder === value ? '$' : path}[${JSON.stringify(change.key)}] (added)` };
  }
  if (change.action === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
    return { value, path: `${path} (deleted)` };
  }
  parent[last] = change.action === 'wrap-in-array' ? [parent[last]] : change.action === 'replace-text' ? change.text : change.value;
  return { value, path: `${path} (${change.action === 'wrap-in-array' ? 'wrapped in an array' : 'replaced'})` };
}

// ---------------------------------------------------------------------------------------------------------------
// Checks every answer must pass

/** What only the inside of the service knows: stack frames, file paths, SQL and database errors. */
const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\bat (?:async )?[\w$.<>[\] ]+ \((?:file:|node:|\/)|(?:\n|\\n)\s+at \S+/],
  ['a file path', /(?:file:\/\/|\/(?:home|work|usr|tmp|opt|app|srv)\/|node_modules|\bsrc\/[\w/-]+\.(?:ts|js))|\.(?:ts|js|mjs):\d+:\d+/],
  [
    'SQL or a database error',
    /\b(?:select\s+[\w*,\s."]+\s+from\s+\w|insert\s+into\s+\w|update\s+\w+\s+set\s|delete\s+from\s+\w)|syntax error at or near|invalid byte sequence for encoding|unsupported Unicode escape sequence|violates (?:check|foreign key|not-null|unique) constraint|duplicate key value|relation "[^"]*" does not exist|\bSQLSTATE\b|\bPGlite\b|\bpg_[a-z]+/i,
  ],
  ['an error class name', /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|Maximum call stack size exceeded)\b/],
];

/** Fails when `text` leaks something internal. `echoed`: text the request sent, which the answer may quote. */
export function assertNoLeak(text: string, what: string, echoed = ''): void {
  for (const [name, pattern] of LEAKS) {
    const match = pattern.exec(text);
    if (match && !echoed.includes(match[0])) assert.fail(`${what}: the answer leaks ${name} (${JSON.stringify(match[0])}): ${excerpt(text)}`);
  }
}

/** An answer's text for a failure message: JSON bodies as they are, cut to `max` characters. */
export function excerpt(text: string, max = 600): string {
  const flat = text.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return flat.length > max ? `${flat.slice(0, max)}…(${text.length} chars)` : flat;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The storefront Error: `{status, message, description}` with `status` the HTTP status. */
export function assertStorefrontError(status: number, body: unknown, what: string, raw: string): void {
  assert.ok(isRecord(body), `${what}: HTTP ${status}, the body is not a JSON object: ${excerpt(raw)}`);
  assert.equal(body.status, status, `${what}: body.status is not the HTTP status ${status}: ${excerpt(raw)}`);
  assert.equal(typeof body.message, 'string', `${what}: no message: ${excerpt(raw)}`);
  assert.ok(body.description === undefined || typeof body.description === 'string', `${what}: description is not a string: ${excerpt(raw)}`);
}

/**
 * An answer of the commerce endpoint: never 5xx; 202 without a body (notifications); 200 one JSON-RPC response (a
 * result, for tools/call with content, structuredContent and isError; or an error with an integer code and a
 * message); any other status both the storefront Error and a JSON-RPC error response.
 */
export function assertRpcAnswer(status: number, raw: string, what: string, options: { toolCall?: boolean; echoed?: string; request?: string } = {}): any {
  try {
    return checkRpcAnswer(status, raw, what, options);
  } catch (error) {
    throw withRequest(error, options.request);
  }
}

/** The failure, with the request that caused it on a line of its own (cut to `max` characters). */
export function withRequest(error: unknown, request: string | undefined, max = 1500): unknown {
  if (request === undefined || !(error instanceof Error)) return error;
  error.message += `\n  request: ${request.length > max ? `${request.slice(0, max)}…(${request.length} chars)` : request}`;
  return error;
}

function checkRpcAnswer(status: number, raw: string, what: string, options: { toolCall?: boolean; echoed?: string }): any {
  assert.ok(status < 500, `${what}: HTTP ${status} ${excerpt(raw)}`);
  assertNoLeak(raw, what, options.echoed);
  if (status === 202) return undefined;
  const body = parseJson(raw);
  assert.ok(isRecord(body), `${what}: HTTP ${status}, the body is not one JSON object: ${excerpt(raw)}`);
  assert.equal(body.jsonrpc, '2.0', `${what}: HTTP ${status}, not a JSON-RPC response: ${excerpt(raw)}`);
  assert.ok('id' in body && (body.id === null || typeof body.id === 'string' || Number.isSafeInteger(body.id)), `${what}: bad id: ${excerpt(raw)}`);
  if (status !== 200) assertStorefrontError(status, body, what, raw);
  if (body.error !== undefined) {
    assert.ok(!('result' in body), `${what}: both result and error: ${excerpt(raw)}`);
    assert.ok(isRecord(body.error) && Number.isInteger(body.error.code) && typeof body.error.message === 'string', `${what}: malformed error: ${excerpt(raw)}`);
    return body;
  }
  assert.equal(status, 200, `${what}: HTTP ${status} without a JSON-RPC error: ${excerpt(raw)}`);
  assert.ok(isRecord(body.result), `${what}: neither result nor error: ${excerpt(raw)}`);
  if (options.toolCall) {
    const { content, structuredContent, isError } = body.result;
    assert.ok(Array.isArray(content) && content.every((c: any) => isRecord(c) && typeof c.type === 'string'), `${what}: result.content: ${excerpt(raw)}`);
    assert.ok(isRecord(structuredContent), `${what}: result.structuredContent: ${excerpt(raw)}`);
    assert.equal(typeof isError, 'boolean', `${what}: result.isError: ${excerpt(raw)}`);
    assert.ok(isRecord(structuredContent.ucp), `${what}: structuredContent.ucp: ${excerpt(raw)}`);
    assert.equal(isError, structuredContent.ucp.status === 'error', `${what}: isError disagrees with ucp.status: ${excerpt(raw)}`);
  }
  return body;
}

// ---------------------------------------------------------------------------------------------------------------
// The store under test

export const HOST = 'store.test';
export const RPC_HEADERS = { host: HOST, 'content-type': 'application/json', accept: 'application/json' };

export interface FuzzStore extends TestStore {
  profiles: ProfileServer;
  /** `meta["ucp-agent"]` naming a profile (on loopback) that declares every capability of the store. */
  agent: { profile: string };
}

const CAPABILITIES = [...STORE_CAPABILITIES];

/** A test store without rate limits, and an agent profile it may fetch over plain http from loopback. */
export async function startFuzzStore(backend: Backend): Promise<FuzzStore> {
  const profiles = await startProfileServer({ '/agent.json': json(platformProfile(CAPABILITIES), { 'cache-control': 'max-age=3600' }) });
  const test = await startTestStore(backend, { config: { rateLimit: false, allowInsecureProfiles: true } });
  return {
    ...test,
    profiles,
    agent: { profile: profiles.url('/agent.json') },
    async close() {
      await test.close();
      await profiles.close();
    },
  };
}

let nextRpcId = 1;

/** POSTs a JSON-RPC body (text as given) to the commerce endpoint through inject. */
export async function postMcp(app: FastifyInstance, payload: string, headers: Record<string, string> = RPC_HEADERS) {
  const response = await app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload });
  return { status: response.statusCode, raw: response.body };
}

/** One tools/call with `args` (any JSON value, Raw pieces allowed); returns the status, text and parsed body. */
export async function toolCall(app: FastifyInstance, name: string, args: unknown) {
  const payload = `{"jsonrpc":"2.0","id":${nextRpcId++},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${toJson(args)}}}`;
  const answer = await postMcp(app, payload);
  return { ...answer, payload, body: parseJson(answer.raw) as any };
}

/**
 * Characters no person-facing text may be stored with: controls but the line break, carriage return and tab of
 * multi-line text, bidi embeddings, overrides, isolates and marks, and invisible format characters (a ZWJ between
 * emoji or letters aside). Written out here, not taken from src/fields, so the check is not the rule testing itself.
 */
const UNSTORABLE_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0001}-\u{e007f}]|(?<![\p{L}\p{M}\p{N}\p{Extended_Pictographic}\ufe0f])\u200d|\u200d(?![\p{L}\p{M}\p{N}\p{Extended_Pictographic}])/u;

/** Every string (and key) in what a table holds, as row_to_json gives it. */
function* storedStrings(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* storedStrings(item);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      yield key;
      yield* storedStrings(item);
    }
  }
}

/** Nothing a client sent with control, bidi or invisible characters reached the carts, checkouts or orders. */
export async function assertNoUnstorableTextStored(store: TestStore['store']): Promise<void> {
  for (const table of ['carts', 'cart_lines', 'checkouts', 'orders', 'order_lines']) {
    const rows = await store.db.query<{ row: string }>(`select row_to_json(t)::text as row from ${table} t`);
    for (const { row } of rows) {
      for (const text of storedStrings(JSON.parse(row))) {
        assert.doesNotMatch(text, UNSTORABLE_TEXT, `${table} stores ${JSON.stringify(text).slice(0, 200)}`);
      }
    }
  }
}

/** A phone as the store keeps it, E.164: + and up to 15 digits. Written out here, not taken from src/fields. */
const E164 = /^\+[1-9]\d{6,14}$/;

/** Every phone a checkout or an order keeps (the buyer's, the address's) is E.164, whatever was sent; blank is none. */
export async function assertPhonesStoredInE164(store: TestStore['store']): Promise<void> {
  const rows = await store.db.query<{ place: string; phone: string | null }>(
    `select 'checkouts.buyer' as place, buyer->>'phoneNumber' as phone from checkouts
     union all select 'checkouts.destination', destination->>'phoneNumber' from checkouts
     union all select 'orders.buyer', buyer->>'phoneNumber' from orders
     union all select 'orders.shipping_address', shipping_address->>'phoneNumber' from orders`,
  );
  for (const { place, phone } of rows) if (phone !== null && phone.trim() !== '') assert.match(phone, E164, `${place} stores the phone ${JSON.stringify(phone.slice(0, 60))}`);
}

export { backends };
