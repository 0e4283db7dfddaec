/**
 * The bundled UCP schemas at run time: self-contained JSON Schemas for `tools/list`, and compiled
 * validators for tool input and fetched agent profiles. Compiled on first use, once per process.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ucpSchemaBundle } from './ucp-schemas.generated.js';

export type JsonSchema = { [key: string]: unknown };

export interface SchemaBundle {
  entries: Record<string, JsonSchema>;
  $defs: Record<string, unknown>;
}

export type BundledSchemaName = keyof typeof ucpSchemaBundle.entries & string;

/** A bundled schema by name (`search_request`, `cart`, …): a `$ref` into the shared definitions. */
export function bundledRef(name: string): JsonSchema {
  const entry = ucpSchemaBundle.entries[name];
  if (!entry) throw new Error(`no bundled UCP schema ${name}`);
  return entry;
}

/** Adds to a schema the `$defs` it reaches (transitively), so it stands alone. */
export function selfContained(schema: JsonSchema): JsonSchema {
  const needed: Record<string, unknown> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')) {
        const name = value.slice('#/$defs/'.length);
        if (!(name in needed)) {
          needed[name] = ucpSchemaBundle.$defs[name];
          visit(needed[name]);
        }
      } else visit(value);
    }
  };
  visit(schema);
  const sorted = Object.fromEntries(Object.keys(needed).sort().map((name) => [name, needed[name]]));
  return { ...schema, $defs: sorted };
}

const SCHEMA_KEYWORDS = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'additionalItems']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs']);

/**
 * The schema without `title` and `description` annotations (property names stay): output schemas are for
 * validating results, and the prose would only make `tools/list` several times longer for every client.
 */
export function withoutAnnotations(node: unknown): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'title' || key === 'description') continue;
    if (SCHEMA_KEYWORDS.has(key)) out[key] = withoutAnnotations(value);
    else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(withoutAnnotations);
    else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutAnnotations(v)]));
    } else out[key] = value;
  }
  return out;
}

let ajv: Ajv2020 | undefined;
const validators = new Map<JsonSchema, ValidateFunction>();

/**
 * The one Ajv of the commerce door (JSON Schema 2020-12, formats), made on first use: tool input is validated
 * with it, and the MCP SDK's servers validate with it too (ucpJsonSchemaValidator), instead of each building
 * its own. The storefront's cart bodies have their own (src/storefront/body-validation.ts: draft-07 TypeBox
 * schemas, coercion options of the app), which is another door's.
 */
export function ucpAjv(): Ajv2020 {
  if (!ajv) {
    // strictNumbers: a JSON 1e400 (parsed as Infinity) is no quantity; Ajv's default would accept it as an integer.
    ajv = new Ajv2020({ strict: false, strictNumbers: true, allErrors: false, validateSchema: false });
    (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema({ $id: 'urn:ucp:bundle', $defs: ucpSchemaBundle.$defs });
  }
  return ajv;
}

let sdkProvider: AjvJsonSchemaValidator | undefined;

/**
 * The SDK's `jsonSchemaValidator` (its Server validates elicitation answers with it), on the one Ajv: the
 * SDK's own provider class, given this instance rather than left to build a second one (made on first use).
 */
export const ucpJsonSchemaValidator: jsonSchemaValidator = {
  getValidator: (schema) => (sdkProvider ??= new AjvJsonSchemaValidator(ucpAjv())).getValidator(schema),
};

/** A validator for a schema built from bundled refs (compiled once per schema object). */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ucpAjv().compile(rebase(schema) as JsonSchema);
    validators.set(schema, validate);
  }
  return validate;
}

/** Points `#/$defs/…` refs at the shared bundle registered once in Ajv, instead of copying definitions. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$defs') continue;
    out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/') ? `urn:ucp:bundle${value}` : rebase(value);
  }
  return out;
}

/** The first validation error as a JSON path and a sentence, e.g. `/catalog/pagination/limit: must be >= 1`. */
export function firstError(validate: ValidateFunction): { path: string; message: string } {
  const error = validate.errors?.[0];
  if (!error) return { path: '', message: 'is invalid' };
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const path = missing ? `${error.instancePath}/${missing}` : error.instancePath;
  return { path: path || '/', message: missing ? 'is required' : (error.message ?? 'is invalid') };
}
