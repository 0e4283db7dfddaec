/**
 * Fuzz, property 2: the JSON-RPC envelope of the commerce endpoint. Random jsonrpc, id, method and params values,
 * random bodies (JSON of any shape, batches, text that is not JSON, truncated JSON, very deep JSON), random
 * Content-Type, Accept and MCP-Protocol-Version headers. Every answer: never 5xx; 202 without a body (a
 * notification), or one JSON object: with 200 a JSON-RPC response, with any other status both the storefront
 * Error and a JSON-RPC error response (src/ucp/mcp/mcp-routes.ts); nothing internal in its text.
 */
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { dropTestDatabases } from '../helpers/store.js';
import {
  assertRpcAnswer,
  backends,
  fuzz,
  HOST,
  hostileJson,
  hostileKey,
  hostileNumber,
  hostileString,
  nested,
  objectOf,
  postMcp,
  Raw,
  startFuzzStore,
  toJson,
  type FuzzStore,
} from './fuzz-harness.js';
import { TOOLS } from './valid-calls.js';

after(dropTestDatabases);

const METHODS = [
  'tools/call',
  'tools/list',
  'initialize',
  'ping',
  'notifications/initialized',
  'notifications/cancelled',
  'resources/list',
  'prompts/list',
  'completion/complete',
  'logging/setLevel',
  'rpc.discover',
  'TOOLS/CALL',
  '',
];

/** Printable ASCII: what a header value may hold. */
const headerText = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);

const headers = fc.record(
  {
    'content-type': fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      {
        weight: 4,
        arbitrary: fc.constantFrom(
          'application/json; charset=utf-8',
          'application/json;charset=latin1',
          'APPLICATION/JSON',
          'application/json ; foo=bar',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json-patch+json',
          'application/jsonx',
          '',
        ),
      },
      { weight: 1, arbitrary: headerText },
    ),
    accept: fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      {
        weight: 4,
        arbitrary: fc.constantFrom('application/json, text/event-stream', 'text/event-stream', '*/*', 'application/*', 'text/html', '', 'application/json;q=0'),
      },
      { weight: 1, arbitrary: headerText },
    ),
    'mcp-protocol-version': fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '2025-11-25', '1999-01-01', ''), headerText),
    'mcp-session-id': headerText,
    origin: fc.constantFrom('http://store.test', 'null', 'http://evil.example'),
  },
  { requiredKeys: [] },
);

const params = fc.oneof(
  fc
    .record({ name: fc.oneof(fc.constantFrom(...TOOLS), hostileString), arguments: hostileJson, _meta: hostileJson }, { requiredKeys: ['name'] })
    .map((record) => objectOf(Object.entries(record))),
  fc
    .record({ protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26'), hostileString), capabilities: hostileJson, clientInfo: hostileJson })
    .map((record) => objectOf(Object.entries(record))),
  hostileJson,
);

/** A JSON-RPC message with each member present or not, valid or not, and maybe extra members. */
const envelope = fc
  .record(
    {
      jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', '2', 2, 2.0, null) }, { weight: 1, arbitrary: hostileJson }),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), hostileNumber, hostileJson),
      method: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...METHODS) }, { weight: 1, arbitrary: hostileString }, { weight: 1, arbitrary: hostileJson }),
      params,
      extra: fc.array(fc.tuple(hostileKey, hostileJson), { maxLength: 2 }),
    },
    { requiredKeys: ['method', 'extra'] },
  )
  .map(({ extra, ...members }) => toJson(objectOf([...Object.entries(members), ...extra])));

/** Text that is not one JSON-RPC message: not JSON at all, cut short, a batch, empty, a BOM, very deep. */
const oddBody = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', 'null', '[]', '[{}]', '{', '{"jsonrpc":"2.0"', '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":"ping"}garbage', 'NaN', '"\\ud800"', '{"a":"\\u0000"}'),
  envelope.map((text) => `[${text},${text}]`),
  envelope.chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
  fc.constantFrom('array' as const, 'object' as const, 'mixed' as const).chain((shape) => fc.integer({ min: 50, max: 10_000 }).map((depth) => nested(shape, depth).text)),
  fc.integer({ min: 50, max: 10_000 }).map((depth) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested('object', depth).text}}`),
  hostileJson.map(toJson),
);

const request = fc.record({ body: fc.oneof({ weight: 4, arbitrary: envelope }, { weight: 2, arbitrary: oddBody }), headers });

/** Known hard cases: very deep bodies, params and arguments. */
const EXAMPLES = [
  { body: nested('array', 10_000).text, headers: { 'content-type': 'application/json' } },
  { body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested('object', 10_000).text}}`, headers: { 'content-type': 'application/json' } },
  {
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_catalog","arguments":{"catalog":${nested('mixed', 8000).text}}},"extra":1}`,
    headers: { 'content-type': 'application/json' },
  },
  { body: `{"jsonrpc":"2.0","id":${new Raw('1e999', '').text},"method":"ping"}`, headers: { 'content-type': 'application/json' } },
];

for (const backend of backends) {
  describe(`fuzz: MCP JSON-RPC envelope (${backend.name})`, () => {
    let t: FuzzStore;
    before(async () => {
      t = await startFuzzStore(backend);
    });
    after(() => t.close());

    it('random envelopes, bodies and headers: never 5xx, always the documented JSON shape', async (c) => {
      await fuzz(
        c,
        backend,
        request,
        async ({ body, headers: sent }) => {
          const answer = await postMcp(t.app, body, { host: HOST, ...sent });
          const described = `${JSON.stringify(sent)} ${body}`;
          assertRpcAnswer(answer.status, answer.raw, 'POST /api/ucp/mcp', { echoed: body, request: described });
        },
        { weight: 4, examples: EXAMPLES },
      );
    });
  });
}
