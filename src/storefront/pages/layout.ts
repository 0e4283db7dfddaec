/**
 * The one layout of the store's HTML pages (approval, order, checkout status, policies): a header with the store's
 * name, the page, and the policy links. Its only style is the inline sheet below, allowed by its hash in the
 * Content-Security-Policy. The pages load nothing else; only the approval and order pages, where passkeys are
 * offered, run a script (the store's own two files, named in their policy), and they work without it.
 */
import { createHash } from 'node:crypto';
import type { PolicyKind } from '../../config.js';
import { Html, html } from './html.js';

/** What every page needs from the store. */
export interface PageContext {
  storeName: string;
  /** Where each policy is read (config.checkout.policies). */
  policies: Record<PolicyKind, string>;
}

export const POLICY_TITLES: Record<PolicyKind, string> = {
  terms_of_service: 'Terms of service',
  privacy_policy: 'Privacy policy',
  refund_policy: 'Refund policy',
  shipping_policy: 'Shipping policy',
};

// Colours keep a contrast ratio of at least 7:1 against their background; widths work from 320 px up.
const PAGE_STYLE = [
  '*,*::before,*::after{box-sizing:border-box}',
  'html{-webkit-text-size-adjust:100%;text-size-adjust:100%}',
  'body{margin:0;background:#fff;color:#1a1a1a;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow-wrap:break-word}',
  '.site{border-bottom:1px solid #d0d0d0;padding:.75rem 1rem}',
  '.site p{margin:0;font-weight:700;font-size:1.125rem}',
  'main{max-width:44rem;margin:0 auto;padding:1rem}',
  'h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}',
  'h2{font-size:1.125rem;margin:1.5rem 0 .5rem}',
  'a{color:#0b3d91}',
  'a:focus-visible,button:focus-visible{outline:3px solid #0b3d91;outline-offset:2px}',
  'table{width:100%;border-collapse:collapse;margin:.5rem 0}',
  'caption{text-align:left;font-weight:700;padding:.25rem 0}',
  'th,td{padding:.5rem .25rem;border-bottom:1px solid #d0d0d0;text-align:left;vertical-align:top}',
  'td.n,th.n{text-align:right;white-space:nowrap}',
  '@media (max-width:24rem){table{font-size:.875rem}th,td{padding:.5rem .125rem}}',
  '.variant,.detail{display:block;color:#404040;font-size:.875rem}',
  'dl.totals{display:grid;grid-template-columns:1fr auto;gap:.25rem 1rem;margin:.5rem 0}',
  'dl.totals dt{margin:0}',
  'dl.totals dd{margin:0;text-align:right;white-space:nowrap}',
  'dl.totals .grand{font-weight:700;font-size:1.125rem}',
  'address{font-style:normal}',
  '.notice{border-left:4px solid #0b3d91;background:#eef3fb;padding:.75rem 1rem;margin:1rem 0}',
  '.problem{border-left:4px solid #8a1c1c;background:#fbeeee;padding:.75rem 1rem;margin:1rem 0}',
  '.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin:1.5rem 0}',
  'button{font:inherit;font-weight:700;min-height:2.75rem;padding:.625rem 1.25rem;border-radius:.375rem;cursor:pointer;flex:1 1 12rem}',
  'button.approve{background:#14532d;color:#fff;border:2px solid #14532d}',
  'button.decline{background:#fff;color:#8a1c1c;border:2px solid #8a1c1c}',
  'button.secondary{background:#fff;color:#0b3d91;border:2px solid #0b3d91}',
  'button:disabled{opacity:.6;cursor:default}',
  'label{display:block;font-weight:700;margin:.5rem 0 .25rem}',
  'input.code{font:inherit;font-size:1.5rem;letter-spacing:.3em;width:10ch;padding:.375rem .5rem;border:2px solid #404040;border-radius:.375rem}',
  'input.code:focus-visible{outline:3px solid #0b3d91;outline-offset:2px}',
  '.proof{border:1px solid #d0d0d0;border-radius:.5rem;padding:.25rem 1rem 1rem;margin:1.5rem 0}',
  '[hidden]{display:none!important}',
  'footer{border-top:1px solid #d0d0d0;margin-top:2rem;padding:1rem}',
  'footer ul{list-style:none;margin:0 auto;padding:0;max-width:44rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem}',
].join('');

/** The sheet goes in verbatim (not escaped): its hash must match the bytes the browser reads. */
const STYLE_ELEMENT_TEXT = new Html(PAGE_STYLE);

/** The sheet's hash, the only style source the pages' Content-Security-Policy allows (no 'unsafe-inline'). */
export const PAGE_STYLE_SOURCE = `'sha256-${createHash('sha256').update(PAGE_STYLE, 'utf8').digest('base64')}'`;

export const PAGE_CONTENT_SECURITY_POLICY =
  `default-src 'none'; style-src ${PAGE_STYLE_SOURCE}; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** The scripts a page with passkeys loads, by path: the WebAuthn helper library and the store's glue. */
export const PASSKEY_SCRIPTS = ['/checkout/webauthn.js', '/checkout/passkey.js'] as const;

/**
 * The policy of a page that loads the passkey scripts: those two files of this store (by their full URL, so no
 * other script of the store, inline or not, runs) and requests back to this store, nothing else.
 */
export const passkeyPagePolicy = (origin: string) =>
  `${PAGE_CONTENT_SECURITY_POLICY}; script-src ${PASSKEY_SCRIPTS.map((script) => `${origin}${script}`).join(' ')}; connect-src 'self'`;

export function policyLinks(policies: Record<PolicyKind, string>): Html {
  const kinds = Object.keys(POLICY_TITLES) as PolicyKind[];
  return html`<ul>${kinds.map((kind) => html`<li><a href="${policies[kind]}" rel="noreferrer">${POLICY_TITLES[kind]}</a></li>`)}</ul>`;
}

/**
 * A whole page. `personal` pages (approval, order, checkout) are kept out of search engines; every page has one
 * h1, which is the body's.
 */
export function layout(context: PageContext, page: { title: string; body: Html; personal?: boolean; scripts?: boolean }): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${page.personal ? html`<meta name="robots" content="noindex, nofollow">` : ''}
<title>${page.title} · ${context.storeName}</title>
<link rel="icon" href="data:,">
<style>${STYLE_ELEMENT_TEXT}</style>
${page.scripts ? PASSKEY_SCRIPTS.map((script) => html`<script src="${script}" defer></script>`) : ''}
</head>
<body>
<header class="site"><p>${context.storeName}</p></header>
<main>
${page.body}
</main>
<footer><nav aria-label="Store policies">${policyLinks(context.policies)}</nav></footer>
</body>
</html>
`.text}`;
}
