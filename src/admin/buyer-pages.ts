/**
 * Buyers with passkeys (the owner's): each buyer's passkeys with their kind, when they were made and last used, and
 * Revoke, for all of a buyer's passkeys or one of them; the same removal as `storefront buyers revoke EMAIL [ID]`,
 * written to the audit log in its transaction. The buyer proves the next order with a mailed code, or a new passkey.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../audit/audit-log.js';
import { allPasskeys, deletePasskeys, type StoredPasskey } from '../checkout/buyer-proof-store.js';
import { normalEmail } from '../checkout/buyer-proof.js';
import { html, typed, type Html } from '../markup/html.js';
import { actorOf, allowed, field, notice, postForm, seeOther, sendPage, staffOf, SECTIONS, type AdminContext, doneOf } from './admin-kit.js';
import { scrollingTable } from './admin-page-parts.js';

const BUYERS = SECTIONS.buyers.path;
const REVOKE = `${BUYERS}/revoke`;
/** Longer than any address the checkout takes, or any credential id an authenticator makes: refused unread. */
const MAX_FIELD = 1024;

interface Buyer {
  email: string;
  passkeys: StoredPasskey[];
}

/** Where a refusal is shown: beside the buyer's Revoke (all), or beside one passkey's. */
interface Refusal {
  email: string;
  passkeyId?: string;
  text: string;
}

const DONE: Record<string, string> = {
  'revoked-one': 'The passkey was revoked: the buyer proves their next order with a code by mail, or a new passkey.',
  'revoked-all': "The buyer's passkeys were revoked: they prove their next order with a code by mail, or a new passkey.",
};

function byBuyer(passkeys: readonly StoredPasskey[]): Buyer[] {
  const buyers = new Map<string, Buyer>();
  for (const passkey of passkeys) {
    const buyer = buyers.get(passkey.email) ?? { email: passkey.email, passkeys: [] };
    buyer.passkeys.push(passkey);
    buyers.set(passkey.email, buyer);
  }
  return [...buyers.values()];
}

/** A credential id, long and meaningless to a person: its start names it on the page. */
const shortId = (id: string) => (id.length > 12 ? `${id.slice(0, 12)}…` : id);

function buyerSection(request: FastifyRequest, ctx: AdminContext, buyer: Buyer, index: number, refusal: Refusal | undefined): Html {
  const staff = staffOf(request);
  const { moments } = ctx;
  const emailField = html`<input type="hidden" name="email" value="${buyer.email}">`;
  const refusedHere = (passkeyId?: string) => (refusal && refusal.email === buyer.email && refusal.passkeyId === passkeyId ? notice('refused', refusal.text) : '');
  const rows = buyer.passkeys.map(
    (passkey) => html`<tr><td><code>${shortId(passkey.id)}</code></td><td>${passkey.deviceType === 'multiDevice' ? 'Synced' : 'This device only'}${
      passkey.backedUp ? ', backed up' : ''
    }</td><td>${moments.moment(passkey.createdAt)}</td><td>${passkey.lastUsedAt ? moments.moment(passkey.lastUsedAt) : 'Never'}</td><td>${postForm(
      staff,
      REVOKE,
      html`${emailField}<input type="hidden" name="passkey" value="${passkey.id}">`,
      'Revoke',
      { danger: true, label: `Revoke passkey ${shortId(passkey.id)} of ${buyer.email}` },
    )}${refusedHere(passkey.id)}</td></tr>`,
  );
  const count = buyer.passkeys.length;
  return html`<section class="panel" aria-labelledby="buyer-${index}">
<h2 id="buyer-${index}">${typed(buyer.email)}</h2>
<p>${count} ${count === 1 ? 'passkey' : 'passkeys'}.</p>
${scrollingTable(
  `buyer-${index}-caption`,
  html`Passkeys of ${typed(buyer.email)}`,
  html`<tr><th scope="col">Passkey</th><th scope="col">Kind</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Action</th></tr>`,
  rows,
)}
${postForm(staff, REVOKE, emailField, count === 1 ? 'Revoke this buyer’s passkey' : `Revoke all ${count} passkeys`, { danger: true, label: `Revoke every passkey of ${buyer.email}` })}${refusedHere()}
</section>`;
}

async function buyersPage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, status = 200, refusal?: Refusal): Promise<FastifyReply> {
  const buyers = byBuyer(await allPasskeys(ctx.store.db));
  const done = doneOf(request, DONE);
  const refusalShownBeside = refusal && buyers.some((buyer) => buyer.email === refusal.email && (refusal.passkeyId === undefined || buyer.passkeys.some((p) => p.id === refusal.passkeyId)));
  return sendPage(reply, ctx, request.staff, {
    title: 'Buyers',
    section: 'buyers',
    status,
    body: html`<h1>Buyers with passkeys</h1>
${done ? notice('done', done) : ''}
${refusal && !refusalShownBeside ? notice('refused', refusal.text) : ''}
<p>Buyers who prove their orders with a passkey. Revoke a passkey that was lost or is not theirs: the buyer then proves their next order with a code by mail, or creates a new passkey. Times in ${ctx.moments.timeZone}.</p>
${buyers.length ? buyers.map((buyer, index) => buyerSection(request, ctx, buyer, index, refusal)) : html`<p>No buyer holds a passkey.</p>`}`,
  });
}

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;

  admin.get(BUYERS, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'buyers')) return reply;
    return buyersPage(request, reply, ctx);
  });

  admin.post(REVOKE, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'buyers')) return reply;
    const email = normalEmail(field(request.body, 'email'));
    const passkeyId = field(request.body, 'passkey') || undefined;
    if (!email || email.length > MAX_FIELD || (passkeyId?.length ?? 0) > MAX_FIELD) {
      return buyersPage(request, reply, ctx, 400, { email, text: 'Say whose passkeys to revoke: the form was incomplete.' });
    }
    // As `storefront buyers revoke EMAIL [ID]`, with its audit entry in the same transaction.
    const removed = await store.db.transaction(async (tx) => {
      const count = await deletePasskeys(tx, email, passkeyId);
      if (count > 0) {
        await recordAudit(tx, actorOf(request), {
          action: 'buyer.revoke',
          summary: passkeyId === undefined ? `revoked ${count} ${count === 1 ? 'passkey' : 'passkeys'} of ${email}` : `revoked passkey ${shortId(passkeyId)} of ${email}`,
        });
      }
      return count;
    });
    if (removed === 0) {
      return buyersPage(request, reply, ctx, 409, {
        email,
        ...(passkeyId === undefined ? {} : { passkeyId }),
        text: passkeyId === undefined ? 'Not revoked: this buyer holds no passkey (any more).' : 'Not revoked: this buyer holds no such passkey (any more).',
      });
    }
    return seeOther(reply, `${BUYERS}?done=${passkeyId === undefined ? 'revoked-all' : 'revoked-one'}`);
  });
}
