/**
 * Bundles the official UCP JSON Schemas (release 2026-04-08, many files with relative `$ref`s) into one
 * flat `$defs` map that MCP clients can use without fetching anything: `tools/list` must carry
 * self-contained schemas. Request views are resolved from the `ucp_request` annotations the way the
 * official `ucp-schema resolve --op create|update` does (omit / required / optional per operation).
 *
 * The bundle is generated once and committed (`ucp-schemas.generated.ts`); the service never reads the
 * official files at run time. Regenerate after changing the entries below:
 *   node --import tsx src/ucp/schemas/bundle-schemas.ts vendor/ucp-2026-04-08/source
 * A test compares the committed bundle with a fresh one made from the official files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
export type RequestOp = 'create' | 'update';

/** One schema to bundle: a file of the official `source/` folder, a JSON pointer into it, an optional request view. */
export interface BundleEntry {
  name: string;
  file: string;
  pointer?: string;
  op?: RequestOp;
  /** Properties this service takes elsewhere (MCP passes a cart's `id` beside the cart, not in it). */
  dropProperties?: string[];
  /** Properties this service accepts but does not demand (a checkout made from a `cart_id` needs no line items). */
  optionalProperties?: string[];
}

export const BUNDLE_ENTRIES: BundleEntry[] = [
  { name: 'search_request', file: 'schemas/shopping/catalog_search.json', pointer: '/$defs/search_request' },
  { name: 'search_response', file: 'schemas/shopping/catalog_search.json', pointer: '/$defs/search_response' },
  { name: 'lookup_request', file: 'schemas/shopping/catalog_lookup.json', pointer: '/$defs/lookup_request' },
  { name: 'lookup_response', file: 'schemas/shopping/catalog_lookup.json', pointer: '/$defs/lookup_response' },
  { name: 'get_product_request', file: 'schemas/shopping/catalog_lookup.json', pointer: '/$defs/get_product_request' },
  { name: 'get_product_response', file: 'schemas/shopping/catalog_lookup.json', pointer: '/$defs/get_product_response' },
  { name: 'cart_create_request', file: 'schemas/shopping/cart.json', op: 'create' },
  { name: 'cart_update_request', file: 'schemas/shopping/cart.json', op: 'update', dropProperties: ['id'] },
  { name: 'cart', file: 'schemas/shopping/cart.json' },
  { name: 'error_response', file: 'schemas/shopping/types/error_response.json' },
  // Checkout as this store speaks it: with the fulfillment extension (shipping address and option).
  {
    name: 'checkout_create_request',
    file: 'schemas/shopping/fulfillment.json',
    pointer: '/$defs/dev.ucp.shopping.checkout',
    op: 'create',
    optionalProperties: ['line_items'],
  },
  { name: 'checkout_update_request', file: 'schemas/shopping/fulfillment.json', pointer: '/$defs/dev.ucp.shopping.checkout', op: 'update', dropProperties: ['id'] },
  { name: 'checkout', file: 'schemas/shopping/fulfillment.json', pointer: '/$defs/dev.ucp.shopping.checkout' },
  { name: 'order', file: 'schemas/shopping/order.json' },
  { name: 'platform_profile', file: 'discovery/profile_schema.json', pointer: '/$defs/platform_profile' },
];

/** Keywords whose value is a schema, a list of schemas, or a map of schemas; everything else is data. */
const SCHEMA_KEYWORDS = new Set([
  'items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames',
  'unevaluatedProperties', 'unevaluatedItems', 'additionalItems',
]);
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** Dropped: identifiers that would clash in a client's schema cache, annotations consumed here, and `name` (not a keyword). */
const DROPPED_KEYWORDS = new Set(['$schema', '$id', '$defs', 'definitions', 'ucp_request', 'name', 'examples']);

type Mode = 'omit' | 'required' | 'optional';

function requestMode(annotation: Json | undefined, op: RequestOp): Mode | undefined {
  if (typeof annotation === 'string') return annotation as Mode;
  if (annotation && typeof annotation === 'object' && !Array.isArray(annotation)) {
    const mode = annotation[op];
    return typeof mode === 'string' ? (mode as Mode) : undefined;
  }
  return undefined;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolvePointer(document: Json, pointer: string): Json {
  let node = document;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) || !(key in node)) throw new Error(`no ${pointer}`);
    node = node[key] as Json;
  }
  return node;
}

