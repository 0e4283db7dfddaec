/**
 * The one layout of the admin's pages: the store's name, the sections (those the person's role may open), who is
 * signed in and the sign-out button, then the page. Its only style is the inline sheet allowed by its hash; a page
 * runs no script unless it asks for the passkey scripts (sign-in, enrollment), named by their full URLs in its
 * Content-Security-Policy.
 */
import { createHash } from 'node:crypto';
import { html, unsafeHtml, type Html } from '../markup/html.js';
import { staffMay, type StaffPermission, type StaffSession } from '../staff/staff.js';
import { ADMIN_STYLE } from './admin-style.js';

export const ADMIN = '/admin';

/** The admin's sections, in the order of its navigation, each with what a person needs to see it. */
export const SECTIONS = {
  dashboard: { path: ADMIN, label: 'Dashboard', needs: 'orders' },
  orders: { path: `${ADMIN}/orders`, label: 'Orders', needs: 'orders' },
  // Staff run subscriptions as they run orders: canceling one moves no money.
  subscriptions: { path: `${ADMIN}/subscriptions`, label: 'Subscriptions', needs: 'orders' },
  products: { path: `${ADMIN}/products`, label: 'Products', needs: 'stock' },
  import: { path: `${ADMIN}/import`, label: 'Import', needs: 'import' },
  deliveries: { path: `${ADMIN}/deliveries`, label: 'Deliveries', needs: 'deliveries' },
  buyers: { path: `${ADMIN}/buyers`, label: 'Buyers', needs: 'buyers' },
  staff: { path: `${ADMIN}/staff`, label: 'Staff', needs: 'staff' },
} as const satisfies Record<string, { path: string; label: string; needs: StaffPermission }>;

export type AdminSection = keyof typeof SECTIONS;

/** The scripts of the pages with passkeys (sign-in, enrollment): the WebAuthn library and the admin's glue. */
export const ADMIN_SCRIPTS = [`${ADMIN}/assets/webauthn.js`, `${ADMIN}/assets/passkey.js`] as const;

const STYLE_ELEMENT_TEXT = unsafeHtml(ADMIN_STYLE);
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(ADMIN_STYLE, 'utf8').digest('base64')}'`;

/** What the admin's pages may load: their sheet, images from anywhere over https (the catalog's, by URL), and, on the
 *  passkey pages, the two scripts; forms go back to this store; nothing frames them. */
export function adminContentSecurityPolicy(ownOrigin: string, scripts: boolean): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_SOURCE}`,
    "img-src 'self' data: https:",
    ...(scripts ? [`script-src ${ADMIN_SCRIPTS.map((path) => `${ownOrigin}${path}`).join(' ')}`, "connect-src 'self'"] : []),
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export interface AdminPageParts {
  title: string;
  body: Html;
  /** The section the page belongs to (marked in the navigation); none on the sign-in pages. */
  section?: AdminSection;
  /** Loads the passkey scripts. */
  scripts?: boolean;
  /** A narrow column (forms, sign-in). */
  narrow?: boolean;
}

function navigation(staff: StaffSession, current: AdminSection | undefined, csrf: Html): Html {
  const sections = (Object.entries(SECTIONS) as [AdminSection, (typeof SECTIONS)[AdminSection]][]).filter(([, section]) => staffMay(staff.role, section.needs));
  return html`<nav aria-label="Admin">
<ul>${sections.map(
    ([name, section]) => html`<li><a href="${section.path}"${name === current ? html` aria-current="page"` : ''}>${section.label}</a></li>`,
  )}</ul>
</nav>
<div class="who"><span>${staff.email} (${staff.role})</span>
<form method="post" action="${ADMIN}/sign-out">${csrf}<button type="submit">Sign out</button></form></div>`;
}

/** A whole admin page. `staff` is the signed-in person (undefined on the sign-in pages); `csrf` its form field. */
export function adminLayout(storeName: string, staff: StaffSession | undefined, csrf: Html, page: AdminPageParts): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="same-origin">
<title>${page.title} · ${storeName} admin</title>
<link rel="icon" href="data:,">
<style>${STYLE_ELEMENT_TEXT}</style>
${page.scripts ? ADMIN_SCRIPTS.map((script) => html`<script src="${script}" defer></script>`) : ''}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="admin">
<p class="store-name"><a href="${ADMIN}">${storeName} admin</a></p>
${staff ? navigation(staff, page.section, csrf) : ''}
</header>
<main id="main"${page.narrow ? html` class="narrow"` : ''}>
${page.body}
</main>
</body>
</html>
`.text}`;
}
