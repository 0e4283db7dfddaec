/**
 * The buyer's subscription pages, in HTML with no script: the subscriptions page of a mailed link (each
 * subscription's lines, plan, state, next delivery and its price, recent orders, and a form for every change the
 * buyer may make: skip, pause, resume, cancel, the interval, a line's quantity, the address), the page asking for an
 * email to mail that link to (also shown when a link expired), and the pages of a renewal's link that do not lead
 * straight to the approval page (some items sold out, already approved, closed). Every change is a form post back to
 * the store; what a buyer or the catalog wrote is shown inert.
 */
import { intervalWords, planWords, type PlanTerms } from '../../catalog/types.js';
import type { PostalAddress } from '../../checkout/shipping.js';
import { html, typed, type Html } from '../../markup/html.js';
import type { Moments } from '../../markup/moments.js';
import type { Renewal, Subscription } from '../../subscriptions/subscriptions.js';
import { subscriptionTitle } from '../../subscriptions/subscriptions.js';
import type { RenewalEntry, SubscriptionDetails } from '../../subscriptions/subscription-service.js';
import { orderPath } from './approval-page.js';
import { CHECKOUT_FIELDS, REGIONS, type CheckoutField } from './browser-checkout-page.js';
import { layout, type PageContext } from './layout.js';
import { messagePage, sentence } from './message-page.js';
import { addressBlock, addressLines, checkoutLines, formatMoney, linesTable, type DisplayLine } from './purchase-parts.js';

export const SUBSCRIPTIONS_PATH = '/subscriptions';
export const managePath = (secret: string) => `${SUBSCRIPTIONS_PATH}/manage/${secret}`;
export const renewalPath = (token: string) => `${SUBSCRIPTIONS_PATH}/renewals/${token}`;
export const withoutSoldOutPath = (token: string) => `${renewalPath(token)}/without-sold-out`;

/** What a buyer may do to a subscription from its page: each a form posted to managePath/ID/ACTION. */
export const MANAGE_ACTIONS = ['skip', 'pause', 'resume', 'cancel', 'plan', 'quantity', 'address'] as const;
export type ManageAction = (typeof MANAGE_ACTIONS)[number];
export const isManageAction = (value: unknown): value is ManageAction => (MANAGE_ACTIONS as readonly unknown[]).includes(value);

export const manageActionPath = (secret: string, id: number, action: ManageAction) => `${managePath(secret)}/${id}/${action}`;

/** The address form's fields: the checkout form's names and lengths (the same rules read them). */
export const ADDRESS_FIELDS = ['firstName', 'lastName', 'streetAddress', 'extendedAddress', 'locality', 'region', 'postalCode', 'phoneNumber'] as const satisfies readonly CheckoutField[];
export type AddressField = (typeof ADDRESS_FIELDS)[number];
export type AddressFormValues = Record<AddressField, string>;

export const addressFormValues = (address: PostalAddress): AddressFormValues => ({
  firstName: address.firstName ?? '',
  lastName: address.lastName ?? '',
  streetAddress: address.streetAddress,
  extendedAddress: address.extendedAddress ?? '',
  locality: address.locality,
  region: address.region,
  postalCode: address.postalCode,
  phoneNumber: address.phoneNumber ?? '',
});

/** A change the subscription refused, shown at its subscription: the sentence, and the address form as it was sent. */
export interface ManageRefusal {
  subscriptionId: number;
  text: string;
  address?: { values: AddressFormValues; problems: { field: AddressField | undefined; text: string }[] };
}

export interface SubscriptionsFacts {
  secret: string;
  email: string;
  subscriptions: readonly SubscriptionDetails[];
  /** What the last change did (after its redirect). */
  notice?: string;
  refusal?: ManageRefusal;
  /** The most units of one line (CART_MAX_LINE_QUANTITY). */
  maxQuantity: number;
}

