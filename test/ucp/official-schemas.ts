/**
 * The official UCP JSON Schemas of both releases the store speaks, vendored unchanged (Apache-2.0):
 * 2026-04-08 in vendor/ucp-2026-04-08/source/ and 2026-08-25 in vendor/ucp-2026-08-25/source/, for validating
 * what the service emits. Not the service's own bundled copy.
 *
 * The unversioned exports (`OfficialSchema`, `officialSchemaErrors`, `resultSchemaFor` without a version,
 * `UCP_SOURCE`, `readOfficial`) are 2026-04-08, as they always were; the versioned ones (`OfficialSchemas[version]`,
 * `officialSchemaErrorsFor`, `resultSchemaFor(tool, structured, version)`) take the release. Each release has its
 * own Ajv instance: both publish their schemas under the same `https://ucp.dev/schemas/...` $ids.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PROJECT_ROOT_URL } from '../helpers/project-root.js';

/** The UCP releases whose schemas are vendored, oldest first. */
export const UCP_RELEASES = ['2026-04-08', '2026-08-25'] as const;
export type UcpRelease = (typeof UCP_RELEASES)[number];

export function isUcpRelease(value: unknown): value is UcpRelease {
  return (UCP_RELEASES as readonly unknown[]).includes(value);
}

/** The vendored `source/` folder of each release. */
export const UCP_SOURCES: Record<UcpRelease, URL> = {
  '2026-04-08': new URL('vendor/ucp-2026-04-08/source/', PROJECT_ROOT_URL),
  '2026-08-25': new URL('vendor/ucp-2026-08-25/source/', PROJECT_ROOT_URL),
};

/** The 2026-04-08 source folder. */
export const UCP_SOURCE = UCP_SOURCES['2026-04-08'];

/** A file of a release's vendored source, as text (`file` relative to source/). */
export function readOfficialFor(version: UcpRelease, file: string): string {
  return readFileSync(new URL(file, UCP_SOURCES[version]), 'utf8');
}

/** A file of the 2026-04-08 vendored source, as text. */
export function readOfficial(file: string): string {
  return readOfficialFor('2026-04-08', file);
}

/** One Ajv per release, holding every schema of its source's schemas/ (and, for 2026-04-08, discovery/) folder. */
function releaseAjv(version: UcpRelease): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  for (const folder of ['schemas', 'discovery']) {
    const root = fileURLToPath(new URL(`${folder}/`, UCP_SOURCES[version]));
    if (!existsSync(root)) continue; // 2026-08-25 has no discovery/: its profile schema is schemas/profile.json
    for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).sort()) {
      if (!file.endsWith('.json')) continue;
      // Identified by where the file lies: the published $id of the 2026-04-08 discovery schema does not match its
      // relative refs. (The 2026-08-25 files' $ids are their locations already.)
      const schema = JSON.parse(readFileSync(path.join(root, file), 'utf8'));
      ajv.addSchema({ ...schema, $id: `https://ucp.dev/${folder}/${file.split(path.sep).join('/')}` });
    }
  }
  return ajv;
}

const ajvs: Record<UcpRelease, Ajv2020> = {
  '2026-04-08': releaseAjv('2026-04-08'),
  '2026-08-25': releaseAjv('2026-08-25'),
};

/** The schemas a store's answers are checked against, by what they are. */
export interface OfficialSchemaRefs {
  businessProfile: string;
  /** An agent's profile (a platform profile). */
  platformProfile: string;
  searchResponse: string;
  lookupResponse: string;
  getProductResponse: string;
  cart: string;
  errorResponse: string;
  /** A checkout with the fulfillment extension, as this store answers it. */
  checkout: string;
  order: string;
}

const BASE = 'https://ucp.dev/schemas/';

