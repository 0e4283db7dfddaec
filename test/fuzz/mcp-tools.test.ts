/**
 * Fuzz, property 1: every MCP tool's arguments. For each tool, (a) arbitrary JSON as its arguments (hostile strings,
 * odd numbers, deep nesting, arrays where objects belong, unknown and `__proto__` keys) and (b) a valid call with one
 * field replaced, removed, added or wrapped at a random place. Every answer: never 5xx, one JSON-RPC response (a
 * result with content, structuredContent and isError, or an error with an integer code and a message; a non-200
 * also the storefront Error), and no stack trace, SQL or file path in its text.
 */
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { dropTestDatabases } from '../helpers/store.js';
import {
  assertRpcAnswer,
  backends,
  fuzz,
  hostileJson,
  hostileObject,
  hostileString,
  mutate,
  mutation,
  nested,
  objectOf,
  placesIn,
  startFuzzStore,
  toolCall,
  assertNoUnstorableTextStored,
  assertPhonesStoredInE164,
  type FuzzStore,
  type Mutation,
} from './fuzz-harness.js';
import { TOOLS, validArgs, type ToolName } from './valid-calls.js';

after(dropTestDatabases);

/** The arguments each tool reads besides `meta`. */
const ARGUMENT_KEYS: Record<ToolName, string[]> = {
  search_catalog: ['catalog'],
  lookup_catalog: ['catalog'],
  get_product: ['catalog'],
  create_cart: ['cart'],
  get_cart: ['id'],
  update_cart: ['id', 'cart'],
  cancel_cart: ['id'],
  create_checkout: ['checkout'],
  get_checkout: ['id'],
  update_checkout: ['id', 'checkout'],
  complete_checkout: ['id', 'checkout'],
  cancel_checkout: ['id'],
  get_order: ['id'],
};

/** Arguments shaped like the tool's (its keys, `meta` anonymous, an agent's or hostile) holding anything. */
function argumentsFor(tool: ToolName, agent: { profile: string }): fc.Arbitrary<unknown> {
  const meta = fc.oneof(
    fc.constant(undefined),
    fc.constant({ 'ucp-agent': agent }),
    fc.uuid().map((key) => ({ 'ucp-agent': agent, 'idempotency-key': key })),
    hostileJson,
  );
  const shaped = fc
    .tuple(meta, fc.tuple(...ARGUMENT_KEYS[tool].map(() => fc.oneof(hostileString, hostileJson))), hostileObject)
    .map(([metaValue, values, extra]) =>
      objectOf([
        ...(metaValue === undefined ? [] : ([['meta', metaValue]] as [string, unknown][])),
        ...ARGUMENT_KEYS[tool].map((key, index) => [key, values[index]] as [string, unknown]),
        ...Object.entries(extra).slice(0, 2),
      ]),
    );
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 2, arbitrary: hostileObject }, { weight: 1, arbitrary: hostileJson });
}

/** Cases every run starts with: arguments 10,000 levels deep, and in place of each argument. */
function deepArguments(tool: ToolName, agent: { profile: string }): unknown[] {
  return [nested('array', 10_000), ...ARGUMENT_KEYS[tool].map((key) => objectOf([['meta', { 'ucp-agent': agent }], [key, nested('object', 10_000)]]))];
}

/**
 * Mutations every run starts with: each text field of the valid call in turn holding NUL, then a lone surrogate; each
 * top-level argument 10,000 levels deep.
 */
function knownHardMutations(valid: Record<string, unknown>): Mutation[] {
  const textPlaces = placesIn(valid).filter((place) => typeof place.reduce((node: any, step) => node[step], valid) === 'string');
  const text = (value: string) => textPlaces.map((_, pick): Mutation => ({ pick, action: 'replace-text', key: 'x', value: null, text: value }));
  const topLevel = placesIn(valid).flatMap((place, pick) => (place.length === 1 ? [pick] : []));
  return [
    ...text('\u0000'),
    ...text('\ud800'),
    ...topLevel.map((pick): Mutation => ({ pick, action: 'replace', key: 'x', value: nested('mixed', 10_000), text: '' })),
  ];
}

for (const backend of backends) {
  describe(`fuzz: MCP tool arguments (${backend.name})`, () => {
    let t: FuzzStore;
    before(async () => {
      t = await startFuzzStore(backend);
    });
    after(() => t.close());

    it('the valid calls the mutations start from succeed', async () => {
      for (const tool of TOOLS) {
        const args = await validArgs(t, tool);
        const answer = await toolCall(t.app, tool, args);
        const body = assertRpcAnswer(answer.status, answer.raw, tool, { toolCall: true, echoed: answer.payload });
        // get_order names an order that does not exist: a not_found result, still a result.
        if (tool !== 'get_order') assertSucceeded(tool, body, answer.raw);
      }
    });

    for (const tool of TOOLS) {
      it(`${tool}: arbitrary arguments`, async (c) => {
        await fuzz(
          c,
          backend,
          argumentsFor(tool, t.agent),
          async (args) => {
            const answer = await toolCall(t.app, tool, args);
            assertRpcAnswer(answer.status, answer.raw, tool, { toolCall: true, echoed: answer.payload, request: answer.payload });
          },
          { examples: deepArguments(tool, t.agent) },
        );
      });

      it(`${tool}: valid arguments with one field mutated`, async (c) => {
        const known = knownHardMutations(await validArgs(t, tool));
        await fuzz(
          c,
          backend,
          mutation,
          async (change) => {
            const { value, path } = mutate(await validArgs(t, tool), change);
            const answer = await toolCall(t.app, tool, value);
            assertRpcAnswer(answer.status, answer.raw, `${tool} with ${path}`, { toolCall: true, echoed: answer.payload, request: answer.payload });
          },
          { examples: known },
        );
      });
    }

    it('no control, bidi or invisible character sent above reached a cart, a checkout or an order', async () => {
      await assertNoUnstorableTextStored(t.store);
    });

    it('every phone sent above that was kept is stored in E.164', async () => {
      await assertPhonesStoredInE164(t.store);
    });
  });
}

function assertSucceeded(tool: string, body: any, raw: string): void {
  if (!body?.result || body.result.isError) throw new Error(`${tool}: the valid call was refused: ${raw.slice(0, 600)}`);
}