/** What the page says after a change (`?done=ACTION&subscription=ID`), in words of the subscription as it is now. */
export function changeNotice(action: ManageAction, details: SubscriptionDetails, moments: Moments): string {
  const { subscription, next } = details;
  const title = subscriptionTitle(subscription);
  const nextOne = subscription.state === 'active' ? ` The next delivery is on ${moments.day(next.dueAt)}.` : '';
  const said: Record<ManageAction, string> = {
    skip: `You skipped a delivery of ${title}.${nextOne}`,
    pause: `${title} is paused: nothing is delivered until you resume it.`,
    resume: `${title} is active again.${nextOne}`,
    cancel: `${title} is canceled: no more deliveries.`,
    plan: `${title} now comes ${intervalWords(subscription.plan.intervalUnit, subscription.plan.intervalCount)}.${nextOne}`,
    quantity: `You changed the quantities of ${title}.${nextOne}`,
    address: `${title} now ships to the new address.`,
  };
  return `${said[action]} We emailed you a confirmation.`;
}

/** A plan as a choice names it: its name, with its interval when the name does not say it, and its saving. */
export function planChoiceWords(plan: PlanTerms): string {
  const interval = intervalWords(plan.intervalUnit, plan.intervalCount);
  if (!plan.name.toLowerCase().includes(interval)) return planWords(plan);
  return plan.discountPercent > 0 ? `${plan.name}, save ${plan.discountPercent}%` : plan.name;
}

const STATE_WORDS: Record<Subscription['state'], string> = { active: 'Active', paused: 'Paused', canceled: 'Canceled' };

/** Ids of a subscription's own elements: the page lists several, each with the same forms. */
const idOf = (subscription: Pick<Subscription, 'id'>, part: string) => `subscription-${subscription.id}-${part}`;

/** How long ago and how much: an order of the subscription, linked to its page. */
function ordersList(context: PageContext, orders: SubscriptionDetails['orders']): Html | string {
  if (orders.length === 0) return '';
  return html`<h3>Recent orders</h3>
<ul>${orders.slice(0, 5).map((order) => html`<li><a href="${orderPath(order.id)}">Order #${order.number}</a>, <time datetime="${order.createdAt.toISOString()}">${context.moments.day(order.createdAt)}</time>: ${formatMoney(order.total)}</li>`)}</ul>`;
}

/** A sold-out line's mark (red, as a problem is). */
const SOLD_OUT = html`<span class="field-error">Sold out</span>`;

/** The next delivery's lines, priced today (that day's price less the plan's saving), each sold-out one marked. */
function nextDeliveryLines(details: SubscriptionDetails): DisplayLine[] {
  const { discountPercent } = details.subscription.plan;
  return details.next.lines.map((line) => ({
    product: line.title,
    variant: undefined,
    details: [
      ...(line.fullUnitPrice > line.unitPrice ? [`${formatMoney(line.fullUnitPrice)} each without the plan: you save ${discountPercent}%`] : []),
      ...(line.available ? [] : [SOLD_OUT]),
    ],
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    lineTotal: line.unitPrice * line.quantity,
    image: undefined,
  }));
}

function nextDelivery(context: PageContext, details: SubscriptionDetails): Html {
  const { subscription, next } = details;
  if (subscription.state === 'canceled') return html`<p>No more deliveries: this subscription is canceled.</p>`;
  if (subscription.state === 'paused') return html`<p>No deliveries while it is paused. Resume it to have the next one scheduled.</p>`;
  return html`<p><strong>Next delivery: <time datetime="${next.dueAt.toISOString()}">${context.moments.day(next.dueAt)}</time></strong>, at today’s prices: ${formatMoney(next.subtotal)} for the items, with shipping and tax added when you approve it.</p>
${linesTable('In the next delivery', nextDeliveryLines(details))}
<p class="detail">A few days before each delivery we email you a link to approve it. Nothing is ordered or charged until you approve.</p>`;
}

