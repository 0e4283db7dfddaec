/**
 * The schemas `tools/list` shows and `tools/call` checks: lean, hand-written JSON Schema 2020-12 for what each tool
 * reads, not the official UCP request and response schemas (made self-contained, those were about 220 KB for the
 * 13 tools, tens of thousands of tokens of an agent's context). They are liberal: every object stays open, so both
 * UCP releases' request shapes pass (2026-04-08 and 2026-08-25: a cart update without `cart.id`, a destination
 * with `type: "shipping_address"`, method, group and line ids optional everywhere), and only the types a tool
 * relies on are checked (ids are strings, quantities integers of at least 1, amounts integers of at least 0).
 *
 * An output schema names the UCP response and requires only the `ucp` envelope: the answer's shape follows the
 * release negotiated with the caller, and MCP holds structuredContent to the schema given.
 *
 * `argumentProblems` reports every problem of a call's arguments at once, each with its JSONPath and a sentence.
 */
import { invalidParams, type JsonRpcError } from '../jsonrpc-errors.js';
import { UCP_RELEASES } from '../protocol.js';
import { inputPathText, type InputPath } from '../../http/storable-input.js';
import { validatorFor, type JsonSchema } from '../schemas/one-ajv.js';

// ---------------------------------------------------------------------------------------------------------------
// Shared pieces (one JS constant each: a tool's listed schema repeats them, the source does not).

const STRING = { type: 'string' };
const STRINGS = { type: 'array', items: STRING };
const OPTIONAL_ID = { type: ['string', 'null'] };
const object = (properties: Record<string, JsonSchema>, required: string[] = [], description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  ...(required.length ? { required } : {}),
});

const META_DESCRIPTION =
  "UCP request metadata. `ucp-agent.profile`: https URL of the calling platform's UCP profile; the store fetches it and " +
  'negotiates the UCP release and capabilities (without it the call is anonymous: catalog and cart tools only).';
const IDEMPOTENCY_DESCRIPTION = ' `idempotency-key` (a UUID) is required: a retry with the same key gets the same answer.';

/**
 * `meta` as the UCP MCP binding defines it, except that `ucp-agent` is optional: without an agent profile the caller
 * is anonymous. `idempotency-key` is required where the tool is keyed (complete_checkout, cancel_checkout, cancel_cart).
 */
export function metaSchema(options: { idempotencyKey: boolean }): JsonSchema {
  return {
    type: 'object',
    description: META_DESCRIPTION + (options.idempotencyKey ? IDEMPOTENCY_DESCRIPTION : ''),
    properties: {
      // No `format: uri` on the profile: a malformed or non-https URL is a -32001 invalid_profile_url (UCP), which
      // AgentProfiles.profileUrlOf raises before the arguments are validated (text no store can keep, in the URL as
      // anywhere, is -32602 before that).
      'ucp-agent': { type: 'object', required: ['profile'], properties: { profile: STRING } },
      'idempotency-key': { type: 'string', format: 'uuid' },
    },
    ...(options.idempotencyKey ? { required: ['idempotency-key'] } : {}),
  };
}

const META = metaSchema({ idempotencyKey: false });
const KEYED_META = metaSchema({ idempotencyKey: true });

/** A tool's input: `meta` (required where the tool is keyed) plus its named arguments. Open to other members. */
export function toolInput(properties: Record<string, JsonSchema>, required: string[], options = { idempotencyKey: false }): JsonSchema {
  return {
    type: 'object',
    properties: { meta: options.idempotencyKey ? KEYED_META : META, ...properties },
    required: options.idempotencyKey ? ['meta', ...required] : required,
  };
}

/** What each UCP response is called, by the name of its official schema. */
const RESPONSE_NAMES: Record<string, string> = {
  search_response: 'UCP catalog search response (`products`, `pagination`)',
  lookup_response: 'UCP catalog lookup response (`products`)',
  get_product_response: 'UCP get-product response (`product`)',
  cart: 'UCP cart',
  checkout: 'UCP checkout',
  order: 'UCP order',
};

/**
 * A tool's output: the UCP response named by its official schema (`search_response`, `cart`, `checkout`, …) or the
 * UCP error response, in the caller's negotiated release. Only the `ucp` envelope is required here.
 */
export function toolOutput(response: string): JsonSchema {
  return {
    type: 'object',
    description:
      `A ${RESPONSE_NAMES[response] ?? `UCP ${response}`}, or a UCP error response (\`ucp.status\` "error", \`messages\`), ` +
      `shaped by the UCP release negotiated with the caller (${UCP_RELEASES.join(' or ')}).`,
    required: ['ucp'],
    properties: { ucp: { type: 'object' } },
    additionalProperties: true,
  };
}

