/**
 * The buyer's subscription pages, in HTML: the renewal link of every renewal mail (GET leads to the delivery's
 * approval page, or says what sold out, or what became of it; a form goes on without what sold out), the
 * subscriptions page of a mailed link with a form for each change, the form that mails that link (proving the
 * email), and the way there from an order's page. Thin adapters: check the link's shape and the form's origin, call
 * the subscription service, render a page or redirect. No script runs on these pages.
 *
 * The links are capabilities (a renewal's token, a subscriptions link's secret, an order's id): they are route
 * parameters, so the request log names the route's pattern and never the link (src/http/request-log.ts); the pages
 * send no referrer. A change is a form post from this store's page (refused from another origin), for a
 * subscription of the link's email only; it answers 303 back to the page with what was done, or the page with the
 * refusal's sentence and nothing changed.
 */
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { readPersonField, fieldFaultSentence } from '../fields/person-fields.js';
import type { AddressInput } from '../checkout/shipping.js';
import type { Store } from '../store.js';
import { SubscriptionNotFound, SubscriptionRefused, type Changer, type RenewalEntry, type SubscriptionDetails } from '../subscriptions/subscription-service.js';
import type { Subscription } from '../subscriptions/subscriptions.js';
import type { Moments } from '../markup/moments.js';
import { urlencodedFields } from './form-body.js';
import { sendPersonalPage } from './page-answers.js';
import { pagePolicy } from './page-policy.js';
import { approvalPath } from './pages/approval-page.js';
import { CHECKOUT_FIELDS } from './pages/browser-checkout-page.js';
import { pageContext } from './pages/layout.js';
import { messagePage, notFoundPage } from './pages/message-page.js';
import {
  ADDRESS_FIELDS,
  SUBSCRIPTIONS_CODE_PATH,
  SUBSCRIPTIONS_PATH,
  askForLinkPage,
  changeNotice,
  isManageAction,
  linkOnItsWayPage,
  orderLinkPage,
  managePath,
  renewalApprovedPage,
  renewalClosedPage,
  renewalSoldOutPage,
  subscriptionsPage,
  type AddressField,
  type AddressFormValues,
  type ManageAction,
  type ManageRefusal,
} from './pages/subscription-pages.js';
import { pageErrorHandler } from './page-errors.js';
import { sameOriginCheck } from './same-origin.js';

/** A renewal's token and a subscriptions link's secret: 256 random bits, base64url. Anything else is not looked up. */
const LINK_SECRET = /^[A-Za-z0-9_-]{43}$/;
const ORDER_ID = /^ord_[A-Za-z0-9_-]{22}$/;
const SUBSCRIPTION_ID = /^[1-9]\d{0,14}$/;
/** The address form is the largest: a few short fields. */
const FORM_BODY_LIMIT = 16 * 1024;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const formText = (body: unknown, name: string): string => {
  const value = isRecord(body) ? body[name] : undefined;
  return typeof value === 'string' ? value : '';
};
const wholeNumber = (text: string): number | undefined => (/^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : undefined);

/** The change a page's query names, if it is one of the buyer's subscriptions: what it says. */
function noticeOf(query: unknown, list: readonly SubscriptionDetails[], moments: Moments): string | undefined {
  if (!isRecord(query)) return undefined;
  const { done, subscription } = query;
  if (!isManageAction(done) || typeof subscription !== 'string') return undefined;
  const changed = list.find((details) => String(details.subscription.id) === subscription);
  return changed ? changeNotice(done, changed, moments) : undefined;
}

/** The address form as posted, each field's text (missing: empty). */
function readAddressForm(body: unknown): AddressFormValues {
  return Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, formText(body, CHECKOUT_FIELDS[field].name)])) as AddressFormValues;
}

/** The form's values in the domain's names; what was left blank is not given. */
function addressInput(values: AddressFormValues): AddressInput {
  const given = ADDRESS_FIELDS.flatMap((field) => (values[field].trim() === '' ? [] : [[field, values[field].trim()]]));
  return { ...(Object.fromEntries(given) as AddressInput), country: 'US' };
}

const isAddressField = (field: string): field is AddressField => (ADDRESS_FIELDS as readonly string[]).includes(field);