/** The plan choices: the group's plans in the catalog now, and the subscription's own terms if they are not one of them. */
function planForm(secret: string, details: SubscriptionDetails): Html | string {
  const { subscription } = details;
  const current = subscription.plan;
  const choices: PlanTerms[] = details.planChoices.some((plan) => plan.sellingPlanId === current.sellingPlanId) ? details.planChoices : [current, ...details.planChoices];
  if (choices.length < 2) return '';
  const id = idOf(subscription, 'plan');
  return html`<form method="post" action="${manageActionPath(secret, subscription.id, 'plan')}" class="checkout-form">
<div class="field">
<label for="${id}">How often</label>
<select id="${id}" name="selling_plan">
${choices.map((plan) => html`<option value="${plan.sellingPlanId}"${plan.sellingPlanId === current.sellingPlanId ? html` selected` : ''}>${planChoiceWords(plan)}</option>`)}
</select>
</div>
<div class="actions"><button type="submit" class="secondary">Change how often</button></div>
</form>`;
}

function quantityForms(secret: string, subscription: Subscription, maxQuantity: number): Html {
  return html`${subscription.lines.map((line, index) => {
    const id = idOf(subscription, `quantity-${index}`);
    return html`<form method="post" action="${manageActionPath(secret, subscription.id, 'quantity')}" class="cart-quantity">
<input type="hidden" name="variant_id" value="${line.variantId}">
<label for="${id}">${line.title}</label>
<input id="${id}" name="quantity" type="number" min="1" max="${Math.max(maxQuantity, line.quantity)}" inputmode="numeric" value="${line.quantity}" required>
<button type="submit" class="secondary">Change quantity<span class="visually-hidden"> of ${line.title}</span></button>
</form>`;
  })}`;
}

const FIELD_LABELS: Record<AddressField, { label: string; autocomplete: string; required?: boolean; type?: 'tel' }> = {
  firstName: { label: 'First name', autocomplete: 'shipping given-name' },
  lastName: { label: 'Last name', autocomplete: 'shipping family-name' },
  streetAddress: { label: 'Street address', autocomplete: 'shipping address-line1', required: true },
  extendedAddress: { label: 'Apartment, suite, etc. (optional)', autocomplete: 'shipping address-line2' },
  locality: { label: 'City', autocomplete: 'shipping address-level2', required: true },
  region: { label: 'State', autocomplete: 'shipping address-level1', required: true },
  postalCode: { label: 'ZIP code', autocomplete: 'shipping postal-code', required: true },
  phoneNumber: { label: 'Phone (optional)', autocomplete: 'shipping tel', type: 'tel' },
};

function addressField(subscription: Subscription, field: AddressField, values: AddressFormValues, error: string | undefined): Html {
  const spec = FIELD_LABELS[field];
  const id = idOf(subscription, CHECKOUT_FIELDS[field].name.replace(/_/g, '-'));
  const errorId = `${id}-error`;
  const invalid = error ? html` aria-invalid="true" aria-describedby="${errorId}"` : '';
  const control =
    field === 'region'
      ? html`<select id="${id}" name="${CHECKOUT_FIELDS.region.name}" autocomplete="${spec.autocomplete}" required${invalid}>
<option value="">Choose a state</option>
${REGIONS.map(({ code, name }) => html`<option value="${code}"${code === values.region.trim().toUpperCase() ? html` selected` : ''}>${name}</option>`)}
</select>`
      : html`<input id="${id}" name="${CHECKOUT_FIELDS[field].name}" type="${spec.type ?? 'text'}" autocomplete="${spec.autocomplete}" maxlength="${CHECKOUT_FIELDS[field].max}" value="${values[field]}"${
          field === 'postalCode' ? html` inputmode="numeric"` : ''
        }${spec.required ? html` required` : ''}${invalid}>`;
  return html`<div class="field${error ? ' field-invalid' : ''}">
<label for="${id}">${spec.label}</label>
${error ? html`<p class="field-error" id="${errorId}"><span class="visually-hidden">Error: </span>${error}</p>` : ''}
${control}
</div>`;
}

