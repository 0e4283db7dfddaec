/**
 * The one layout of every HTML page the store serves (the shop's pages, the cart and checkout, the approval,
 * order and policy pages): a header with the store's name, the shop's navigation (search, every product, the
 * cart), the page, and a footer with the merchant's contact and policies. The head carries the title, a meta
 * description, the canonical URL and Open Graph tags, and a page may add JSON-LD.
 *
 * Its only style is the one inline sheet (BASE_STYLE and each area's rules from ./styles.ts), allowed by its hash
 * in the Content-Security-Policy; no page has an inline script. The shop's pages may load one same-origin script
 * (SHOP_SCRIPT: the cart count, the variant picker) and work without it; the approval and order pages, where
 * passkeys are offered, load the passkey scripts.
 */
import { createHash } from 'node:crypto';
import type { Config, PolicyKind } from '../../config.js';
import { html, unsafeHtml, type Html } from '../../markup/html.js';
import { momentsIn, type Moments } from '../../markup/moments.js';
import { PAGE_STYLE } from './styles.js';

/** What every page needs from the store: the merchant's identity and where its pages are. */
export interface PageContext {
  storeName: string;
  /** One or two sentences on what the store is (STORE_DESCRIPTION). */
  storeDescription: string;
  /** Where shoppers reach the merchant (STORE_CONTACT_EMAIL). */
  contactEmail: string;
  /** The merchant's postal address, as lines; empty when not configured. */
  address: readonly string[];
  /** BASE_URL: canonical and Open Graph URLs are absolute. */
  baseUrl: string;
  /** Where each policy is read (config.checkout.policies). */
  policies: Record<PolicyKind, string>;
  /** Times as the pages say them: in the store's zone (STORE_TIMEZONE), the zone named. */
  moments: Moments;
}

export function pageContext(config: Config): PageContext {
  return {
    storeName: config.storeName,
    storeDescription: config.storeDescription,
    contactEmail: config.storeContactEmail,
    address: config.storeAddress,
    baseUrl: config.baseUrl,
    policies: config.checkout.policies,
    moments: momentsIn(config.storeTimeZone),
  };
}

export const POLICY_TITLES: Record<PolicyKind, string> = {
  terms_of_service: 'Terms of service',
  privacy_policy: 'Privacy policy',
  refund_policy: 'Refund policy',
  shipping_policy: 'Shipping policy',
};

/** The sheet goes in verbatim (not escaped): its hash must match the bytes the browser reads. */
const STYLE_ELEMENT_TEXT = unsafeHtml(PAGE_STYLE);

/** The sheet's hash, the only style source the pages' Content-Security-Policy allows (no 'unsafe-inline'). */
export const PAGE_STYLE_SOURCE = `'sha256-${createHash('sha256').update(PAGE_STYLE, 'utf8').digest('base64')}'`;

/**
 * The scripts a page with passkeys loads, by path: the WebAuthn helper library and the store's glue. The page's
 * policy (../page-policy.ts) names them by their full URL, so no other script of the store, inline or not, runs.
 */
export const PASSKEY_SCRIPTS = ['/checkout/webauthn.js', '/checkout/passkey.js'] as const;

/** The shop's one script (cart count, variant picker): every page works without it. */
export const SHOP_SCRIPT = '/assets/storefront.js';

export function policyLinks(policies: Record<PolicyKind, string>): Html {
  const kinds = Object.keys(POLICY_TITLES) as PolicyKind[];
  return html`<ul>${kinds.map((kind) => html`<li><a href="${policies[kind]}" rel="noreferrer">${POLICY_TITLES[kind]}</a></li>`)}</ul>`;
}

/** What a page asks of the layout. */
export interface PageParts {
  title: string;
  body: Html;
  /** The page's path (e.g. `/products/espresso`): its canonical and Open Graph URL. */
  path?: string;
  /** The meta and Open Graph description; the store's description when absent. */
  description?: string;
  /** Open Graph: `website` unless said (a product page says `product`), and an absolute image URL. */
  openGraph?: { type?: string; image?: string | null };
  /** Structured data (schema.org JSON-LD), written as a data block (not a script that runs). */
  jsonLd?: object;
  /** Approval, order, checkout pages: kept out of search engines. */
  personal?: boolean;
  /** Loads the passkey scripts (approval and order pages). */
  scripts?: boolean;
  /** A shop page: the navigation (search, all products, cart) and the shop's script. */
  shop?: boolean;
  /** The search box's current text (the search page). */
  query?: string;
  /** A wide main column (the product grids); the narrow one reads better for forms and text. */
  wide?: boolean;
}

/** JSON-LD inside a <script> data block: `<` is escaped so no text of the catalog can close the element. */
function jsonLdBlock(data: object): Html {
  return unsafeHtml(`<script type="application/ld+json">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`);
}

function shopNavigation(query: string | undefined): Html {
  return html`<nav class="shop-nav" aria-label="Shop">
<ul>
<li><a href="/collections/all">All products</a></li>
<li><a href="/cart" id="cart-link">Cart<span id="cart-count"></span></a></li>
</ul>
<form role="search" method="get" action="/search" class="site-search">
<label for="site-search-q" class="visually-hidden">Search the store</label>
<input id="site-search-q" name="q" type="search" placeholder="Search" value="${query ?? ''}" autocomplete="off" maxlength="200">
<button type="submit" class="search-button">Search</button>
</form>
</nav>`;
}

function contactBlock(context: PageContext): Html {
  return html`<p class="contact">${context.storeName} · <a href="mailto:${context.contactEmail}">${context.contactEmail}</a>${
    context.address.length > 0 ? html`<br><span class="postal">${context.address.join(', ')}</span>` : ''
  }</p>`;
}

/** A whole page; every page has one h1, which is the body's. */
export function layout(context: PageContext, page: PageParts): string {
  const description = page.description ?? context.storeDescription;
  const url = page.path === undefined ? undefined : `${context.baseUrl}${page.path}`;
  const fullTitle = page.title === context.storeName ? context.storeName : `${page.title} · ${context.storeName}`;
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${page.personal ? html`<meta name="robots" content="noindex, nofollow">` : ''}
<title>${fullTitle}</title>
<meta name="description" content="${description}">
${url ? html`<link rel="canonical" href="${url}">` : ''}
<meta property="og:site_name" content="${context.storeName}">
<meta property="og:title" content="${page.title}">
<meta property="og:description" content="${description}">
<meta property="og:type" content="${page.openGraph?.type ?? 'website'}">
${url ? html`<meta property="og:url" content="${url}">` : ''}
${page.openGraph?.image ? html`<meta property="og:image" content="${page.openGraph.image}">` : ''}
<link rel="icon" href="data:,">
<style>${STYLE_ELEMENT_TEXT}</style>
${page.jsonLd ? jsonLdBlock(page.jsonLd) : ''}
${page.scripts ? PASSKEY_SCRIPTS.map((script) => html`<script src="${script}" defer></script>`) : ''}
${page.shop ? html`<script src="${SHOP_SCRIPT}" defer></script>` : ''}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site">
<p class="store-name"><a href="/">${context.storeName}</a></p>
${page.shop ? shopNavigation(page.query) : ''}
</header>
<main id="main"${page.wide ? html` class="wide"` : ''}>
${page.body}
</main>
<footer>
${contactBlock(context)}
<nav aria-label="Store policies">${policyLinks(context.policies)}</nav>
</footer>
</body>
</html>
`.text}`;
}
