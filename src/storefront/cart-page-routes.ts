/**
 * The cart page and the browser checkout, in HTML: GET /cart shows the browser's cart (read only: no cart is made
 * and no cookie set), GET /checkout the checkout form of that cart, and POST /checkout fills the cart's checkout
 * (prepared by a browser, moved by the buyer) and, once it has everything, asks for the buyer's approval and sends
 * the browser to the approval page: the same page, proof and transaction as an agent's checkout. Thin adapters:
 * read the cookie and the form, call the cart and checkout services, render a page. The cart's own form posts
 * (/cart/add, /cart/change, …) and the cart link /cart/c/{token} are answered in cart-routes.ts.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { PricedCart } from '../cart/cart.js';
import type { CheckoutRecord, CheckoutView } from '../checkout/checkout.js';
import { CheckoutNotFound, CheckoutRefused, type CheckoutDetails } from '../checkout/checkout-service.js';
import { CheckoutFieldRefused } from '../checkout/fields.js';
import { fieldFaultSentence } from '../fields/person-fields.js';
import { isTerminal } from '../checkout/machine.js';
import { shippingOptions, type AddressInput, type ShippingOption } from '../checkout/shipping.js';
import { checkoutTotals } from '../checkout/totals.js';
import type { Store } from '../store.js';
import { cartFromCookie, PER_CART } from './cart-cookie.js';
import { urlencodedFields } from './form-body.js';
import { sendPersonalPage } from './page-answers.js';
import { pagePolicy } from './page-policy.js';
import { approvalPath, checkoutPlanLines } from './pages/approval-page.js';
import {
  CHECKOUT_FIELDS,
  EMPTY_CHECKOUT_FORM,
  browserCheckoutPage,
  cartDisplayLines,
  checkoutProblems,
  type CheckoutField,
  type CheckoutFormValues,
  type CheckoutProblem,
} from './pages/browser-checkout-page.js';
import { CART_PATH, CHECKOUT_PATH, cartPage } from './pages/cart-page.js';
import { pageContext } from './pages/layout.js';
import { messagePage } from './pages/message-page.js';
import { pageErrorHandler } from './page-errors.js';
import { sameOriginCheck } from './same-origin.js';

/** The checkout form is a dozen short fields. */
const FORM_BODY_LIMIT = 16 * 1024;

/** The shop pages' policy: the store's script, and images from the store and the catalog's image origins. */
export const cartPagesPolicy = (store: Store) => pagePolicy(store.catalog.snapshot, 'shop');

