/**
 * The buyer's pages, in HTML: the approval page a checkout sends the buyer to (GET shows the order, POST approves it,
 * or declines it once the buyer confirms), the order page (an order's permalink), a checkout's page, and the policy
 * pages. Thin adapters: check the link's shape and the form's origin and token, call the checkout service, render a
 * page. No script runs on them but the passkey scripts, on the pages that offer a passkey. They show the catalog's
 * product pictures, so their img-src names where the catalog's images are served from.
 *
 * The approval form is protected twice: the GET sets a cookie (HttpOnly, SameSite=Strict, scoped to the link's
 * path) holding the approval's form secret, which the form also carries; a POST needs both and they must match,
 * and a POST from another origin is refused before anything is read. None of that proves who answers (an agent
 * holding the link can hold the cookie and the form too): the approval also needs the buyer's proof, a passkey
 * or a mailed code (buyer-proof.ts), unless the store runs APPROVAL_PROOF=link.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import cookie, { type CookieSerializeOptions } from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CART_LIFETIME_DAYS } from '../cart/cart.js';
import { MAX_CREDENTIAL_JSON, ProofRefused, type ApprovalProof } from '../checkout/buyer-proof.js';
import type { ApprovalRecord } from '../checkout/checkout-store.js';
import { approvalSummary, checkoutDigest, type Channel, type CheckoutView } from '../checkout/checkout.js';
import { reusablePaymentSession } from '../checkout/approval-payment.js';
import type { ApprovalState } from '../checkout/approval-service.js';
import { APPROVAL_SENTENCES } from '../checkout/approval-validity.js';
import { shippingOptions } from '../checkout/shipping.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { ErrorMessage, StorefrontError, UNAVAILABLE_RETRY_AFTER_SECONDS, databaseErrorName, notFound } from '../http/errors.js';
import { readOrder, type Order } from '../orders/orders.js';
import { DeliveryError } from '../outbox/delivery.js';
import type { Store } from '../store.js';
import { urlencodedFields } from './form-body.js';
import { pagePolicy, type PageScripts } from './page-policy.js';
import {
  approvalClosedPage,
  approvalCompletedPage,
  approvalDeclinedPage,
  approvalPath,
  approvalPendingPage,
  declineConfirmPage,
  offersPasskey,
  orderPath,
  type PendingApproval,
} from './pages/approval-page.js';
import { checkoutPage } from './pages/checkout-page.js';
import { PASSKEY_SCRIPTS, pageContext, type PageContext } from './pages/layout.js';
import { messagePage, notFoundPage } from './pages/message-page.js';
import { orderPage } from './pages/order-page.js';
import { policyKindOf, policyPage, type PolicyFacts } from './pages/policy-pages.js';
import { sameOriginCheck } from './same-origin.js';

/**
 * The shapes of the links' secrets as the domain makes them (256 random bits for an approval, 128 for an order or
 * a checkout, base64url): anything else is a 404 without a query. An order is never looked up by its number here.
 */
const APPROVAL_TOKEN = /^[A-Za-z0-9_-]{43}$/;
const ORDER_ID = /^ord_[A-Za-z0-9_-]{22}$/;
const CHECKOUT_ID = /^chk_[A-Za-z0-9_-]{22}$/;

/** The cookie holding the approval form's secret; its path is the one approval link it belongs to. */
const FORM_COOKIE = 'approval_form';
/** The cookie that lets the browser which proved an email with a code create a passkey; its path is the order's page. */
const ENROLL_COOKIE = 'passkey_enroll';
const ENROLL_COOKIE_SECONDS = 15 * 60;
/** A few short fields, or a passkey's assertion. */
const FORM_BODY_LIMIT = 16 * 1024;

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
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

/** `decline` asks the buyer to confirm (a page); `decline_confirmed`, that page's form, cancels the checkout. */
const FORM_ACTIONS = ['approve', 'decline', 'decline_confirmed', 'send_code'] as const;
type FormAction = (typeof FORM_ACTIONS)[number];
const isFormAction = (value: unknown): value is FormAction => (FORM_ACTIONS as readonly unknown[]).includes(value);