export function bundleUcpSchemas(
  readSource: (file: string) => string,
  entries: BundleEntry[] = BUNDLE_ENTRIES,
): { entries: Record<string, Json>; $defs: Record<string, Json> } {
  const documents = new Map<string, Json>();
  const load = (file: string): Json => {
    let document = documents.get(file);
    if (document === undefined) {
      document = JSON.parse(readSource(file)) as Json;
      documents.set(file, document);
    }
    return document;
  };

  const defs: Record<string, Json> = {};
  const annotated = new Map<string, boolean>();

  const keyOf = (file: string, pointer: string) => `${file}#${pointer}`;
  const defName = (file: string, pointer: string, op: RequestOp | undefined) =>
    [file.replace(/^schemas\//, '').replace(/\.json$/, '').replace(/\//g, '.'), ...pointer.split('/').filter((p) => p && p !== '$defs'), op]
      .filter(Boolean)
      .join('.')
      .replace(/[^A-Za-z0-9_.-]/g, '_');

  const parseRef = (ref: string, file: string) => {
    const [target = '', fragment = ''] = ref.split('#');
    return { file: target ? path.posix.join(path.posix.dirname(file), target) : file, pointer: fragment };
  };

  /** Whether a request view of this node differs from the node itself: an annotation in it or anything it refers to. */
  const hasAnnotations = (file: string, pointer: string): boolean => {
    const key = keyOf(file, pointer);
    const known = annotated.get(key);
    if (known !== undefined) return known;
    annotated.set(key, false); // cycles: assume none until found
    const visit = (node: Json): boolean => {
      if (Array.isArray(node)) return node.some(visit);
      if (!isObject(node)) return false;
      if ('ucp_request' in node) return true;
      if (typeof node.$ref === 'string') {
        const target = parseRef(node.$ref, file);
        if (hasAnnotations(target.file, target.pointer)) return true;
      }
      return Object.entries(node).some(([k, v]) => k !== '$defs' && visit(v));
    };
    const found = visit(resolvePointer(load(file), pointer));
    annotated.set(key, found);
    return found;
  };

  const refTo = (file: string, pointer: string, op: RequestOp | undefined): string => {
    const viewOp = op && hasAnnotations(file, pointer) ? op : undefined;
    const name = defName(file, pointer, viewOp);
    if (!(name in defs)) {
      defs[name] = {}; // placeholder first: schemas refer to themselves
      defs[name] = transform(resolvePointer(load(file), pointer), file, viewOp);
    }
    return `#/$defs/${name}`;
  };

  function transform(node: Json, file: string, op: RequestOp | undefined): Json {
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (DROPPED_KEYWORDS.has(keyword)) continue;
      if (keyword === '$ref' && typeof value === 'string') {
        const target = parseRef(value, file);
        out.$ref = refTo(target.file, target.pointer, op);
      } else if (SCHEMA_KEYWORDS.has(keyword)) {
        out[keyword] = transform(value, file, op);
      } else if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value)) {
        out[keyword] = value.map((item) => transform(item, file, op));
      } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && isObject(value)) {
        out[keyword] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, transform(v, file, op)]));
      } else {
        out[keyword] = value;
      }
    }
    if (op && isObject(node.properties)) applyRequestView(out, node.properties, op);
    return out;
  }

  /** Drops omitted properties and fixes `required` for one operation's request. */
  function applyRequestView(out: JsonObject, originalProperties: JsonObject, op: RequestOp): void {
    const properties = out.properties as JsonObject;
    const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : []);
    for (const [property, schema] of Object.entries(originalProperties)) {
      const mode = isObject(schema) ? requestMode(schema.ucp_request, op) : undefined;
      if (mode === 'omit') {
        delete properties[property];
        required.delete(property);
      } else if (mode === 'required') required.add(property);
      else if (mode === 'optional') required.delete(property);
    }
    if (required.size) out.required = [...required];
    else delete out.required;
  }

  const result: Record<string, Json> = {};
  for (const entry of entries) {
    const pointer = entry.pointer ?? '';
    const ref = refTo(entry.file, pointer, entry.op);
    let schema: Json = { $ref: ref };
    if (entry.dropProperties?.length || entry.optionalProperties?.length) {
      const name = ref.slice('#/$defs/'.length);
      const copy = structuredClone(defs[name]) as JsonObject;
      // An extension's schema is allOf [base, extension]: the base's own properties live in its first member.
      const base = (node: JsonObject): JsonObject => {
        const first = Array.isArray(node.allOf) && isObject(node.allOf[0]) ? (node.allOf[0] as JsonObject) : undefined;
        if (first && typeof first.$ref === 'string') {
          const target = first.$ref.slice('#/$defs/'.length);
          const inner = structuredClone(defs[target]) as JsonObject;
          node.allOf = [inner, ...(node.allOf as Json[]).slice(1)];
          return base(inner);
        }
        return node;
      };
      const own = base(copy);
      for (const property of entry.dropProperties ?? []) {
        if (isObject(own.properties)) delete own.properties[property];
        if (Array.isArray(own.required)) own.required = (own.required as string[]).filter((r) => r !== property);
      }
      for (const property of entry.optionalProperties ?? []) {
        if (Array.isArray(own.required)) own.required = (own.required as string[]).filter((r) => r !== property);
      }
      if (Array.isArray(own.required) && own.required.length === 0) delete own.required;
      defs[`${name}.mcp`] = copy;
      schema = { $ref: `#/$defs/${name}.mcp` };
    }
    result[entry.name] = schema;
  }
  return { entries: result, $defs: defs };
}

/** The generated module's text. */
export function generatedModule(bundle: { entries: Record<string, Json>; $defs: Record<string, Json> }): string {
  return [
    '// Generated by src/ucp/schemas/bundle-schemas.ts from the official UCP 2026-04-08 JSON Schemas',
    '// (Universal-Commerce-Protocol/ucp, tag v2026-04-08, source/; Apache License 2.0). Do not edit.',
    'import type { SchemaBundle } from "./schema-bundle.js";',
    '',
    `export const ucpSchemaBundle: SchemaBundle = ${JSON.stringify(bundle, null, 1)};`,
    '',
  ].join('\n');
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const source = process.argv[2];
  if (!source) {
    console.error('usage: bundle-schemas.ts PATH/TO/ucp-2026-04-08/source');
    process.exit(2);
  }
  const bundle = bundleUcpSchemas((file) => readFileSync(path.join(source, file), 'utf8'));
  const target = fileURLToPath(new URL('./ucp-schemas.generated.ts', import.meta.url));
  writeFileSync(target, generatedModule(bundle));
  console.log(`wrote ${target}`);
}