const LINE_ITEM = object(
  {
    id: { type: 'string', description: "A line's id from an earlier answer, to keep that line (optional)." },
    item: object({ id: { type: 'string', description: 'A variant id: products[].variants[].id from search_catalog or lookup_catalog.' } }, ['id']),
    quantity: { type: 'integer', minimum: 1 },
  },
  ['item', 'quantity'],
);
const LINE_ITEMS = { type: 'array', items: LINE_ITEM };

const BUYER = object({ email: STRING, first_name: STRING, last_name: STRING, phone_number: STRING });

const ADDRESS = object(
  {
    id: STRING,
    type: { type: 'string', description: '"shipping_address" (optional).' },
    first_name: STRING,
    last_name: STRING,
    street_address: STRING,
    extended_address: STRING,
    address_locality: STRING,
    address_region: { type: 'string', description: 'Two-letter US state code.' },
    postal_code: STRING,
    address_country: { type: 'string', description: '"US": the store ships in the United States only.' },
    phone_number: STRING,
  },
  [],
  'A shipping address.',
);

const FULFILLMENT = object(
  {
    methods: {
      type: 'array',
      items: object(
        {
          id: STRING,
          type: { type: 'string', description: '"shipping".' },
          line_item_ids: STRINGS,
          destinations: { type: 'array', items: ADDRESS },
          selected_destination_id: OPTIONAL_ID,
          groups: {
            type: 'array',
            items: object({
              id: STRING,
              selected_option_id: { type: ['string', 'null'], description: 'The chosen option: an id from the answer\'s groups[].options[].' },
            }),
          },
        },
        [],
        'One shipping method. Its id, line_item_ids and the groups\' ids are optional.',
      ),
    },
  },
  [],
);

const CENTS = { type: 'integer', minimum: 0 };
const FILTERS = object({
  categories: { type: 'array', items: STRING, description: 'Product types or collection titles (any of them).' },
  price: object({ min: CENTS, max: CENTS }, [], 'In US cents.'),
});
const CONTEXT = object({ currency: STRING }, [], 'Only `currency` is read: a price filter in another currency than USD is not applied.');

const CART_ID = { type: 'string', description: 'The cart id, as create_cart answered it.' };
const CHECKOUT_ID = { type: 'string', description: 'The checkout id, as create_checkout answered it.' };

// ---------------------------------------------------------------------------------------------------------------
// Catalog

export const searchCatalogInput = toolInput(
  {
    catalog: object(
      {
        query: { type: 'string', description: 'Free text; omit it to list every product.' },
        filters: FILTERS,
        context: CONTEXT,
        pagination: object({
          cursor: { type: 'string', description: 'pagination.cursor of the previous page.' },
          limit: { type: 'integer', minimum: 1, description: 'Page size (larger than the maximum is clamped).' },
        }),
      },
      [],
    ),
  },
  ['catalog'],
);
export const searchCatalogOutput = toolOutput('search_response');

export const lookupCatalogInput = toolInput(
  {
    catalog: object(
      { ids: { type: 'array', items: STRING, minItems: 1, description: 'Product ids, variant ids, handles or SKUs.' }, filters: FILTERS, context: CONTEXT },
      ['ids'],
    ),
  },
  ['catalog'],
);
export const lookupCatalogOutput = toolOutput('lookup_response');

export const getProductInput = toolInput(
  {
    catalog: object(
      {
        id: { type: 'string', description: 'A product id, variant id, handle or SKU.' },
        selected: { type: 'array', items: object({ name: STRING, label: STRING }, ['name', 'label']) },
        preferences: STRINGS,
        filters: FILTERS,
        context: CONTEXT,
      },
      ['id'],
    ),
  },
  ['catalog'],
);
export const getProductOutput = toolOutput('get_product_response');

// ---------------------------------------------------------------------------------------------------------------
// Cart

const CART_LINES = object({ line_items: LINE_ITEMS }, ['line_items']);

export const createCartInput = toolInput({ cart: CART_LINES }, ['cart']);
export const getCartInput = toolInput({ id: CART_ID }, ['id']);
export const updateCartInput = toolInput({ id: CART_ID, cart: CART_LINES }, ['id', 'cart']);
export const cancelCartInput = toolInput({ id: CART_ID }, ['id'], { idempotencyKey: true });
export const cartOutput = toolOutput('cart');

// ---------------------------------------------------------------------------------------------------------------
// Checkout and order (set in checkout-tools.ts)

