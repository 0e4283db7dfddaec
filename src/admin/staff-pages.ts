/**
 * Staff (the owner's): who may use the admin, with which role; add a person (their single-use enrollment link is
 * shown once, on the answer to the form, never in a URL or the log; mailed too when mail is configured), revoke one
 * (after a confirmation: their sessions end at once), and, where this store's address can hold no passkey, a
 * single-use sign-in link. The same StaffService as `storefront staff`, each action in the audit log.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html, typed, type Html } from '../markup/html.js';
import { STAFF_ROLES, StaffRefused, type StaffMember, type StaffRole } from '../staff/staff.js';
import { actorOf, allowed, field, notice, postForm, seeOther, sendPage, staffOf, SECTIONS, type AdminContext, doneOf } from './admin-kit.js';
import { scrollingTable } from './admin-page-parts.js';

const STAFF = SECTIONS.staff.path;
const REVOKE = `${STAFF}/revoke`;
const SIGN_IN_LINK = `${STAFF}/sign-in-link`;
/** Longer than any address: refused unread. */
const MAX_EMAIL = 320;

const ROLE_LABELS: Record<StaffRole, string> = { owner: 'Owner', staff: 'Staff' };
const ROLE_NOTES: Record<StaffRole, string> = {
  owner: 'everything, including refunds, the catalog, imports, buyers and staff',
  staff: 'orders (capture, fulfilment, cancel), stock and deliveries',
};

const DONE: Record<string, string> = {
  revoked: 'The person was revoked: their sessions have ended and their passkeys no longer sign in.',
};

/** Where a refusal is shown: beside the add form, or beside one person's action. */
type Refusal = { at: 'add'; text: string } | { at: 'revoke' | 'sign-in-link'; email: string; text: string };

/** A link just made, shown once on the answer to the form that made it. */
interface LinkShown {
  heading: string;
  email: string;
  link: string;
  expiresAt: Date;
  /** For an enrollment: whether it was mailed to the person too. */
  mailed?: boolean;
}

interface PageState {
  status?: number;
  refusal?: Refusal;
  shown?: LinkShown;
  /** What the add form keeps after a refusal (the email typed, the role chosen). */
  typed?: { email: string; role: StaffRole };
}

const statusOf = (error: StaffRefused) => (error.code === 'invalid_email' ? 400 : 409);

function linkPanel(ctx: AdminContext, shown: LinkShown): Html {
  return html`<section class="panel" aria-labelledby="link-heading">
<h2 id="link-heading">${shown.heading}</h2>
<p role="status">${typed(shown.email)} can use this link once, until ${ctx.moments.moment(shown.expiresAt)}. It is shown only now: copy it and send it to them yourself${
    shown.mailed === true ? ' if the mail does not arrive (it was also mailed to them)' : shown.mailed === false ? ' (mail is not configured: it was not mailed)' : ''
  }.</p>
<p><label for="shown-link">Single-use link</label><br><input id="shown-link" class="shown-link" type="text" readonly value="${shown.link}" size="60" autocomplete="off" spellcheck="false"></p>
<p class="muted">Do not open it yourself: whoever opens it first ${shown.heading.startsWith('Enrollment') ? 'creates the passkey of' : 'signs in as'} ${typed(shown.email)}.</p>
</section>`;
}

function addForm(request: FastifyRequest, state: PageState): Html {
  const role = state.typed?.role ?? 'staff';
  const refusal = state.refusal?.at === 'add' ? notice('refused', state.refusal.text) : '';
  return html`<section class="panel" aria-labelledby="add-heading">
<h2 id="add-heading">Add a person</h2>
<p>They get a single-use link, valid 30 minutes, on which they create a passkey to sign in with.</p>
<ul>${STAFF_ROLES.map((option) => html`<li><strong>${ROLE_LABELS[option]}</strong>: ${ROLE_NOTES[option]}.</li>`)}</ul>
${postForm(
  staffOf(request),
  STAFF,
  html`<div class="field"><label for="add-email">Email</label><input id="add-email" name="email" type="email" required maxlength="${MAX_EMAIL}" autocomplete="off" value="${state.typed?.email ?? ''}"></div>
<div class="field"><label for="add-role">Role</label><select id="add-role" name="role">${STAFF_ROLES.map(
    (option) => html`<option value="${option}"${option === role ? html` selected` : ''}>${ROLE_LABELS[option]}</option>`,
  )}</select></div>`,
  'Add and make the link',
)}${refusal}
</section>`;
}

function memberRow(request: FastifyRequest, ctx: AdminContext, member: StaffMember, state: PageState): Html {
  const staff = staffOf(request);
  const { moments } = ctx;
  const passkeysPossible = ctx.store.staff.passkeysPossible;
  const you = member.id === staff.staffId ? html` <span class="muted">(you)</span>` : '';
  const refusedHere = state.refusal && state.refusal.at !== 'add' && state.refusal.email === member.email ? notice('refused', state.refusal.text) : '';
  const emailField = html`<input type="hidden" name="email" value="${member.email}">`;
  const actions = member.revokedAt
    ? html`<span class="muted">Revoked ${moments.moment(member.revokedAt)}</span>`
    : html`${passkeysPossible ? '' : postForm(staff, SIGN_IN_LINK, emailField, 'Make a sign-in link', { label: `Make a sign-in link for ${member.email}` })}${postForm(
        staff,
        REVOKE,
        emailField,
        'Revoke',
        { danger: true, label: `Revoke ${member.email}` },
      )}`;
  return html`<tr><td>${typed(member.email)}${you}</td><td>${ROLE_LABELS[member.role]}</td><td>${moments.moment(member.addedAt)}</td><td class="n">${
    member.passkeys
  }</td><td>${member.lastSignInAt ? moments.moment(member.lastSignInAt) : 'Never'}</td><td>${actions}${refusedHere}</td></tr>`;
}

