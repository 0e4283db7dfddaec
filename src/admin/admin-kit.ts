/**
 * What every admin section uses: the signed-in person on the request, pages in the admin's layout, forms that carry
 * the CSRF token, permission checks that answer 403, and the answers after a POST (303 and a notice, or the page again
 * with the refusal beside the action). Sections (dashboard-pages.ts, order-pages.ts, …) register their routes with
 * these; admin-routes.ts holds the guard that sets `request.staff` and checks every state-changing request.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatMoney } from '../catalog/types.js';
import { ErrorMessage, sendError } from '../http/errors.js';
import { html, type Html } from '../markup/html.js';
import type { Moments } from '../markup/moments.js';
import { staffMay, type StaffPermission, type StaffSession } from '../staff/staff.js';
import type { Store } from '../store.js';
import { adminContentSecurityPolicy, adminLayout, type AdminPageParts } from './admin-layout.js';

export { ADMIN, SECTIONS, type AdminSection } from './admin-layout.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person (admin routes only; the guard answers 401 before a route runs without one). */
    staff?: StaffSession;
  }
  interface FastifyContextConfig {
    /** An admin route anyone may reach (sign-in, enrollment, sign-in links, assets): the guard lets it through. */
    adminPublic?: boolean;
  }
}

/** What an admin section is given. */
export interface AdminContext {
  store: Store;
  /** Times in the store's zone (STORE_TIMEZONE), with the zone shown. */
  moments: Moments;
  /** BASE_URL's origin: the only Origin a state-changing admin request may come from. */
  origin: string;
}

/** A section's routes, registered in the admin's scope (under /admin, guarded). */
export type AdminSectionRoutes = (admin: FastifyInstance, ctx: AdminContext) => void;

/** The form field that carries the session's CSRF token. */
export const CSRF_FIELD = '_csrf';

/** The hidden field every state-changing form carries ('' for a page without a session). */
export function csrfField(staff: StaffSession | undefined): Html {
  return staff ? html`<input type="hidden" name="${CSRF_FIELD}" value="${staff.csrfToken}">` : html``;
}

/** The signed-in person of a guarded route (the guard let it through only with one). */
export function staffOf(request: FastifyRequest): StaffSession {
  if (!request.staff) throw new Error('an admin route without the guard');
  return request.staff;
}

/** The audit actor of the signed-in person. */
export function actorOf(request: FastifyRequest): { staffId: string; label: string } {
  const staff = staffOf(request);
  return { staffId: staff.staffId, label: staff.email };
}

/** Whether the client asked for JSON rather than a page (the ceremonies' fetches, API clients). */
export function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** An admin page: no-store (the guard's hook adds it to every admin answer), its CSP, never framed. */
export function sendPage(reply: FastifyReply, ctx: AdminContext, staff: StaffSession | undefined, page: AdminPageParts & { status?: number }): FastifyReply {
  return reply
    .code(page.status ?? 200)
    .header('content-security-policy', adminContentSecurityPolicy(ctx.origin, page.scripts === true))
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .type('text/html; charset=utf-8')
    .send(adminLayout(ctx.store.config.storeName, staff, csrfField(staff), page));
}

/**
 * Whether the signed-in person may do this; when not, answers 403 (a page saying so, or JSON) and returns false.
 * Checked on the POST itself, not only by hiding the form: resending an owner's form from a staff session is refused.
 */
export function allowed(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, permission: StaffPermission): boolean {
  const staff = staffOf(request);
  if (staffMay(staff.role, permission)) return true;
  const sentence = 'Your role does not allow this: ask an owner.';
  if (wantsJson(request)) sendError(reply, 403, ErrorMessage.forbidden, sentence);
  else sendPage(reply, ctx, staff, { title: 'Not allowed', status: 403, narrow: true, body: html`<h1>Not allowed</h1><p class="problem" role="alert">${sentence}</p>` });
  return false;
}

/** After a POST that changed something: 303 to the page, which shows `?done=` as a notice. */
export function seeOther(reply: FastifyReply, path: string): FastifyReply {
  return reply.code(303).header('location', path).send();
}

/** A notice above or beside an action: what was done, or why it was refused (read out by screen readers). */
export function notice(kind: 'done' | 'refused', text: string | Html): Html {
  return kind === 'done' ? html`<p class="notice" role="status">${text}</p>` : html`<p class="problem" role="alert">${text}</p>`;
}

/** A form that changes something: POST to `action` with the CSRF token, its fields, and one button. */
export function postForm(staff: StaffSession, action: string, fields: Html, button: string, options: { danger?: boolean; label?: string } = {}): Html {
  return html`<form class="action" method="post" action="${action}"${options.label ? html` aria-label="${options.label}"` : ''}>${csrfField(staff)}${fields}<button type="submit"${
    options.danger ? html` class="danger"` : ''
  }>${button}</button></form>`;
}

/** Cents as the merchant reads them ($12.50). */
export function money(cents: number, currency?: string): string {
  return formatMoney(cents, currency);
}

/** A form's field as one string ('' when absent or sent twice). */
export function field(body: unknown, name: string): string {
  if (typeof body !== 'object' || body === null) return '';
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}

/**
 * The session cookie: `__Host-` (Secure, path /, no Domain: only this host sets or reads it; browsers keep it on https
 * and on http://localhost), HttpOnly, SameSite=Strict (a request from another site carries none).
 */
export const SESSION_COOKIE = '__Host-storefront-admin';
const COOKIE_OPTIONS = 'Path=/; Secure; HttpOnly; SameSite=Strict';

/** Sets the cookie of a session just begun (sign-in, enrollment); the caller ended the one before (no fixation). */
export function setSessionCookie(reply: FastifyReply, secret: string, expiresAt: Date): FastifyReply {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return reply.header('set-cookie', `${SESSION_COOKIE}=${secret}; Max-Age=${maxAge}; ${COOKIE_OPTIONS}`);
}

/** Removes the session cookie (sign-out, or a session that ended). */
export function clearSessionCookie(reply: FastifyReply): FastifyReply {
  return reply.header('set-cookie', `${SESSION_COOKIE}=; Max-Age=0; ${COOKIE_OPTIONS}`);
}

/** The session secret the request carries, if any (only its own cookie header: nothing else names a session). */
export function sessionSecret(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === SESSION_COOKIE) {
      const value = pair.slice(at + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** What `?done=` names in a page's table of notices (its own entries only: `?done=constructor` names nothing). */
export function doneOf<T>(request: FastifyRequest, table: Readonly<Record<string, T>>): T | undefined {
  const key = (request.query as Record<string, unknown> | undefined)?.done;
  return typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : undefined;
}
