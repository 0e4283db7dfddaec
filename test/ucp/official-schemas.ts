/**
 * The official UCP 2026-04-08 JSON Schemas, vendored unchanged in vendor/ucp-2026-04-08/source/ (Apache-2.0),
 * for validating what the service emits. Not the service's own bundled copy.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const UCP_SOURCE = new URL('../../vendor/ucp-2026-04-08/source/', import.meta.url);

export function readOfficial(file: string): string {
  return readFileSync(new URL(file, UCP_SOURCE), 'utf8');
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
for (const folder of ['schemas', 'discovery']) {
  const root = fileURLToPath(new URL(`${folder}/`, UCP_SOURCE));
  for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.json')) continue;
    // Identified by where the file lies: the published $id of the discovery schema does not match its relative refs.
    const schema = JSON.parse(readFileSync(path.join(root, file), 'utf8'));
    ajv.addSchema({ ...schema, $id: `https://ucp.dev/${folder}/${file.split(path.sep).join('/')}` });
  }
}

const BASE = 'https://ucp.dev/schemas/';
export const OfficialSchema = {
  businessProfile: 'https://ucp.dev/discovery/profile_schema.json#/$defs/business_profile',
  searchResponse: `${BASE}shopping/catalog_search.json#/$defs/search_response`,
  lookupResponse: `${BASE}shopping/catalog_lookup.json#/$defs/lookup_response`,
  getProductResponse: `${BASE}shopping/catalog_lookup.json#/$defs/get_product_response`,
  cart: `${BASE}shopping/cart.json`,
  errorResponse: `${BASE}shopping/types/error_response.json`,
  /** A checkout with the fulfillment extension, as this store answers it. */
  checkout: `${BASE}shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout`,
  order: `${BASE}shopping/order.json`,
} as const;

/** Validation errors of a value against an official schema (empty when it validates). */
export function officialSchemaErrors(ref: string, value: unknown): string[] {
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`no official schema ${ref}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** The schema a tool's structuredContent must match, by tool and by whether it reports an error. */
export function resultSchemaFor(tool: string, structured: { ucp?: { status?: string } }): string {
  if (structured.ucp?.status === 'error') return OfficialSchema.errorResponse;
  switch (tool) {
    case 'search_catalog':
      return OfficialSchema.searchResponse;
    case 'lookup_catalog':
      return OfficialSchema.lookupResponse;
    case 'get_product':
      return OfficialSchema.getProductResponse;
    case 'create_checkout':
    case 'get_checkout':
    case 'update_checkout':
    case 'complete_checkout':
    case 'cancel_checkout':
      return OfficialSchema.checkout;
    case 'get_order':
      return OfficialSchema.order;
    default:
      return OfficialSchema.cart;
  }
}
