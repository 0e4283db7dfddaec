/**
 * The merchant's admin, under /admin, served by the same process as the shop. One guard for every route: a request
 * without a valid session (none, expired, ended, or a revoked person's) gets the sign-in page (401) or a 401 in JSON,
 * before any route reads or changes anything; every state-changing request must come from this store's origin and,
 * on a session, carry its CSRF token, else 403 with nothing changed; every answer is `Cache-Control: no-store`.
 * The sections (dashboard, orders, subscriptions, catalog, import, deliveries, buyers, staff, sign-in) each register their routes.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorMessage, sendError } from '../http/errors.js';
import { unstorableRequest } from '../http/storable-input.js';
import { html } from '../markup/html.js';
import { momentsIn } from '../markup/moments.js';
import type { Store } from '../store.js';
import { ADMIN } from './admin-layout.js';
import { clearSessionCookie, CSRF_FIELD, sendPage, sessionSecret, wantsJson, type AdminContext, type AdminSectionRoutes } from './admin-kit.js';
import { register as buyerPages } from './buyer-pages.js';
import { register as catalogPages } from './catalog-pages.js';
import { register as dashboardPages } from './dashboard-pages.js';
import { register as deliveryPages } from './delivery-pages.js';
import { register as importPages } from './import-pages.js';
import { register as orderPages } from './order-pages.js';
import { register as signInPages } from './sign-in-pages.js';
import { register as staffPages } from './staff-pages.js';
import { register as subscriptionPages } from './subscription-pages.js';

const SECTIONS: readonly AdminSectionRoutes[] = [signInPages, dashboardPages, orderPages, subscriptionPages, catalogPages, importPages, deliveryPages, buyerPages, staffPages];

/** The admin's scripts by file name: the WebAuthn library's browser bundle, and the admin's own from ./assets/. */
function adminScripts(): Map<string, string> {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  const scripts = new Map([['webauthn.js', readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8')]]);
  const assets = new URL('./assets/', import.meta.url);
  try {
    for (const file of ['passkey.js']) scripts.set(file, readFileSync(new URL(file, assets), 'utf8'));
  } catch {
    // the passkey glue ships with the sign-in pages
  }
  return scripts;
}

/** A form body as fields: each name once as a string, a name sent several times as its list of strings. */
function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const known = fields[name];
    fields[name] = known === undefined ? value : Array.isArray(known) ? [...known, value] : [known, value];
  }
  return fields;
}

function sameSecret(given: unknown, expected: string): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

export const adminRoutes: FastifyPluginAsync<{ store: Store }> = async (admin, { store }) => {
  const ctx: AdminContext = { store, moments: momentsIn(store.config.storeTimeZone), origin: new URL(store.config.baseUrl).origin };
  await admin.register(formbody, { parser: formFields, bodyLimit: 64 * 1024 });
  // The admin's pages are for the merchant's staff, not an interface for clients: none is in the OpenAPI document.
  admin.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

  const refuseUnsigned = (request: FastifyRequest, reply: FastifyReply, hadCookie: boolean) => {
    if (hadCookie) clearSessionCookie(reply);
    if (wantsJson(request) || request.method !== 'GET') return sendError(reply, 401, ErrorMessage.unauthorized, 'Sign in to the admin first.');
    return sendPage(reply, ctx, undefined, {
      title: 'Sign in',
      status: 401,
      narrow: true,
      body: html`<h1>Sign in</h1><p>${hadCookie ? 'Your session has ended. ' : ''}Sign in to use the admin.</p><p><a href="${ADMIN}/sign-in">Sign in</a></p>`,
    });
  };

  // Every admin answer, pages, JSON and errors alike, is for one person: never stored by a cache.
  admin.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('cache-control', 'no-store');
    done(null, payload);
  });

  // The guard: the session, before anything is read.
  admin.addHook('onRequest', async (request, reply) => {
    const secret = sessionSecret(request);
    if (secret !== undefined) request.staff = await store.staff.session(store.db, secret);
    if (request.routeOptions.config.adminPublic || request.staff) return;
    return refuseUnsigned(request, reply, secret !== undefined);
  });

  // Text PostgreSQL cannot keep (a NUL, an unpaired surrogate), in the query or a form's fields: 422 naming the field,
  // before any section reads it. An upload's file is the import's to check (its fields' rules refuse such text).
  admin.addHook('preValidation', (request, _reply, done) => {
    const multipart = request.headers['content-type']?.toLowerCase().startsWith('multipart/') === true;
    done(unstorableRequest(request.query, multipart ? undefined : request.body));
  });

  // A state-changing request comes from this store's pages: its Origin, and on a session, the session's token.
  admin.addHook('preHandler', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    if (request.headers.origin !== ctx.origin) {
      return sendError(reply, 403, ErrorMessage.forbidden, 'The request did not come from this store\'s admin pages.');
    }
    if (request.routeOptions.config.adminPublic) return;
    const token = (request.body as Record<string, unknown> | undefined)?.[CSRF_FIELD] ?? request.headers['x-csrf-token'];
    if (!request.staff || !sameSecret(token, request.staff.csrfToken)) {
      return sendError(reply, 403, ErrorMessage.forbidden, 'The form is out of date or did not come from this admin: reload the page and try again.');
    }
  });

  const scripts = adminScripts();
  admin.get<{ Params: { file: string } }>(`${ADMIN}/assets/:file`, { config: { adminPublic: true, rateLimit: 'admin' }, schema: { hide: true } }, async (request, reply) => {
    const script = scripts.get(request.params.file);
    if (script === undefined) return sendError(reply, 404, ErrorMessage.notFound, 'No such file.');
    return reply.type('text/javascript; charset=utf-8').send(script);
  });

  for (const section of SECTIONS) section(admin, ctx);
};
