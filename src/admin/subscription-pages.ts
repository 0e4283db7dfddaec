/**
 * Subscriptions in the admin: the list (the deliveries coming up, then every subscription by state and buyer, 50 a
 * page) and a subscription's page with the merchant's one action, Cancel, as a plain form. It calls the same domain
 * change as `storefront subscriptions cancel` (store.subscriptions), as the signed-in person (the service records the
 * audit entry in the change's own transaction, and mails the buyer); a refusal is the page again with the refusal
 * beside the form and nothing changed (409), success 303 back to the page with a notice. Staff run subscriptions as
 * they run orders: the section needs the 'orders' permission (canceling moves no money).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html } from '../markup/html.js';
import { SubscriptionNotFound, SubscriptionRefused } from '../subscriptions/subscription-service.js';
import { parseMailbox } from '../fields/mailbox.js';
import { staffMay } from '../staff/staff.js';
import { actorOf, allowed, doneOf, field, seeOther, sendPage, staffOf, SECTIONS, type AdminContext } from './admin-kit.js';
import { DONE, SUBSCRIPTIONS, subscriptionListBody, subscriptionListQuery, subscriptionPageBody, subscriptionPath } from './subscription-view.js';

const SUBSCRIPTION = `${SUBSCRIPTIONS}/:id`;
const NEEDS = SECTIONS.subscriptions.needs;
/** Subscriptions a page of the list shows. */
export const SUBSCRIPTIONS_PER_PAGE = 50;
/** Deliveries the list names at its top. */
export const UPCOMING_LISTED = 10;
/** The longest reason the form takes (the service keeps no more: a longer one is refused, not cut). */
const MAX_REASON = 200;

/** A subscription's id as its path names it (digits only; anything else is no subscription). */
const subscriptionId = (text: string): number | undefined => (/^[1-9][0-9]{0,14}$/.test(text) ? Number(text) : undefined);

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendPage(reply, ctx, staffOf(request), {
      title: 'No such subscription',
      section: 'subscriptions',
      status: 404,
      body: html`<h1>No such subscription</h1><p>No subscription has this number. <a href="${SUBSCRIPTIONS}">All subscriptions</a></p>`,
    });

  async function subscriptionPage(request: FastifyRequest, reply: FastifyReply, id: number, status = 200, refusal?: { text: string; reason: string }): Promise<FastifyReply> {
    const details = await store.subscriptions.get(store.db, id);
    if (!details) return notFound(request, reply);
    const staff = staffOf(request);
    const done = status === 200 ? doneOf(request, DONE) : undefined;
    return sendPage(reply, ctx, staff, {
      title: `Subscription ${id}`,
      section: 'subscriptions',
      status,
      body: subscriptionPageBody({ details, staff, moments: ctx.moments, mayCancel: staffMay(staff.role, NEEDS), ...(done ? { done } : {}), ...(refusal ? { refusal } : {}) }),
    });
  }

  admin.get(SUBSCRIPTIONS, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, NEEDS)) return reply;
    const query = subscriptionListQuery(request.query as Record<string, unknown>);
    // The email as the checkout keeps it (its domain in lower case); one that is no address matches nothing.
    const email = query.email === undefined ? undefined : (parseMailbox(query.email) ?? query.email);
    const [found, upcoming] = await Promise.all([
      store.subscriptions.list(store.db, {
        ...(query.state ? { state: query.state } : {}),
        ...(email ? { email } : {}),
        ...(query.before !== undefined ? { before: query.before } : {}),
        limit: SUBSCRIPTIONS_PER_PAGE + 1,
      }),
      store.subscriptions.upcoming(store.db, UPCOMING_LISTED),
    ]);
    const rows = found.slice(0, SUBSCRIPTIONS_PER_PAGE);
    const nextBefore = found.length > SUBSCRIPTIONS_PER_PAGE ? rows.at(-1)!.id : undefined;
    return sendPage(reply, ctx, staffOf(request), {
      title: 'Subscriptions',
      section: 'subscriptions',
      body: subscriptionListBody({ query, rows, nextBefore, upcoming }, ctx.moments),
    });
  });

  admin.get<{ Params: { id: string } }>(SUBSCRIPTION, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, NEEDS)) return reply;
    const id = subscriptionId(request.params.id);
    if (id === undefined) return notFound(request, reply);
    return subscriptionPage(request, reply, id);
  });

  admin.post<{ Params: { id: string } }>(`${SUBSCRIPTION}/cancel`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, NEEDS)) return reply;
    const id = subscriptionId(request.params.id);
    if (id === undefined) return notFound(request, reply);
    const reason = field(request.body, 'reason');
    if (reason.length > MAX_REASON) {
      return subscriptionPage(request, reply, id, 400, { text: `Not canceled: the reason is at most ${MAX_REASON} characters.`, reason: reason.slice(0, 2 * MAX_REASON) });
    }
    try {
      await store.subscriptions.cancel(store.db, id, { actor: 'merchant', audit: actorOf(request) }, reason || undefined);
    } catch (error) {
      if (error instanceof SubscriptionNotFound) return notFound(request, reply);
      if (error instanceof SubscriptionRefused) return subscriptionPage(request, reply, id, 409, { text: `Not canceled: ${error.message}`, reason });
      throw error;
    }
    return seeOther(reply, `${subscriptionPath(id)}?done=canceled`);
  });
}
