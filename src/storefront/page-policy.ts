/**
 * The Content-Security-Policy of every HTML page the store serves, built here and nowhere else. A page loads its one
 * inline style sheet (allowed by its hash), pictures from this store and from the origins the catalog's images are
 * served from, and, by their full URLs, the shop's script or the passkey scripts; its forms and requests go back to
 * this store, and nothing may frame it.
 */
import type { CatalogSnapshot } from '../catalog/catalog.js';
import { catalogUrlOrigin, isHttpsOrigin } from '../catalog/catalog-urls.js';
import { PAGE_STYLE_SOURCE, PASSKEY_SCRIPTS, SHOP_SCRIPT } from './pages/layout.js';

/** What a page runs: nothing (the policy and message pages), the shop's script, or the passkey scripts. */
export type PageScripts = 'none' | 'shop' | 'passkeys';

/** A policy this builder made: the pages' answers take no other string. */
export type PagePolicy = string & { readonly builtBy: 'page-policy' };

const SCRIPT_PATHS: Record<Exclude<PageScripts, 'none'>, readonly string[]> = { shop: [SHOP_SCRIPT], passkeys: PASSKEY_SCRIPTS };

/**
 * A page's policy from this store's origin and the catalog's image origins. An image origin that is not exactly
 * `https://host[:port]` is left out (the import refuses such addresses; one stored before it did cannot add a
 * directive or a wildcard here).
 */
export function contentSecurityPolicy(ownOrigin: string, imageOrigins: readonly string[], scripts: PageScripts): PagePolicy {
  const images = imageOrigins.filter(isHttpsOrigin).map((origin) => ` ${origin}`).join('');
  const scriptSources = scripts === 'none' ? [] : [`script-src ${SCRIPT_PATHS[scripts].map((path) => `${ownOrigin}${path}`).join(' ')}`, "connect-src 'self'"];
  return [
    "default-src 'none'",
    `style-src ${PAGE_STYLE_SOURCE}`,
    `img-src 'self' data:${images}`,
    ...scriptSources,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ') as PagePolicy;
}

/** The origins other than this store's that the catalog's images are served from (an imported catalog's CDN), sorted. */
export function catalogImageOrigins(snapshot: CatalogSnapshot): string[] {
  return snapshot.derived(imageOrigins);
}

function imageOrigins(snapshot: CatalogSnapshot): string[] {
  const own = new URL(snapshot.baseUrl).origin;
  const origins = new Set<string>();
  for (const product of snapshot.products) {
    for (const image of product.images) {
      const origin = catalogUrlOrigin(image.src);
      if (origin !== undefined && origin !== own) origins.add(origin);
    }
  }
  return [...origins].sort();
}

// One builder per kind, so each snapshot keeps each policy once (the product page is benchmarked).
const POLICY_OF: Record<PageScripts, (snapshot: CatalogSnapshot) => PagePolicy> = {
  none: (snapshot) => contentSecurityPolicy(new URL(snapshot.baseUrl).origin, catalogImageOrigins(snapshot), 'none'),
  shop: (snapshot) => contentSecurityPolicy(new URL(snapshot.baseUrl).origin, catalogImageOrigins(snapshot), 'shop'),
  passkeys: (snapshot) => contentSecurityPolicy(new URL(snapshot.baseUrl).origin, catalogImageOrigins(snapshot), 'passkeys'),
};

/** The policy of a page showing `snapshot`'s catalog that runs `scripts`: computed once per snapshot. */
export function pagePolicy(snapshot: CatalogSnapshot, scripts: PageScripts): PagePolicy {
  return snapshot.derived(POLICY_OF[scripts]);
}