/** The address form, folded until opened (or opened, with what was sent and its problems, after a refusal). */
function addressForm(secret: string, subscription: Subscription, refused: ManageRefusal['address']): Html {
  const values = refused?.values ?? addressFormValues(subscription.shippingAddress);
  const errors = new Map<AddressField, string>();
  for (const problem of refused?.problems ?? []) if (problem.field && !errors.has(problem.field)) errors.set(problem.field, problem.text);
  return html`<details${refused ? html` open` : ''}>
<summary>Change the shipping address</summary>
<form method="post" action="${manageActionPath(secret, subscription.id, 'address')}" class="checkout-form" novalidate>
<fieldset>
<legend>New shipping address</legend>
<p class="detail">This store ships to addresses in the United States. The next deliveries go here.</p>
${ADDRESS_FIELDS.map((field) => addressField(subscription, field, values, errors.get(field)))}
</fieldset>
<div class="actions"><button type="submit" class="primary">Save the address</button></div>
</form>
</details>`;
}

/** The buttons that need nothing but a press, in one form (each button posts to its own action). */
function stateActions(secret: string, subscription: Subscription): Html {
  const path = (action: ManageAction) => manageActionPath(secret, subscription.id, action);
  const active = subscription.state === 'active';
  return html`<form method="post" action="${path(active ? 'skip' : 'resume')}" class="actions">
${active ? html`<button type="submit" class="secondary">Skip the next delivery</button>` : html`<button type="submit" class="primary">Resume</button>`}
${active ? html`<button type="submit" formaction="${path('pause')}" class="secondary">Pause</button>` : ''}
<button type="submit" formaction="${path('cancel')}" class="decline">Cancel the subscription</button>
</form>
<p class="detail">Pausing stops the deliveries until you resume. Canceling stops them for good; orders already placed are not changed.</p>`;
}

function subscriptionSection(context: PageContext, facts: SubscriptionsFacts, details: SubscriptionDetails): Html {
  const { subscription } = details;
  const { secret } = facts;
  const refusal = facts.refusal?.subscriptionId === subscription.id ? facts.refusal : undefined;
  const headingId = idOf(subscription, 'title');
  const open = subscription.state !== 'canceled';
  return html`<section class="summary" id="${idOf(subscription, 'section')}" aria-labelledby="${headingId}">
<h2 id="${headingId}">${subscriptionTitle(subscription)}</h2>
${refusal && !refusal.address?.problems.some((problem) => problem.field) ? html`<p class="problem">${refusal.text} Nothing was changed.</p>` : ''}
<p>${STATE_WORDS[subscription.state]}${
    subscription.state === 'canceled' && subscription.canceledAt
      ? html` since <time datetime="${subscription.canceledAt.toISOString()}">${context.moments.day(subscription.canceledAt)}</time>`
      : ''
  } · ${planChoiceWords(subscription.plan)}</p>
${details.planOffered ? '' : html`<p class="notice">This plan is no longer offered; your subscription keeps its terms.</p>`}
${nextDelivery(context, details)}
${open ? planForm(secret, details) : ''}
${open ? html`<h3>Quantities</h3>
${quantityForms(secret, subscription, facts.maxQuantity)}` : ''}
<h3>Ships to</h3>
${addressBlock(addressLines(subscription.shippingAddress))}
${open ? addressForm(secret, subscription, refusal?.address) : ''}
${ordersList(context, details.orders)}
${open ? stateActions(secret, subscription) : ''}
</section>`;
}