export const subscriptionRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { db, config } = store;
  const subscriptions = store.subscriptions;
  const context = pageContext(config);
  const fromThisStore = sameOriginCheck(config.baseUrl);

  await app.register(formbody, { parser: urlencodedFields });

  const send = (reply: FastifyReply, status: number, page: string) => sendPersonalPage(reply, status, page, pagePolicy(store.catalog.snapshot, 'none'));
  const redirect = (reply: FastifyReply, location: string) => reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 303);
  const sayPage = (reply: FastifyReply, status: number, title: string, paragraphs: string[]) => send(reply, status, messagePage(context, { title, tone: 'problem', paragraphs }));

  // A person reads these answers: errors are pages too (page-errors.ts).
  app.setErrorHandler(pageErrorHandler(sayPage, { again: 'Go back to the page and try again.', unavailable: 'This page cannot be shown right now. Try again in a moment. Nothing was changed.' }));

  /** A POST from a page of another site is refused before anything is read. */
  const refusedForeign = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined =>
    fromThisStore(request)
      ? undefined
      : sayPage(reply, 403, 'Nothing was done', ['This form was sent from another website, so it was not accepted. Nothing was changed.', 'Open the link from your email and use the form on this store’s page.']);

  // --- the renewal's link ---

  const unknownRenewal = (reply: FastifyReply) => send(reply, 404, notFoundPage(context, 'No delivery has this link.'));

  const renewalAnswer = (reply: FastifyReply, token: string, entry: RenewalEntry): FastifyReply => {
    switch (entry.kind) {
      case 'approve':
        return redirect(reply, approvalPath(entry.approvalToken));
      case 'sold_out':
        return send(reply, 200, renewalSoldOutPage(context, token, entry));
      case 'approved':
        return send(reply, 200, renewalApprovedPage(context, entry));
      case 'closed':
        return send(reply, 200, renewalClosedPage(context, entry));
      case 'unknown':
        return unknownRenewal(reply);
    }
  };

  app.get<{ Params: { token: string } }>('/subscriptions/renewals/:token', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params;
    if (!LINK_SECRET.test(token)) return unknownRenewal(reply);
    return renewalAnswer(reply, token, await subscriptions.openRenewal(db, token));
  });

  app.post<{ Params: { token: string } }>(
    '/subscriptions/renewals/:token/without-sold-out',
    { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT },
    async (request, reply) => {
      const { token } = request.params;
      if (!LINK_SECRET.test(token)) return unknownRenewal(reply);
      const foreign = refusedForeign(request, reply);
      if (foreign) return foreign;
      return renewalAnswer(reply, token, await subscriptions.approveWithoutSoldOut(db, token));
    },
  );

  // --- the subscriptions page ---

  const expiredLink = (reply: FastifyReply) => send(reply, 404, askForLinkPage(context, { expired: true }));

  /** The email a subscriptions link was made for, while it works. */
  const buyerOf = async (secret: string) => (LINK_SECRET.test(secret) ? subscriptions.buyerOfManageSecret(db, secret) : undefined);

  /** The page of the link's email: its subscriptions as they are now, with what the last change did or why it was refused. */
  const managePage = async (reply: FastifyReply, status: number, secret: string, email: string, said: { query?: unknown; refusal?: ManageRefusal }) => {
    const list = await subscriptions.ofBuyer(db, email);
    const notice = noticeOf(said.query, list, context.moments);
    return send(reply, status, subscriptionsPage(context, { secret, email, subscriptions: list, maxQuantity: config.cartMaxLineQuantity, notice, refusal: said.refusal }));
  };

  app.get<{ Params: { secret: string } }>('/subscriptions/manage/:secret', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { secret } = request.params;
    const email = await buyerOf(secret);
    if (email === undefined) return expiredLink(reply);
    return managePage(reply, 200, secret, email, { query: request.query });
  });

  /** One change, as the buyer of the link: what the service does for each form. */
  const changes: Record<ManageAction, (id: number, by: Changer, body: unknown) => Promise<Subscription>> = {
    skip: (id, by) => subscriptions.skipNext(db, id, by),
    pause: (id, by) => subscriptions.pause(db, id, by),
    resume: (id, by) => subscriptions.resume(db, id, by),
    cancel: (id, by) => subscriptions.cancel(db, id, by),
    plan: (id, by, body) => {
      const plan = wholeNumber(formText(body, 'selling_plan'));
      if (plan === undefined) throw new SubscriptionRefused('plan', 'Choose how often the deliveries come.');
      return subscriptions.setPlan(db, id, by, plan);
    },
    quantity: (id, by, body) => {
      const variantId = wholeNumber(formText(body, 'variant_id'));
      const quantity = wholeNumber(formText(body, 'quantity'));
      if (variantId === undefined) throw new SubscriptionRefused('no_line', 'That item is not part of this subscription.');
      if (quantity === undefined) throw new SubscriptionRefused('quantity', 'Enter the quantity as a whole number.');
      return subscriptions.setQuantity(db, id, by, variantId, quantity);
    },
    address: (id, by, body) => subscriptions.setAddress(db, id, by, addressInput(readAddressForm(body))),
  };

  app.post<{ Params: { secret: string; id: string; action: string } }>(
    '/subscriptions/manage/:secret/:id/:action',
    { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT },
    async (request, reply) => {
      const { secret, id, action } = request.params;
      if (!isManageAction(action) || !SUBSCRIPTION_ID.test(id)) return send(reply, 404, notFoundPage(context, 'No page has this link.'));
      const foreign = refusedForeign(request, reply);
      if (foreign) return foreign;
      const email = await buyerOf(secret);
      if (email === undefined) return expiredLink(reply);
      const subscriptionId = Number(id);
      try {
        await changes[action](subscriptionId, { actor: 'buyer', email }, request.body);
      } catch (error) {
        // Not a subscription of this email: as if there were none.
        if (error instanceof SubscriptionNotFound) return send(reply, 404, notFoundPage(context, 'No subscription of yours has this link.'));
        if (!(error instanceof SubscriptionRefused)) throw error;
        const refusal: ManageRefusal = { subscriptionId, text: error.message };
        if (action === 'address') {
          const problems = error.problems.map((problem) => ({ field: isAddressField(problem.field) ? problem.field : undefined, text: problem.content }));
          refusal.address = { values: readAddressForm(request.body), problems };
        }
        return managePage(reply, action === 'address' ? 422 : 409, secret, email, { refusal });
      }
      return redirect(reply, `${managePath(secret)}?done=${action}&subscription=${subscriptionId}#subscription-${subscriptionId}-section`);
    },
  );

  // --- asking for a link, and the way from an order ---

  app.get(SUBSCRIPTIONS_PATH, { config: { rateLimit: 'page' }, schema: { hide: true } }, async (_request, reply) => send(reply, 200, askForLinkPage(context)));

  app.post<{ Body: unknown }>(SUBSCRIPTIONS_PATH, { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
    const foreign = refusedForeign(request, reply);
    if (foreign) return foreign;
    const typed = formText(request.body, 'email');
    if (typed.trim() === '') return send(reply, 422, askForLinkPage(context, { problem: 'Enter the email you subscribed with.', email: typed }));
    const read = readPersonField('email', typed.trim());
    if (read.fault) return send(reply, 422, askForLinkPage(context, { problem: `This email ${fieldFaultSentence(read.fault)}.`, email: typed }));
    await subscriptions.mailManageLink(db, read.value);
    return send(reply, 200, linkOnItsWayPage(context, read.value));
  });

  // The code of that mail, typed here: its subscriptions page, or the form again (every wrong try counts; five end it).
  app.post<{ Body: unknown }>(SUBSCRIPTIONS_CODE_PATH, { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
    const foreign = refusedForeign(request, reply);
    if (foreign) return foreign;
    const email = formText(request.body, 'email').trim();
    const code = formText(request.body, 'code').trim();
    const url = email && code ? await subscriptions.manageUrlForCode(db, email, code) : undefined;
    if (url === undefined) return send(reply, 422, linkOnItsWayPage(context, email.slice(0, CHECKOUT_FIELDS.email.max), 'That code is not right, or no longer works: codes work 15 minutes, for five tries. Ask for a new mail if needed.'));
    return redirect(reply, new URL(url).pathname);
  });

  // The order's id is the order page's capability, but agents hold it too: it earns a link mailed to the order's
  // buyer (their mailbox is the proof), asked for with a button, never the subscriptions page itself.
  app.get<{ Params: { id: string } }>('/orders/:id/subscriptions', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { id } = request.params;
    if (!ORDER_ID.test(id)) return send(reply, 404, notFoundPage(context, 'No order with subscriptions has this link.'));
    return send(reply, 200, orderLinkPage(context, `/orders/${id}/subscriptions`));
  });

  app.post<{ Params: { id: string } }>('/orders/:id/subscriptions', { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
    const { id } = request.params;
    const foreign = refusedForeign(request, reply);
    if (foreign) return foreign;
    const mailed = ORDER_ID.test(id) && (await subscriptions.mailManageLinkForOrder(db, id));
    if (!mailed) return send(reply, 404, notFoundPage(context, 'No order with subscriptions has this link.'));
    return send(reply, 200, linkOnItsWayPage(context));
  });
};