export const createCheckoutInput = toolInput(
  {
    checkout: object({
      cart_id: { type: 'string', description: "Check out this cart: its lines are used (line_items are then ignored)." },
      line_items: LINE_ITEMS,
      buyer: BUYER,
      fulfillment: FULFILLMENT,
    }),
  },
  ['checkout'],
);
export const getCheckoutInput = toolInput({ id: CHECKOUT_ID }, ['id']);
/** Full replacement, so `line_items` is required (both releases); no id of a line, method or group is. */
export const updateCheckoutInput = toolInput(
  { id: CHECKOUT_ID, checkout: object({ line_items: LINE_ITEMS, buyer: BUYER, fulfillment: FULFILLMENT }, ['line_items']) },
  ['id', 'checkout'],
);
export const completeCheckoutInput = toolInput(
  { id: CHECKOUT_ID, checkout: { type: 'object', description: 'Ignored: no payment data is taken here. The buyer pays after approving, as the answer says.' } },
  ['id'],
  { idempotencyKey: true },
);
export const cancelCheckoutInput = toolInput({ id: CHECKOUT_ID }, ['id'], { idempotencyKey: true });
export const checkoutOutput = toolOutput('checkout');

export const getOrderInput = toolInput({ id: { type: 'string', description: "The order id: a completed checkout's `order.id`." } }, ['id']);
export const orderOutput = toolOutput('order');

// ---------------------------------------------------------------------------------------------------------------
// Validation


export interface ArgumentProblem {
  /** Where, as a JSONPath: `$.checkout.line_items[0].quantity`. */
  path: string;
  /** A sentence naming the path: `$.checkout.line_items[0].quantity must be at least 1.` */
  message: string;
}

type AjvError = { keyword: string; instancePath: string; params: Record<string, unknown>; message?: string };

/** A JSON Pointer into `data` as a JSONPath (written as every other path of this door); the data says whether a numeric segment indexes an array. */
function jsonPath(pointer: string, data: unknown): string {
  const segments: InputPath = [];
  let node = data;
  for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    segments.push(Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : key);
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  return inputPathText(segments);
}

const A_TYPE: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  object: 'an object',
  array: 'an array',
  boolean: 'true or false',
  null: 'null',
};
const plural = (n: unknown, word: string) => `${String(n)} ${word}${n === 1 ? '' : 's'}`;

/** What is wrong, as the end of a sentence whose subject is the path. */
function complaint(error: AjvError): string {
  const p = error.params;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((type) => A_TYPE[type] ?? type)
        .join(' or ')}`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'minItems':
      return `must list at least ${plural(p.limit, 'item')}`;
    case 'maxItems':
      return `must list at most ${plural(p.limit, 'item')}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')} long`;
    case 'format':
      return p.format === 'uuid' ? 'must be a UUID' : `must be a valid ${String(p.format)}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'additionalProperties':
      return 'has a member that is not allowed';
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * Every problem of `input` against a tool's input schema (none when it is valid), in the order of the schema, each
 * once. Validated on the commerce door's one Ajv (one-ajv.ts `ucpAjv`, which reports all errors).
 */
export function argumentProblems(schema: JsonSchema, input: unknown): ArgumentProblem[] {
  const validate = validatorFor(schema);
  if (validate(input)) return [];
  const problems = new Map<string, ArgumentProblem>();
  for (const error of (validate.errors ?? []) as AjvError[]) {
    // An `if` failing is reported by its `then`'s own errors; a failing branch of anyOf/oneOf by the branch's.
    if (error.keyword === 'if') continue;
    const missing = error.keyword === 'required' ? String(error.params.missingProperty) : undefined;
    const pointer = missing === undefined ? error.instancePath : `${error.instancePath}/${missing.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const path = jsonPath(pointer, input);
    const message = `${path} ${complaint(error)}.`;
    if (!problems.has(message)) problems.set(message, { path, message });
  }
  return problems.size ? [...problems.values()] : [{ path: '$', message: '$ is invalid.' }];
}

/** At most this many problems travel in one -32602 error (a huge bad list of lines would otherwise be echoed back in full). */
const MAX_REPORTED_PROBLEMS = 50;

/**
 * The -32602 error for a call with these argument problems: the first in `message`, every one (up to 50) in
 * `data.errors` as `{path, message}`; `data.path` is the first problem's path.
 */
export function invalidArguments(tool: string, problems: readonly ArgumentProblem[]): JsonRpcError {
  const first = problems[0] ?? { path: '$', message: '$ is invalid.' };
  const more = problems.length - 1;
  const errors = problems.slice(0, MAX_REPORTED_PROBLEMS);
  return invalidParams(`Invalid params for ${tool}: ${first.message}${more > 0 ? ` (${plural(more, 'more problem')} in data.errors)` : ''}`, {
    path: first.path,
    errors,
    ...(problems.length > errors.length ? { omitted: problems.length - errors.length } : {}),
  });
}