/** The subscriptions of the link's email, newest first, each with its forms. */
export function subscriptionsPage(context: PageContext, facts: SubscriptionsFacts): string {
  const title = facts.refusal ? 'Error: Your subscriptions' : 'Your subscriptions';
  const body = html`<h1>Your subscriptions</h1>
${facts.notice ? html`<p class="notice" role="status">${facts.notice}</p>` : ''}
${facts.refusal ? html`<p class="problem" role="alert"><a href="#${idOf({ id: facts.refusal.subscriptionId }, 'section')}">${facts.refusal.text}</a> Nothing was changed.</p>` : ''}
<p>Subscriptions for ${typed(facts.email)}. Every change you make here is confirmed by email.</p>
${facts.subscriptions.length === 0 ? html`<p>This email has no subscriptions.</p>` : facts.subscriptions.map((details) => subscriptionSection(context, facts, details))}
<p class="detail">This page’s address is your private link to your subscriptions: do not share it. It works for 30 days; <a href="${SUBSCRIPTIONS_PATH}">ask for a new link</a> any time.</p>`;
  return layout(context, { title, body, personal: true });
}

/** The form asking for the email to mail a subscriptions link to. */
function emailForm(problem: string | undefined, email: string): Html {
  return html`<form method="post" action="${SUBSCRIPTIONS_PATH}" class="checkout-form" novalidate>
<div class="field${problem ? ' field-invalid' : ''}">
<label for="subscriptions-email">Email</label>
${problem ? html`<p class="field-error" id="subscriptions-email-error"><span class="visually-hidden">Error: </span>${problem}</p>` : ''}
<input id="subscriptions-email" name="email" type="email" autocomplete="email" maxlength="${CHECKOUT_FIELDS.email.max}" value="${email}" required${
    problem ? html` aria-invalid="true" aria-describedby="subscriptions-email-error"` : ''
  }>
</div>
<div class="actions"><button type="submit" class="primary">Email me a link</button></div>
</form>`;
}

/**
 * GET /subscriptions (and the answer to a refused email): the email to mail the link to. `expired`: the page of a
 * subscriptions link that no longer works.
 */
export function askForLinkPage(context: PageContext, options: { expired?: boolean; problem?: string; email?: string } = {}): string {
  const title = options.expired ? 'This link has expired' : 'Your subscriptions';
  const body = html`<h1>${title}</h1>
${options.expired ? html`<p class="problem">This link to your subscriptions no longer works: each link works for 30 days.</p>` : ''}
<p>Enter the email you subscribed with. We email a link to your subscriptions page to that address: opening it proves the address is yours.</p>
${emailForm(options.problem, options.email ?? '')}`;
  return layout(context, { title: options.problem ? `Error: ${title}` : title, body, path: options.expired ? undefined : SUBSCRIPTIONS_PATH, personal: true });
}

/** From an order's page: a button that mails the order's buyer a link to their subscriptions. */
export function orderLinkPage(context: PageContext, action: string): string {
  const body = html`<h1>Your subscriptions</h1>
<p>We email a link to your subscriptions page to the address of this order: opening it proves the address is yours. There you can skip a delivery, change it, pause or cancel.</p>
<form method="post" action="${action}" class="checkout-form"><div class="actions"><button type="submit" class="primary">Email me the link</button></div></form>
<p><a href="${SUBSCRIPTIONS_PATH}">Use another email</a></p>`;
  return layout(context, { title: 'Your subscriptions', body, personal: true });
}

/** Where the code mailed with a subscriptions link is typed. */
export const SUBSCRIPTIONS_CODE_PATH = `${SUBSCRIPTIONS_PATH}/code`;

/** The form for the mailed code: the email (as given, when known) and the code, with the last try's problem. */
function codeForm(email: string, problem: string | undefined): Html {
  return html`<form method="post" action="${SUBSCRIPTIONS_CODE_PATH}" class="checkout-form" novalidate>
<div class="field">
<label for="code-email">Email</label>
<input id="code-email" name="email" type="email" autocomplete="email" maxlength="${CHECKOUT_FIELDS.email.max}" value="${email}" required>
</div>
<div class="field${problem ? ' field-invalid' : ''}">
<label for="code-code">The 6-digit code from the mail</label>
${problem ? html`<p class="field-error" id="code-code-error"><span class="visually-hidden">Error: </span>${problem}</p>` : ''}
<input id="code-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${
    problem ? html` aria-invalid="true" aria-describedby="code-code-error"` : ''
  }>
</div>
<div class="actions"><button type="submit" class="primary">Open my subscriptions</button></div>
</form>`;
}

