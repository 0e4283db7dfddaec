/**
 * Signing in to the admin: by passkey (the sign-in page asks for no email: the device offers the passkeys it holds
 * for this store), by a single-use sign-in link the terminal printed (where no passkey can exist), and the enrollment
 * page where a person added to the staff creates their passkey. Each success starts a new session and ends the one the
 * browser had (its cookie is never the one it had before: no fixation); signing out ends it. The JSON ceremonies are
 * driven by assets/passkey.js. Everything here is public (no session needed), rate limited as sign-in attempts; the
 * kit still refuses a POST whose Origin is not this store's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorMessage, sendError } from '../http/errors.js';
import { html, type Html } from '../markup/html.js';
import type { SessionStart } from '../staff/staff.js';
import { StaffRefused } from '../staff/staff.js';
import { ADMIN, clearSessionCookie, seeOther, sendPage, sessionSecret, setSessionCookie, wantsJson, type AdminContext } from './admin-kit.js';

const SIGN_IN = `${ADMIN}/sign-in`;
const SIGN_OUT = `${ADMIN}/sign-out`;
const PUBLIC = { adminPublic: true, rateLimit: 'admin-sign-in' } as const;

/** The sentence for a store whose address can hold no passkey. */
const NO_PASSKEYS = html`This store's address is an IP address, where passkeys cannot work. Sign in with a single-use link: whoever runs the store prints one with <code>storefront staff sign-in-link EMAIL</code>.`;

