/**
 * The buyer's pages, in HTML (the one place the store answers HTML rather than JSON): the approval page an agent's
 * checkout sends the buyer to (GET shows the order, POST approves or declines it), the order page (an order's
 * permalink), a checkout's page, and the policy pages. Thin adapters: check the link's shape and the form's
 * origin and token, call the checkout service, render a page. No script runs on any of them.
 *
 * The approval form is protected twice: the GET sets a cookie (HttpOnly, SameSite=Strict, scoped to the link's
 * path) holding the approval's form secret, which the form also carries; a POST needs both and they must match,
 * and a POST from another origin is refused before anything is read.
 */
import { timingSafeEqual } from 'node:crypto';
import cookie, { type CookieSerializeOptions } from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CART_LIFETIME_DAYS } from '../cart/cart.js';
import { approvalSummary, checkoutDigest } from '../checkout/checkout.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { StorefrontError, UNAVAILABLE_RETRY_AFTER_SECONDS, databaseErrorName, notFound } from '../http/errors.js';
import { readOrder } from '../orders/orders.js';
import type { Store } from '../store.js';
import { urlencodedFields } from './form-body.js';
import {
  approvalClosedPage,
  approvalCompletedPage,
  approvalDeclinedPage,
  approvalPath,
  approvalPendingPage,
  orderPath,
} from './pages/approval-page.js';
import { checkoutPage } from './pages/checkout-page.js';
import { PAGE_CONTENT_SECURITY_POLICY, type PageContext } from './pages/layout.js';
import { messagePage, notFoundPage } from './pages/message-page.js';
import { orderPage } from './pages/order-page.js';
import { policyKindOf, policyPage, type PolicyFacts } from './pages/policy-pages.js';

/**
 * The shapes of the links' secrets as the domain makes them (256 random bits for an approval, 128 for an order or
 * a checkout, base64url): anything else is a 404 without a query. An order is never looked up by its number here.
 */
const APPROVAL_TOKEN = /^[A-Za-z0-9_-]{43}$/;
const ORDER_ID = /^ord_[A-Za-z0-9_-]{22}$/;
const CHECKOUT_ID = /^chk_[A-Za-z0-9_-]{22}$/;

/** The cookie holding the approval form's secret; its path is the one approval link it belongs to. */
const FORM_COOKIE = 'approval_form';
/** The form is three short fields. */
const FORM_BODY_LIMIT = 4096;

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy': PAGE_CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
};

function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page);
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

interface ApprovalForm {
  action: 'approve' | 'decline';
  formToken: string;
  digest: string;
}

/** The approval form's fields, or undefined when it is not that form. */
function approvalForm(body: unknown): ApprovalForm | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { action, form_token: formToken, digest = '' } = body as Record<string, unknown>;
  if (action !== 'approve' && action !== 'decline') return undefined;
  if (typeof formToken !== 'string' || formToken.length === 0 || formToken.length > 200) return undefined;
  if (typeof digest !== 'string' || digest.length > 200) return undefined;
  return { action, formToken, digest };
}

const UNKNOWN_APPROVAL = 'This approval link is not valid.';