interface ApprovalForm {
  action: FormAction;
  formToken: string;
  digest: string;
  proof: ApprovalProof;
}

const shortString = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;

/** The approval form's fields, or undefined when it is not that form. */
function approvalForm(body: unknown): ApprovalForm | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { action, form_token: formToken, digest = '', code, challenge_id: challengeId, assertion } = body as Record<string, unknown>;
  if (!isFormAction(action)) return undefined;
  if (!shortString(formToken, 200) || formToken.length === 0) return undefined;
  if (!shortString(digest, 200)) return undefined;
  let proof: ApprovalProof = { kind: 'none' };
  if (shortString(assertion, MAX_CREDENTIAL_JSON) && assertion !== '' && shortString(challengeId, 100) && challengeId !== '') {
    proof = { kind: 'passkey', challengeId, response: assertion };
  } else if (shortString(code, 40) && code.trim() !== '') {
    proof = { kind: 'code', code };
  }
  return { action, formToken, digest, proof };
}

/** The browser bundle of @simplewebauthn/browser (its package exports only the module entry; the bundle sits beside it). */
function webauthnBundle(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

const SCRIPTS: Record<(typeof PASSKEY_SCRIPTS)[number], string> = {
  '/checkout/webauthn.js': webauthnBundle(),
  '/checkout/passkey.js': readFileSync(new URL('./pages/assets/passkey.js', import.meta.url), 'utf8'),
};

const UNKNOWN_APPROVAL = APPROVAL_SENTENCES.unknown;
/** A payment provider's session id as it comes back in the success URL (Stripe: cs_test_… or cs_live_…). */
const PAYMENT_SESSION = /^cs_[A-Za-z0-9_]{1,250}$/;
/** When to try again after the mail server or the payment provider did not answer. */
const OUTSIDE_SERVICE_RETRY_AFTER_SECONDS = 30;
const PAYMENT_NOT_CONFIRMED = 'We could not confirm your payment with the payment provider just now, so your order is not placed yet.';

export const approvalRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { checkouts, approvals, db, config } = store;
  const context: PageContext = pageContext(config);
  // How orders are paid, as the approval, order and policy pages say it (src/payments/payment-words.ts).
  const payment = config.payment;
  const facts: PolicyFacts = { checkout: config.checkout, payment, cartLifetimeDays: CART_LIFETIME_DAYS };
  const secure = config.baseUrl.startsWith('https:');

  await app.register(cookie);
  await app.register(formbody, { parser: urlencodedFields });

  /** The policy of a page now: the current catalog's image origins (a new import may bring others). */
  const policyNow = (scripts: PageScripts) => pagePolicy(store.catalog.snapshot, scripts);

  // Every answer of these routes, pages and errors alike, is private, unframed and loads nothing but its own style and
  // the catalog's pictures (a page offering passkeys also its two scripts: its route sets that policy, and it stands).
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(PAGE_HEADERS);
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', policyNow('none'));
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

  /** The passkey enrollment's cookie: this order's page only. */
  const enrollCookie = (orderId: string): CookieSerializeOptions => ({ path: orderPath(orderId), httpOnly: true, sameSite: 'strict', secure });

  /** A POST from a page of another site is refused (the browser says where the form was): the check POST /checkout makes. */
  const fromThisStore = sameOriginCheck(config.baseUrl);

  /** The approval page as it stands (what proof it offers now), with what the last answer did. */
  const pendingPage = async (reply: FastifyReply, status: number, token: string, approval: ApprovalRecord, view: CheckoutView, said: Partial<Pick<PendingApproval, 'problem' | 'notice'>> = {}) => {
    const offer = await store.buyerProof.offer(db, approval, view.record.buyer.email ?? '');
    const page: PendingApproval = {
      token,
      view,
      formToken: approval.formSecret,
      // The digest of exactly what this page shows; approving anything else is refused.
      digest: checkoutDigest(approvalSummary(view)),
      expiresAt: approval.expiresAt,
      now: new Date(),
      payment,
      offer,
      proven: approval.provenAt !== null,
      // Its payment page while it takes payment long enough; else the button, which begins another.
      paymentUrl: view.record.status === 'complete_in_progress' ? reusablePaymentSession(approval, new Date())?.url : undefined,
      ...said,
    };
    if (offersPasskey(offer)) reply.header('content-security-policy', policyNow('passkeys'));
    return sendPage(reply, status, approvalPendingPage(context, page));
  };

  /** A JSON request of the passkey script: from this store's page, carrying the cookie it was given. */
  const refuseForeign = (request: FastifyRequest) => {
    if (!fromThisStore(request)) throw new StorefrontError(403, ErrorMessage.forbidden, 'This request was sent from another website, so it was not accepted.');
  };

  app.get<{ Params: { token: string } }>('/checkout/approve/:token', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params;
    if (!APPROVAL_TOKEN.test(token)) return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    const state = await approvals.approvalState(db, token);
    switch (state.kind) {
      case 'unknown':
        return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
      case 'completed':
        return sendPage(reply, 200, approvalCompletedPage(context, state.order));
      case 'closed':
        return sendPage(reply, 409, approvalClosedPage(context, { title: 'This approval link no longer works', ...state }));
      case 'pending':
        reply.setCookie(FORM_COOKIE, state.approval.formSecret, formCookie(token, state.approval.expiresAt));
        return pendingPage(reply, 200, token, state.approval, state.view);
    }
  });

  app.post<{ Params: { token: string } }>('/checkout/approve/:token', { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
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

    if (form.action === 'send_code') return sendCode(request, reply, token, form);
    if (form.action === 'decline') return confirmDecline(reply, token, form);

    let outcome;
    try {
      outcome = form.action === 'approve' ? await approvals.approve(db, token, form.formToken, form.digest, form.proof) : await approvals.decline(db, token, form.formToken);
    } catch (error) {
      // The answer of the order's commit may be what was lost: whether it was placed is not known here.
      if (isDatabaseUnavailable(error)) {
        return unavailablePage(request, reply, error, [
          'Your answer could not be confirmed, so we cannot say yet whether it was recorded.',
          'Open this approval link again in a moment: it shows your order if it was placed, and the form again if not. One link never places two orders.',
        ]);
      }
      // Say only what is known: an order that was placed is shown; otherwise nothing was kept.
      const state = await approvals.approvalState(db, token);
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
      // A code proved the email: this browser may create a passkey, on the order's page, for a short while.
      if (outcome.enrollment) {
        reply.setCookie(ENROLL_COOKIE, outcome.enrollment, { ...enrollCookie(outcome.order.id), maxAge: ENROLL_COOKIE_SECONDS });
      }
      return reply.redirect(orderPath(outcome.order.id), 303);
    }
    if (outcome.kind === 'unproven') {
      // The proof was missing or wrong: the same page again, saying why; nothing else changed.
      const state = await approvals.approvalState(db, token);
      if (state.kind === 'pending') return pendingPage(reply, 403, token, state.approval, state.view, { problem: outcome.reason });
      if (state.kind === 'completed') return reply.redirect(orderPath(state.order.id), 303);
      if (state.kind === 'unknown') return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
      return sendPage(reply, 409, approvalClosedPage(context, { title: 'Your order was not placed', reason: state.reason, changes: state.changes, view: state.view }));
    }
    if (outcome.kind === 'declined') {
      reply.clearCookie(FORM_COOKIE, formCookie(token));
      return sendPage(reply, 200, approvalDeclinedPage(context, channelOf(await approvals.approvalState(db, token))));
    }
    // Proven: back to the page, which now links to the payment page (a plain link: no other origin in its policy).
    if (outcome.kind === 'paying') return reply.redirect(approvalPath(token), 303);
    if (outcome.kind === 'unavailable') {
      const state = await approvals.approvalState(db, token);
      reply.header('retry-after', String(OUTSIDE_SERVICE_RETRY_AFTER_SECONDS));
      if (state.kind === 'pending') return pendingPage(reply, 503, token, state.approval, state.view, { problem: outcome.reason });
      return sendPage(reply, 503, messagePage(context, { title: 'Your order was not placed', tone: 'problem', paragraphs: [outcome.reason] }));
    }
    const state = await approvals.approvalState(db, token);
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

  // The payment page sends the buyer back here: paid (the order is placed once the hold is confirmed), or left without paying.
  app.get<{ Params: { token: string }; Querystring: { session_id?: string } }>(
    '/checkout/approve/:token/paid',
    { config: { rateLimit: 'page' }, schema: { hide: true } },
    async (request, reply) => {
      const { token } = request.params;
      const sessionId = typeof request.query.session_id === 'string' ? request.query.session_id : '';
      if (!APPROVAL_TOKEN.test(token) || !PAYMENT_SESSION.test(sessionId)) return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
      let outcome;
      try {
        outcome = await approvals.completePayment(db, sessionId, token);
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        // The payment provider did not answer: nothing is placed twice, so the buyer (or its event) may ask again.
        request.log.warn({ cause: (error as Error)?.name ?? 'error' }, 'payment not confirmed: the provider did not answer');
        reply.header('retry-after', String(OUTSIDE_SERVICE_RETRY_AFTER_SECONDS));
        return sendPage(reply, 503, messagePage(context, { title: 'Your payment is being confirmed', tone: 'problem', paragraphs: [PAYMENT_NOT_CONFIRMED, 'Reload this page in a moment: it shows your order once it is placed. One approval never places two orders, and nothing is charged twice.'] }));
      }
      if (outcome.kind === 'unknown') return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
      if (outcome.kind === 'open') return reply.redirect(approvalPath(token), 303);
      if (outcome.kind === 'placed') {
        if (outcome.placedNow) logPlaced(request, outcome.order);
        reply.clearCookie(FORM_COOKIE, formCookie(token));
        if (outcome.enrollment) reply.setCookie(ENROLL_COOKIE, outcome.enrollment, { ...enrollCookie(outcome.order.id), maxAge: ENROLL_COOKIE_SECONDS });
        return reply.redirect(orderPath(outcome.order.id), 303);
      }
      const state = await approvals.approvalState(db, token);
      if (state.kind === 'pending') return pendingPage(reply, 409, token, state.approval, state.view, { problem: outcome.reason });
      return sendPage(reply, 409, approvalClosedPage(context, { title: 'Your order was not placed', reason: outcome.reason, changes: outcome.changes, view: state.kind === 'closed' ? state.view : undefined }));
    },
  );

  app.get<{ Params: { token: string } }>('/checkout/approve/:token/payment-canceled', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { token } = request.params;
    if (!APPROVAL_TOKEN.test(token)) return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    await approvals.paymentCanceled(db, token);
    return reply.redirect(approvalPath(token), 303);
  });

  /** Once per order, with nothing personal: the merchant's log says an order came in (storefront orders show N has the rest). */
  const logPlaced = (request: FastifyRequest, order: Order) =>
    request.log.info({ order_number: order.number, total: order.total, currency: order.currency, channel: order.channel }, 'order placed');

  /** Who prepared the checkout an approval link belongs to (the words of its pages); an agent when it is not known. */
  const channelOf = (state: ApprovalState): Channel => (state.kind === 'pending' || state.kind === 'closed' ? state.view?.record.channel : undefined) ?? 'agent';

  /** The decline button: nothing is canceled yet; a page asks the buyer to confirm, with the form that does. */
  async function confirmDecline(reply: FastifyReply, token: string, form: ApprovalForm) {
    const state = await approvals.approvalState(db, token);
    if (state.kind === 'unknown') return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    if (state.kind === 'completed') return sendPage(reply, 409, approvalCompletedPage(context, state.order, 'This order was already placed, so it can no longer be declined here.'));
    if (state.kind === 'closed') return sendPage(reply, 409, approvalClosedPage(context, { title: 'Your answer was not recorded', ...state }));
    const { approval, view } = state;
    if (!sameSecret(approval.formSecret, form.formToken)) return pendingPage(reply, 403, token, approval, view, { problem: 'This form has expired. Use this page again.' });
    return sendPage(reply, 200, declineConfirmPage(context, { token, view, formToken: approval.formSecret, digest: checkoutDigest(approvalSummary(view)) }));
  }

  /** The person asked for a code (the button): mailed to the checkout's buyer email, within the limits. */
  async function sendCode(request: FastifyRequest, reply: FastifyReply, token: string, form: ApprovalForm) {
    const state = await approvals.approvalState(db, token);
    if (state.kind === 'completed') return reply.redirect(orderPath(state.order.id), 303);
    if (state.kind === 'unknown') return sendPage(reply, 404, notFoundPage(context, UNKNOWN_APPROVAL));
    if (state.kind === 'closed') return sendPage(reply, 409, approvalClosedPage(context, { title: 'No code was sent', ...state }));
    const { approval, view } = state;
    if (!sameSecret(approval.formSecret, form.formToken)) return pendingPage(reply, 403, token, approval, view, { problem: 'This form has expired. Use this page again.' });
    let sent;
    try {
      sent = await store.buyerProof.sendCode(db, approval, view.record.buyer.email ?? '', { total: view.totals.total, items: view.lines.reduce((n, priced) => n + priced.line.quantity, 0) });
    } catch (error) {
      if (error instanceof ProofRefused) return pendingPage(reply, 409, token, approval, view, { problem: error.message });
      if (isDatabaseUnavailable(error)) throw error;
      // The mail server did not take it. Its answer can quote the address, so the log gets only the failure's kind.
      request.log.warn({ cause: error instanceof DeliveryError ? error.logReason : 'mail error' }, 'approval code not sent');
      reply.header('retry-after', String(OUTSIDE_SERVICE_RETRY_AFTER_SECONDS));
      return pendingPage(reply, 503, token, approval, view, { problem: 'We could not send the code just now. Try again in a moment.' });
    }
    if (sent.kind === 'limited') {
      reply.header('retry-after', String(sent.minutes * 60));
      return pendingPage(reply, 429, token, approval, view, { problem: `Too many codes; try in ${sent.minutes} ${sent.minutes === 1 ? 'minute' : 'minutes'}.` });
    }
    // Back to the page (a reload does not send another code): it now asks for the code.
    return reply.redirect(approvalPath(token), 303);
  }

  // The passkey script asks for a challenge bound to this approval (JSON in, JSON out).
  app.post<{ Params: { token: string }; Body: Record<string, unknown> | undefined }>('/checkout/approve/:token/passkey', { config: { rateLimit: 'approval-post' }, schema: { hide: true }, bodyLimit: 1024 }, async (request, reply) => {
    const { token } = request.params;
    if (!APPROVAL_TOKEN.test(token)) throw notFound(UNKNOWN_APPROVAL);
    refuseForeign(request);
    const { form_token: formToken } = request.body ?? {};
    const cookieSecret = request.cookies[FORM_COOKIE];
    if (typeof formToken !== 'string' || cookieSecret === undefined || !sameSecret(cookieSecret, formToken)) {
      throw new StorefrontError(403, ErrorMessage.forbidden, 'This request could not be checked against the page you opened. Reload the page.');
    }
    const state = await approvals.approvalState(db, token);
    if (state.kind !== 'pending' || !sameSecret(state.approval.formSecret, formToken)) throw new StorefrontError(409, ErrorMessage.conflict, 'This approval link no longer places an order. Reload the page.');
    const challenge = await store.buyerProof.approvalOptions(db, state.approval, state.view.record.buyer.email ?? '');
    if (!challenge) throw new StorefrontError(409, ErrorMessage.conflict, 'No passkey can approve this order. Use the emailed code.');
    return reply.send({ challenge_id: challenge.challengeId, options: challenge.options });
  });

  app.get<{ Params: { id: string } }>('/orders/:id', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { id } = request.params;
    const order = ORDER_ID.test(id) ? await readOrder(db, id) : undefined;
    if (!order) return sendPage(reply, 404, notFoundPage(context, 'No order has this link.'));
    const offerPasskey = (await store.buyerProof.enrollment(db, request.cookies[ENROLL_COOKIE], order.id)) !== undefined;
    if (offerPasskey) reply.header('content-security-policy', policyNow('passkeys'));
    // The option's estimate as the checkout offered it (an order keeps the option's id, title and price).
    const deliveryEstimate = shippingOptions(config.checkout, order.subtotal).find((option) => option.id === order.shippingOption.id)?.description;
    const snapshot = store.catalog.snapshot;
    return sendPage(reply, 200, orderPage(context, order, { offerPasskey, deliveryEstimate, productOf: (id) => snapshot.productById(id), captureOn: payment.captureOn }));
  });

  /** The enrollment cookie of this order's page, or a 403 (JSON) saying the offer is not open here. */
  const enrollmentSecret = (request: FastifyRequest<{ Params: { id: string } }>): string => {
    refuseForeign(request);
    const secret = request.cookies[ENROLL_COOKIE];
    if (!ORDER_ID.test(request.params.id) || secret === undefined) {
      throw new StorefrontError(403, ErrorMessage.forbidden, 'A passkey can be created only right after an order was approved with a code, from that browser.');
    }
    return secret;
  };

  app.post<{ Params: { id: string } }>('/orders/:id/passkey/options', { config: { rateLimit: 'page' }, schema: { hide: true }, bodyLimit: 1024 }, async (request, reply) => {
    const registration = await store.buyerProof.registrationOptions(db, enrollmentSecret(request), request.params.id);
    if (!registration) throw new StorefrontError(403, ErrorMessage.forbidden, 'This offer to create a passkey has ended.');
    return reply.send({ challenge_id: registration.challengeId, options: registration.options });
  });

  app.post<{ Params: { id: string }; Body: Record<string, unknown> | undefined }>('/orders/:id/passkey', { config: { rateLimit: 'page' }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
    const secret = enrollmentSecret(request);
    const { challenge_id: challengeId, response } = request.body ?? {};
    if (!shortString(challengeId, 100) || !shortString(response, MAX_CREDENTIAL_JSON)) {
      throw new StorefrontError(422, ErrorMessage.invalidParameter, 'Send challenge_id and response (the new credential as JSON).');
    }
    try {
      const passkey = await store.buyerProof.register(db, secret, request.params.id, challengeId, response);
      reply.clearCookie(ENROLL_COOKIE, enrollCookie(request.params.id));
      request.log.info('passkey registered');
      return reply.code(201).send({ registered: true, passkey: { id: passkey.id, created_at: passkey.createdAt.toISOString() } });
    } catch (error) {
      if (error instanceof ProofRefused) throw new StorefrontError(409, ErrorMessage.conflict, error.message);
      throw error;
    }
  });

  for (const [script, source] of Object.entries(SCRIPTS)) {
    app.get(script, { config: { rateLimit: 'other' }, schema: { hide: true } }, (_request, reply) => reply.type('text/javascript; charset=utf-8').send(source));
  }

  app.get<{ Params: { id: string } }>('/checkouts/:id', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { id } = request.params;
    const checkout = CHECKOUT_ID.test(id) ? await checkouts.get(db, id) : undefined;
    if (!checkout) return sendPage(reply, 404, notFoundPage(context, 'No checkout has this link.'));
    return sendPage(reply, 200, checkoutPage(context, checkout.view));
  });

  app.get<{ Params: { kind: string } }>('/policies/:kind', { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const kind = policyKindOf(request.params.kind);
    if (!kind) {
      throw notFound(`No policy is called ${request.params.kind.slice(0, 60)}; the policies are terms-of-service, privacy-policy, refund-policy and shipping-policy.`);
    }
    return sendPage(reply, 200, policyPage(context, kind, facts));
  });
};