/** The schema refs of each release (resolved by that release's Ajv only). */
export const OfficialSchemas = {
  '2026-04-08': {
    businessProfile: 'https://ucp.dev/discovery/profile_schema.json#/$defs/business_profile',
    platformProfile: 'https://ucp.dev/discovery/profile_schema.json#/$defs/platform_profile',
    searchResponse: `${BASE}shopping/catalog_search.json#/$defs/search_response`,
    lookupResponse: `${BASE}shopping/catalog_lookup.json#/$defs/lookup_response`,
    getProductResponse: `${BASE}shopping/catalog_lookup.json#/$defs/get_product_response`,
    cart: `${BASE}shopping/cart.json`,
    errorResponse: `${BASE}shopping/types/error_response.json`,
    checkout: `${BASE}shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout`,
    order: `${BASE}shopping/order.json`,
  },
  '2026-08-25': {
    businessProfile: `${BASE}profile.json#/$defs/business_schema`,
    platformProfile: `${BASE}profile.json#/$defs/platform_schema`,
    searchResponse: `${BASE}shopping/catalog_search.json#/$defs/search_response`,
    lookupResponse: `${BASE}shopping/catalog_lookup.json#/$defs/lookup_response`,
    getProductResponse: `${BASE}shopping/catalog_lookup.json#/$defs/get_product_response`,
    cart: `${BASE}shopping/cart.json`,
    errorResponse: `${BASE}common/types/error_response.json`,
    checkout: `${BASE}shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout`,
    order: `${BASE}shopping/order.json`,
  },
} as const satisfies Record<UcpRelease, OfficialSchemaRefs>;

/** The 2026-04-08 schema refs (what the tests written before 2026-08-25 import). */
export const OfficialSchema = OfficialSchemas['2026-04-08'];

/** Validation errors of a value against an official schema of a release (empty when it validates). */
export function officialSchemaErrorsFor(version: UcpRelease, ref: string, value: unknown): string[] {
  const validate = ajvs[version].getSchema(ref);
  if (!validate) throw new Error(`no official ${version} schema ${ref}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** Validation errors of a value against an official 2026-04-08 schema (empty when it validates). */
export function officialSchemaErrors(ref: string, value: unknown): string[] {
  return officialSchemaErrorsFor('2026-04-08', ref, value);
}

/**
 * The schema a tool's structuredContent must match, by tool and by whether it reports an error, in the given
 * release (2026-04-08 when none is given). Pass the ref to `officialSchemaErrorsFor` with the same release.
 */
export function resultSchemaFor(tool: string, structured: { ucp?: { status?: string } }, version: UcpRelease = '2026-04-08'): string {
  const schemas: OfficialSchemaRefs = OfficialSchemas[version];
  if (structured.ucp?.status === 'error') return schemas.errorResponse;
  switch (tool) {
    case 'search_catalog':
      return schemas.searchResponse;
    case 'lookup_catalog':
      return schemas.lookupResponse;
    case 'get_product':
      return schemas.getProductResponse;
    case 'create_checkout':
    case 'get_checkout':
    case 'update_checkout':
    case 'complete_checkout':
    case 'cancel_checkout':
      return schemas.checkout;
    case 'get_order':
      return schemas.order;
    default:
      return schemas.cart;
  }
}

/** Errors of a tool's structuredContent against its release's schema for that tool (empty when it validates). */
export function toolResultErrors(version: UcpRelease, tool: string, structured: { ucp?: { status?: string } }): string[] {
  return officialSchemaErrorsFor(version, resultSchemaFor(tool, structured, version), structured);
}

/**
 * Errors of a tool's structuredContent against the schema of the release it says it is in (`ucp.version`); an answer
 * naming no release this store speaks is an error itself.
 */
export function answerSchemaErrors(tool: string, structured: { ucp?: { status?: string; version?: string } }): string[] {
  const version = structured.ucp?.version;
  if (!isUcpRelease(version)) return [`ucp.version ${JSON.stringify(version)} is not a release this store speaks`];
  return toolResultErrors(version, tool, structured);
}