export const approvalRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { checkouts, db, config, payments } = store;
  const context: PageContext = { storeName: config.storeName, policies: config.checkout.policies };
  const payment = { title: payments.title, buyerNotice: payments.buyerNotice };
  const facts: PolicyFacts = { checkout: config.checkout, payment, cartLifetimeDays: CART_LIFETIME_DAYS };
  const ownOrigin = new URL(config.baseUrl).origin;
  const secure = config.baseUrl.startsWith('https:');

  await app.register(cookie);
  await app.register(formbody, { parser: urlencodedFields });

  // Every answer of these routes, pages and errors alike, is private, unframed and loads nothing but its own style.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(PAGE_HEADERS);
    done(null, payload);
  });

  /** The database is unavailable (restarting, unreachable): a 503 page with Retry-After, saying what the buyer can do. */
  const unavailablePage = (request: FastifyRequest, reply: FastifyReply, error: unknown, paragraphs: readonly string[]) => {
    request.log.warn({ cause: databaseErrorName(error) }, 'database unavailable: answered 503');
    reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return sendPage(reply, 503, messagePage(context, { title: 'The store is briefly unavailable', tone: 'problem', paragraphs }));
  };

  // A failure on our side is a page too; client errors (a body too large, an unknown policy) keep the store's JSON.
  app.setErrorHandler((error: FastifyError | StorefrontError, request, reply) => {
    if (error instanceof StorefrontError || (error.statusCode ?? 500) < 500) throw error;
    if (isDatabaseUnavailable(error)) {
      return unavailablePage(request, reply, error, ['This page cannot be shown right now. Try again in a moment.']);
    }
    request.log.error({ err: error }, 'page failed');
    return sendPage(
      reply,
      500,
      messagePage(context, {
        title: 'Something went wrong',
        tone: 'problem',
        paragraphs: ['Something went wrong on our side. Try again in a moment.'],
      }),
    );
  });

  const formCookie = (token: string, expiresAt?: Date): CookieSerializeOptions => ({
    path: approvalPath(token),
    httpOnly: true,
    sameSite: 'strict',
    secure,
    ...(expiresAt ? { maxAge: Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000)) } : {}),
  });

  /** A POST from a page of another site is refused (the browser says where the form was). */
  const fromThisStore = (request: FastifyRequest): boolean => {
    const origin = request.headers.origin;
    // Browsers send `Origin: null` for a form posted from a page with Referrer-Policy: no-referrer, as ours are.
    if (origin !== undefined && origin !== 'null' && origin !== ownOrigin) return false;
    const site = request.headers['sec-fetch-site'];
    return site === undefined || site === 'same-origin';
  };

  app.get<{ Params: { token: string } }>('/checkout/approve/:token', { schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params;
    if (!APPROVAL_TOKEN.test(token)) return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    const state = await checkouts.approvalState(db, token);
    switch (state.kind) {
      case 'unknown':
        return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
      case 'completed':
        return sendPage(reply, 200, approvalCompletedPage(context, state.order));
      case 'closed':
        return sendPage(reply, 409, approvalClosedPage(context, { title: 'This approval link no longer works', ...state }));
      case 'pending': {
        const { approval, view } = state;
        reply.setCookie(FORM_COOKIE, approval.formSecret, formCookie(token, approval.expiresAt));
        const page = approvalPendingPage(context, {
          token,
          view,
          formToken: approval.formSecret,
          // The digest of exactly what this page shows; approving anything else is refused.
          digest: checkoutDigest(approvalSummary(view)),
          expiresAt: approval.expiresAt,
          payment,
        });
        return sendPage(reply, 200, page);
      }
    }
  });

  app.post<{ Params: { token: string } }>('/checkout/approve/:token', { schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
    const { token } = request.params;
    if (!APPROVAL_TOKEN.test(token)) return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    const reopen = 'Open the approval link again in this browser, with cookies allowed, and answer from that page.';
    if (!fromThisStore(request)) {
      return sendPage(reply, 403, messagePage(context, { title: 'Nothing was done', tone: 'problem', paragraphs: ['This form was sent from another website, so it was not accepted. Nothing was ordered or charged.', reopen] }));
    }
    const form = approvalForm(request.body);
    if (!form) {
      return sendPage(reply, 400, messagePage(context, { title: 'Nothing was done', tone: 'problem', paragraphs: ['The form arrived incomplete, so it was not accepted. Nothing was ordered or charged.', reopen] }));
    }
    const cookieSecret = request.cookies[FORM_COOKIE];
    if (cookieSecret === undefined || !sameSecret(cookieSecret, form.formToken)) {
      return sendPage(reply, 403, messagePage(context, { title: 'Nothing was done', tone: 'problem', paragraphs: ['This form could not be checked against the page you opened, so it was not accepted. Nothing was ordered or charged.', reopen] }));
    }

    let outcome;
    try {
      outcome = form.action === 'approve' ? await checkouts.approve(db, token, form.formToken, form.digest) : await checkouts.decline(db, token, form.formToken);
    } catch (error) {
      // The answer of the order's commit may be what was lost: whether it was placed is not known here.
      if (isDatabaseUnavailable(error)) {
        return unavailablePage(request, reply, error, [
          'Your answer could not be confirmed, so we cannot say yet whether it was recorded.',
          'Open this approval link again in a moment: it shows your order if it was placed, and the form again if not. One link never places two orders.',
        ]);
      }
      // Say only what is known: an order that was placed is shown; otherwise nothing was kept.
      const state = await checkouts.approvalState(db, token);
      if (state.kind === 'completed') return reply.redirect(orderPath(state.order.id), 303);
      request.log.error({ err: error }, 'approval failed');
      return sendPage(reply, 500, messagePage(context, { title: 'Your order was not placed', tone: 'problem', paragraphs: ['Something went wrong on our side, so nothing was ordered or charged. Try again in a moment.'] }));
    }
    if (outcome.kind === 'placed') {
      // Once per order, with nothing personal: the merchant's log says an order came in (storefront orders show N has the rest).
      if (outcome.placedNow) {
        const { order } = outcome;
        request.log.info({ order_number: order.number, total: order.total, currency: order.currency, channel: order.channel }, 'order placed');
      }
      reply.clearCookie(FORM_COOKIE, formCookie(token));
      return reply.redirect(orderPath(outcome.order.id), 303);
    }
    if (outcome.kind === 'declined') {
      reply.clearCookie(FORM_COOKIE, formCookie(token));
      return sendPage(reply, 200, approvalDeclinedPage(context));
    }
    const state = await checkouts.approvalState(db, token);
    if (state.kind === 'unknown') return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    if (state.kind === 'completed') return sendPage(reply, 409, approvalCompletedPage(context, state.order, 'This order was already placed, so it can no longer be declined here.'));
    const page = approvalClosedPage(context, {
      title: form.action === 'approve' ? 'Your order was not placed' : 'Your answer was not recorded',
      reason: outcome.reason,
      changes: outcome.changes,
      view: state.view,
    });
    return sendPage(reply, 409, page);
  });

  app.get<{ Params: { id: string } }>('/orders/:id', { schema: { hide: true } }, async (request, reply) => {
    const { id } = request.params;
    const order = ORDER_ID.test(id) ? await readOrder(db, id) : undefined;
    if (!order) return sendPage(reply, 404, notFoundPage(context, 'No order has this link.'));
    return sendPage(reply, 200, orderPage(context, order));
  });

  app.get<{ Params: { id: string } }>('/checkouts/:id', { schema: { hide: true } }, async (request, reply) => {
    const { id } = request.params;
    const checkout = CHECKOUT_ID.test(id) ? await checkouts.get(db, id) : undefined;
    if (!checkout) return sendPage(reply, 404, notFoundPage(context, 'No checkout has this link.'));
    return sendPage(reply, 200, checkoutPage(context, checkout.view));
  });

  app.get<{ Params: { kind: string } }>('/policies/:kind', { schema: { hide: true } }, async (request, reply) => {
    const kind = policyKindOf(request.params.kind);
    if (!kind) {
      throw notFound(`No policy is called ${request.params.kind.slice(0, 60)}; the policies are terms-of-service, privacy-policy, refund-policy and shipping-policy.`);
    }
    return sendPage(reply, 200, policyPage(context, kind, facts));
  });
};