async function staffPage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, state: PageState = {}): Promise<FastifyReply> {
  const members = await ctx.store.staff.list(ctx.store.db);
  const done = doneOf(request, DONE);
  const listed = new Set(members.map((member) => member.email));
  const refusalElsewhere = state.refusal && state.refusal.at !== 'add' && !listed.has(state.refusal.email) ? notice('refused', state.refusal.text) : '';
  return sendPage(reply, ctx, request.staff, {
    title: 'Staff',
    section: 'staff',
    status: state.status ?? 200,
    body: html`<h1>Staff</h1>
${done ? notice('done', done) : ''}${refusalElsewhere}
${state.shown ? linkPanel(ctx, state.shown) : ''}
${
  ctx.store.staff.passkeysPossible
    ? ''
    : html`<p class="notice">This store's address (BASE_URL) is an IP address, where no passkey can exist: people sign in with a single-use sign-in link (5 minutes) an owner makes here or with <code>storefront staff sign-in-link EMAIL</code>.</p>`
}
${scrollingTable(
  'staff-caption',
  `People who may use the admin (times in ${ctx.moments.timeZone})`,
  html`<tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Added</th><th scope="col" class="n">Passkeys</th><th scope="col">Last sign-in</th><th scope="col">Action</th></tr>`,
  members.map((member) => memberRow(request, ctx, member, state)),
)}
${addForm(request, state)}`,
  });
}

function confirmRevokePage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, member: StaffMember): FastifyReply {
  const emailField = html`<input type="hidden" name="email" value="${member.email}"><input type="hidden" name="confirm" value="yes">`;
  return sendPage(reply, ctx, request.staff, {
    title: 'Revoke a person',
    section: 'staff',
    narrow: true,
    body: html`<h1>Revoke ${typed(member.email)}?</h1>
<p>Their sessions end at once, their passkeys and links stop working. You can add them again later; they then enroll anew.</p>
${postForm(staffOf(request), REVOKE, emailField, `Revoke ${member.email}`, { danger: true })}
<p><a href="${STAFF}">Keep them: back to Staff</a></p>`,
  });
}

const roleOf = (raw: string): StaffRole | undefined => STAFF_ROLES.find((role) => role === raw);

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;

  admin.get(STAFF, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'staff')) return reply;
    return staffPage(request, reply, ctx);
  });

  // Add: the answer is the page with the link (not a redirect: the link is in no URL, no history, no log).
  admin.post(STAFF, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'staff')) return reply;
    const email = field(request.body, 'email').trim().slice(0, MAX_EMAIL);
    const role = roleOf(field(request.body, 'role'));
    if (!role) return staffPage(request, reply, ctx, { status: 400, refusal: { at: 'add', text: 'Choose a role: owner or staff.' }, typed: { email, role: 'staff' } });
    try {
      const added = await store.staff.add(store.db, actorOf(request), email, role);
      const mailed = (added as { mailed?: boolean }).mailed;
      return staffPage(request, reply, ctx, {
        shown: { heading: `Enrollment link for ${added.member.email}`, email: added.member.email, link: added.link, expiresAt: added.expiresAt, ...(mailed === undefined ? {} : { mailed }) },
      });
    } catch (error) {
      if (!(error instanceof StaffRefused)) throw error;
      return staffPage(request, reply, ctx, { status: statusOf(error), refusal: { at: 'add', text: error.message }, typed: { email, role } });
    }
  });

  // Revoke: a confirmation first (no script needed), then the revocation.
  admin.post(REVOKE, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'staff')) return reply;
    const email = field(request.body, 'email').trim().toLowerCase().slice(0, MAX_EMAIL);
    const member = (await store.staff.list(store.db)).find((candidate) => candidate.email === email && !candidate.revokedAt);
    if (!member) return staffPage(request, reply, ctx, { status: 409, refusal: { at: 'revoke', email, text: 'Not revoked: this person is not staff (any more).' } });
    if (field(request.body, 'confirm') !== 'yes') return confirmRevokePage(request, reply, ctx, member);
    try {
      await store.staff.revoke(store.db, actorOf(request), email);
    } catch (error) {
      if (!(error instanceof StaffRefused)) throw error;
      return staffPage(request, reply, ctx, { status: statusOf(error), refusal: { at: 'revoke', email, text: `Not revoked: ${error.message}` } });
    }
    return seeOther(reply, `${STAFF}?done=revoked`);
  });

  // A sign-in link, where no passkey can exist: shown once, on the answer.
  admin.post(SIGN_IN_LINK, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'staff')) return reply;
    const email = field(request.body, 'email').trim().toLowerCase().slice(0, MAX_EMAIL);
    if (store.staff.passkeysPossible) {
      return staffPage(request, reply, ctx, { status: 409, refusal: { at: 'sign-in-link', email, text: 'This store signs in with passkeys: sign-in links are for a store whose address is an IP address.' } });
    }
    try {
      const made = await store.staff.signInLink(store.db, actorOf(request), email);
      return staffPage(request, reply, ctx, { shown: { heading: `Sign-in link for ${email}`, email, link: made.link, expiresAt: made.expiresAt } });
    } catch (error) {
      if (!(error instanceof StaffRefused)) throw error;
      return staffPage(request, reply, ctx, { status: statusOf(error), refusal: { at: 'sign-in-link', email, text: `No link made: ${error.message}` } });
    }
  });
}