/** The cart page for `cart` (none: the empty page), with `problem` saying why the last change was refused. */
export function sendCartPage(reply: FastifyReply, store: Store, status: number, cart: PricedCart | undefined, problem?: string): FastifyReply {
  const page = cartPage(pageContext(store.config), {
    cart,
    freeShippingOverCents: store.config.checkout.freeShippingOverCents,
    maxLineQuantity: store.config.cartMaxLineQuantity,
    problem,
  });
  return sendPersonalPage(reply, status, page, cartPagesPolicy(store));
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The form as posted: each field's text (a field missing or not text is empty); the checkout checks what it may hold. */
function readCheckoutForm(body: unknown): CheckoutFormValues {
  const posted = isRecord(body) ? body : {};
  const values = { ...EMPTY_CHECKOUT_FORM };
  for (const field of Object.keys(CHECKOUT_FIELDS) as CheckoutField[]) {
    const value = posted[CHECKOUT_FIELDS[field].name];
    if (typeof value === 'string') values[field] = value;
  }
  return values;
}

/** A text the checkout refused, beside the form field it came from (the form's fields carry the domain's names). */
function fieldProblem(error: CheckoutFieldRefused): CheckoutProblem {
  const named = error.field[0] === 'buyer' || error.field[0] === 'destination' ? error.field[1] : error.field[0];
  const field = named in CHECKOUT_FIELDS ? (named as CheckoutField) : undefined;
  return { field, text: `This ${fieldFaultSentence(error.fault)}.` };
}

/** The form's values in the domain's names; what was left blank is not given. */
function checkoutDetails(values: CheckoutFormValues): CheckoutDetails {
  const given = <K extends CheckoutField>(...fields: K[]) =>
    Object.fromEntries(fields.flatMap((field) => (values[field].trim() === '' ? [] : [[field, values[field].trim()]]))) as Partial<Record<K, string>>;
  const destination: AddressInput = {
    ...given('firstName', 'lastName', 'streetAddress', 'extendedAddress', 'locality', 'region', 'postalCode', 'phoneNumber'),
    country: 'US',
  };
  return { buyer: given('email', 'firstName', 'lastName'), destination, shippingOption: values.shippingOption.trim() || null };
}

/** What the buyer (or an agent) already gave the cart's open checkout, to fill the form with. */
function formValuesOf(record: CheckoutRecord): CheckoutFormValues {
  const destination = record.destination ?? {};
  return {
    email: record.buyer.email ?? '',
    firstName: destination.firstName ?? record.buyer.firstName ?? '',
    lastName: destination.lastName ?? record.buyer.lastName ?? '',
    streetAddress: destination.streetAddress ?? '',
    extendedAddress: destination.extendedAddress ?? '',
    locality: destination.locality ?? '',
    region: destination.region ?? '',
    postalCode: destination.postalCode ?? '',
    phoneNumber: destination.phoneNumber ?? record.buyer.phoneNumber ?? '',
    shippingOption: record.shippingOption ?? '',
  };
}

export const cartPageRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { carts, checkouts, db, config } = store;
  const context = pageContext(config);
  const fromThisStore = sameOriginCheck(config.baseUrl);

  await app.register(cookie);
  await app.register(formbody, { parser: urlencodedFields });

  /** A page that only says something, for the errors of these routes (a body too large or of another type, a failure). */
  const sayPage = (reply: FastifyReply, status: number, title: string, paragraphs: string[]) =>
    sendPersonalPage(reply, status, messagePage(context, { title, tone: 'problem', paragraphs }), cartPagesPolicy(store));

  // A person reads these answers: errors are pages too (page-errors.ts).
  app.setErrorHandler(pageErrorHandler(sayPage, { again: 'Go back to your cart and try again.', unavailable: 'This page cannot be shown right now. Try again in a moment.' }));

  const toCart = (reply: FastifyReply) => reply.header('cache-control', 'no-store').redirect(CART_PATH, 303);

  /** The browser's cart with something in it, or undefined. Reads only. */
  const cartOf = async (token: string | undefined) => {
    const cart = (await carts.findCart(db, token))?.cart;
    return cart && cart.lines.length > 0 ? cart : undefined;
  };

  app.get(CART_PATH, { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const view = await carts.findCart(db, cartFromCookie(request));
    return sendCartPage(reply, store, 200, view?.cart);
  });

  /** The checkout form: the order as it stands (the cart, or the checkout just filled) and the values to show. */
  const checkoutFormPage = (
    reply: FastifyReply,
    status: number,
    order: { cart: PricedCart; view?: CheckoutView; options: readonly ShippingOption[] },
    values: CheckoutFormValues,
    problems: readonly CheckoutProblem[],
    pendingApproval?: string,
  ) => {
    const { cart, view, options } = order;
    const selected = options.find((option) => option.id === values.shippingOption);
    const page = browserCheckoutPage(context, {
      lines: view ? checkoutPlanLines(view) : cartDisplayLines(cart),
      totals: view?.totals ?? checkoutTotals(cart.totals.totalPrice, selected?.amount, undefined),
      note: cart.note,
      attributes: cart.attributes,
      options,
      values,
      problems,
      pendingApproval,
    });
    return sendPersonalPage(reply, status, page, cartPagesPolicy(store));
  };

  app.get(CHECKOUT_PATH, { config: { rateLimit: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const cart = await cartOf(cartFromCookie(request));
    if (!cart) return toCart(reply);
    const open = await checkouts.openForCart(db, cart.token);
    const options = shippingOptions(config.checkout, cart.totals.totalPrice);
    const values = open ? formValuesOf(open.view.record) : { ...EMPTY_CHECKOUT_FORM };
    // The cheapest way is chosen until the buyer chooses another.
    if (values.shippingOption === '') values.shippingOption = options[0]?.id ?? '';
    return checkoutFormPage(reply, 200, { cart, options }, values, [], open?.approval ? approvalPath(open.approval.token) : undefined);
  });

  app.post(CHECKOUT_PATH, { config: { rateLimit: 'cart-write', rateLimitKeys: PER_CART }, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (request, reply) => {
    if (!fromThisStore(request)) {
      return sayPage(reply, 403, 'Nothing was done', [
        'This form was sent from another website, so it was not accepted. Nothing was ordered or changed.',
        'Open your cart on this store and check out from there.',
      ]);
    }
    const cart = await cartOf(cartFromCookie(request));
    if (!cart) return toCart(reply);
    const values = readCheckoutForm(request.body);
    const options = shippingOptions(config.checkout, cart.totals.totalPrice);

    let answer;
    try {
      answer = await checkouts.checkoutCart(db, cart.token, checkoutDetails(values), 'browser', 'buyer');
      if (answer.view.blockers.length === 0) answer = await checkouts.requestCompletion(db, answer.view.record.id, 'buyer');
    } catch (error) {
      // The cart was bought or emptied meanwhile.
      if (error instanceof CheckoutNotFound) return toCart(reply);
      // Nothing was stored: the form again, the field's problem beside it.
      if (error instanceof CheckoutFieldRefused) return checkoutFormPage(reply, 422, { cart, options }, values, [fieldProblem(error)]);
      if (error instanceof CheckoutRefused) return checkoutFormPage(reply, 409, { cart, options }, values, checkoutProblems([error.reason], options));
      throw error;
    }
    const { view, approval } = answer;
    if (view.record.status === 'requires_escalation' && approval) return reply.header('cache-control', 'no-store').redirect(approvalPath(approval.token), 303);
    if (isTerminal(view.record.status)) return toCart(reply);
    // Kept, but still missing something or not valid yet (a ZIP code, a state, an email; a line sold out): the form
    // again, saying what. 200, as an agent's update that leaves the checkout incomplete: what was given is kept (the
    // 4xx answers above change nothing).
    return checkoutFormPage(reply, 200, { cart, view, options: view.options }, values, checkoutProblems(view.blockers, view.options));
  });
};