/**
 * The answer to the email form: the same whether or not the email has subscriptions. The mail holds a link and a
 * code; the code may be typed here instead (`email`: as the buyer gave it; empty when the store mailed an order's buyer).
 */
export function linkOnItsWayPage(context: PageContext, email = '', problem?: string): string {
  const title = problem ? 'Error: Check your email' : 'Check your email';
  const body = html`<h1>Check your email</h1>
<p>If that address has subscriptions with us, a mail with a link to them is on its way (the link works for 30 days), and a code you can type here instead.</p>
${codeForm(email, problem)}
<p>No mail after a few minutes? Check the spam folder, and that the address is the one you subscribed with. <a href="${SUBSCRIPTIONS_PATH}">Use another email</a></p>`;
  return layout(context, { title, body, personal: true });
}

type RenewalOf<K extends RenewalEntry['kind']> = Extract<RenewalEntry, { kind: K }>;

const deliveryOf = (context: PageContext, renewal: Renewal) =>
  html`your delivery of <time datetime="${renewal.dueAt.toISOString()}">${context.moments.day(renewal.dueAt)}</time>`;

const manageLink = html`<p><a href="${SUBSCRIPTIONS_PATH}">Manage your subscriptions</a></p>`;

/** A renewal with sold-out lines: what it holds, the sold-out ones marked, and (when something is left) going on without them. */
export function renewalSoldOutPage(context: PageContext, token: string, entry: RenewalOf<'sold_out'>): string {
  const soldOut = new Set(entry.soldOut);
  const lines = checkoutLines(entry.view).map((line, index) =>
    soldOut.has(entry.view.lines[index]!.title) ? { ...line, details: [...line.details, SOLD_OUT] } : line,
  );
  const title = 'Some items are sold out';
  const body = html`<h1>${title}</h1>
<p class="problem">${entry.soldOut.length === 1 ? 'One item' : `${entry.soldOut.length} items`} of ${deliveryOf(context, entry.renewal)} ${entry.soldOut.length === 1 ? 'is' : 'are'} sold out right now.</p>
<p>Your subscription: ${subscriptionTitle(entry.subscription)}, ${planChoiceWords(entry.subscription.plan)}.</p>
${linesTable('This delivery', lines)}
${
  entry.canApproveWithout
    ? html`<p>You can have this delivery without the sold-out items: you review it and approve it on the next page, and nothing is ordered or charged until you do.</p>
<form method="post" action="${withoutSoldOutPath(token)}" class="actions">
<button type="submit" class="approve">Continue without the sold-out items</button>
</form>`
    : html`<p>Nothing of this delivery is in stock right now, so there is nothing to approve. Open this link again later, or skip this delivery from your subscriptions page.</p>`
}
<p class="detail">Your subscription stays as it is: the next deliveries include these items again when they are back in stock.</p>
${manageLink}`;
  return layout(context, { title, body, personal: true });
}

export function renewalApprovedPage(context: PageContext, entry: RenewalOf<'approved'>): string {
  return messagePage(context, {
    title: 'This delivery is approved',
    paragraphs: [`You approved this delivery of ${subscriptionTitle(entry.subscription)}: it is order #${entry.order.number}.`],
    extra: html`<p><a href="${orderPath(entry.order.id)}">See order #${entry.order.number}</a></p>
${manageLink}`,
  });
}

export function renewalClosedPage(context: PageContext, entry: RenewalOf<'closed'>): string {
  const state = entry.renewal.state;
  const closed = state === 'replaced' ? 'This link was replaced' : state === 'skipped' ? 'This delivery was skipped' : 'This delivery cannot be approved';
  return messagePage(context, {
    title: closed,
    tone: 'problem',
    paragraphs: [sentence(entry.reason), 'Nothing was ordered or charged through this link.'],
    extra: manageLink,
  });
}