type Params = { Params: { secret: string } };

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;
  const staff = store.staff;

  /** Starts the session: the browser's earlier one ends, the cookie is the new session's. */
  const begin = async (request: FastifyRequest, reply: FastifyReply, started: SessionStart) => {
    const previous = sessionSecret(request);
    if (previous !== undefined) await staff.signOut(store.db, previous);
    setSessionCookie(reply, started.secret, started.session.expiresAt);
  };

  /** A refusal as JSON (the ceremonies' fetches): 409 with the sentence for the person. */
  const refusedJson = (reply: FastifyReply, error: unknown) => {
    if (error instanceof StaffRefused) return sendError(reply, error.code === 'passkeys_impossible' ? 409 : 403, error.code === 'passkeys_impossible' ? ErrorMessage.conflict : ErrorMessage.forbidden, error.message);
    throw error;
  };

  const credential = (body: unknown): { challengeId: string; response: string } | undefined => {
    if (typeof body !== 'object' || body === null) return undefined;
    const { challenge_id: challengeId, response } = body as Record<string, unknown>;
    return typeof challengeId === 'string' && typeof response === 'string' ? { challengeId, response } : undefined;
  };

  const linkGone = (reply: FastifyReply, what: string, status = 404) =>
    sendPage(reply, ctx, undefined, {
      title: 'Link no longer works',
      status,
      narrow: true,
      body: html`<h1>This link no longer works</h1>
<p class="problem" role="alert">This ${what} link was used already, has expired, or its person was revoked. Each link works once, for a short while.</p>
<p>Ask an owner for a new one, or <a href="${SIGN_IN}">sign in with your passkey</a>.</p>`,
    });

  // --- sign in by passkey ---

  admin.get(SIGN_IN, { config: PUBLIC }, async (request, reply) => {
    if (request.staff) return seeOther(reply, ADMIN);
    const body = staff.passkeysPossible
      ? html`<h1>Sign in</h1>
<p>Sign in to ${store.config.storeName}'s admin with your passkey: your device asks for your fingerprint, face or screen lock. No email or password is needed.</p>
<div id="passkey-sign-in" data-options="${SIGN_IN}/options" data-verify="${SIGN_IN}/verify" hidden>
<button type="button" id="passkey-button">Sign in with a passkey</button>
</div>
<p id="passkey-status" role="status" aria-live="polite"></p>
<noscript><p class="problem">Signing in with a passkey needs JavaScript in this browser. Without it, ask whoever runs the store for a sign-in link (<code>storefront staff sign-in-link EMAIL</code>).</p></noscript>
<p class="muted">No passkey yet? Open the enrollment link you were given. Lost it? Ask an owner.</p>`
      : html`<h1>Sign in</h1>
<p>${NO_PASSKEYS}</p>`;
    return sendPage(reply, ctx, undefined, { title: 'Sign in', narrow: true, scripts: staff.passkeysPossible, body });
  });

  admin.post(`${SIGN_IN}/options`, { config: PUBLIC }, async (_request, reply) => {
    try {
      const { challengeId, options } = await staff.signInOptions(store.db);
      return reply.send({ challenge_id: challengeId, options });
    } catch (error) {
      return refusedJson(reply, error);
    }
  });

  admin.post(`${SIGN_IN}/verify`, { config: PUBLIC }, async (request, reply) => {
    const given = credential(request.body);
    if (!given) return sendError(reply, 400, ErrorMessage.badRequest, 'Send challenge_id and response.');
    try {
      const started = await staff.signIn(store.db, given.challengeId, given.response);
      await begin(request, reply, started);
      return reply.send({ signed_in: true, location: ADMIN });
    } catch (error) {
      return refusedJson(reply, error);
    }
  });

  // --- sign in by a single-use link (the GET only shows a button: a link scanner opening it signs no one in) ---

  admin.get<Params>(`${SIGN_IN}/link/:secret`, { config: PUBLIC }, async (request, reply) => {
    if (!(await staff.signInLinkValid(store.db, request.params.secret))) return linkGone(reply, 'sign-in');
    return sendPage(reply, ctx, undefined, {
      title: 'Sign in',
      narrow: true,
      body: html`<h1>Sign in</h1>
<p>This single-use link signs you in to ${store.config.storeName}'s admin.</p>
<form method="post" action="${SIGN_IN}/link/${request.params.secret}"><button type="submit">Sign in</button></form>`,
    });
  });

  admin.post<Params>(`${SIGN_IN}/link/:secret`, { config: PUBLIC }, async (request, reply) => {
    let started: SessionStart;
    try {
      started = await staff.useSignInLink(store.db, request.params.secret);
    } catch (error) {
      if (error instanceof StaffRefused) return wantsJson(request) ? sendError(reply, 404, ErrorMessage.notFound, error.message) : linkGone(reply, 'sign-in');
      throw error;
    }
    await begin(request, reply, started);
    return seeOther(reply, ADMIN);
  });

  // --- enrollment: create the passkey ---

  const ENROLL = `${ADMIN}/enroll`;

  admin.get<Params>(`${ENROLL}/:secret`, { config: PUBLIC }, async (request, reply) => {
    const enrollment = await staff.enrollment(store.db, request.params.secret);
    if (!enrollment) return linkGone(reply, 'enrollment');
    const base = `${ENROLL}/${request.params.secret}`;
    const body: Html = staff.passkeysPossible
      ? html`<h1>Create your passkey</h1>
<p>You were added to ${store.config.storeName}'s admin as <strong>${enrollment.email}</strong>. Create a passkey on this device: it is how you sign in (there is no password). This link works once, until ${ctx.moments.moment(enrollment.expiresAt)}.</p>
<div id="passkey-enroll" data-options="${base}/options" data-verify="${base}/verify" hidden>
<button type="button" id="passkey-button">Create a passkey</button>
</div>
<p id="passkey-status" role="status" aria-live="polite"></p>
<noscript><p class="problem">Creating a passkey needs JavaScript in this browser.</p></noscript>`
      : html`<h1>Staff enrollment</h1>
<p>You were added to ${store.config.storeName}'s admin as <strong>${enrollment.email}</strong>.</p>
<p>${NO_PASSKEYS}</p>`;
    return sendPage(reply, ctx, undefined, { title: 'Create your passkey', narrow: true, scripts: staff.passkeysPossible, body });
  });

  admin.post<Params>(`${ENROLL}/:secret/options`, { config: PUBLIC }, async (request, reply) => {
    try {
      const { challengeId, options } = await staff.enrollmentOptions(store.db, request.params.secret);
      return reply.send({ challenge_id: challengeId, options });
    } catch (error) {
      return refusedJson(reply, error);
    }
  });

  admin.post<Params>(`${ENROLL}/:secret/verify`, { config: PUBLIC }, async (request, reply) => {
    const given = credential(request.body);
    if (!given) return sendError(reply, 400, ErrorMessage.badRequest, 'Send challenge_id and response.');
    try {
      const started = await staff.enroll(store.db, request.params.secret, given.challengeId, given.response);
      await begin(request, reply, started);
      return reply.send({ signed_in: true, location: ADMIN });
    } catch (error) {
      return refusedJson(reply, error);
    }
  });

  // --- sign out (a session's form: the guard and the CSRF check apply) ---

  admin.post(SIGN_OUT, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    const secret = sessionSecret(request);
    if (secret !== undefined) await staff.signOut(store.db, secret);
    clearSessionCookie(reply);
    return seeOther(reply, SIGN_IN);
  });
}
