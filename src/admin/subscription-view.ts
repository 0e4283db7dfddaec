/**
 * Subscriptions in the admin, rendered: the list (the deliveries coming up first, then a form of filters and one page
 * of subscriptions, newest first) and a subscription's page (what it delivers, the plan's terms and whether the
 * catalog still offers them, where it ships, the next delivery priced now, its renewals and their orders, what
 * happened to it, and the cancel form). Text a buyer typed is shown as typed; the catalog's escaped. Pure: the route
 * reads, this renders.
 */
import { planWords } from '../catalog/types.js';
import { formatAddress } from '../checkout/shipping.js';
import { html, typed, type Html } from '../markup/html.js';
import type { Moments } from '../markup/moments.js';
import type { SubscriptionDetails } from '../subscriptions/subscription-service.js';
import { SUBSCRIPTION_STATES, subscriptionTitle, type Renewal, type RenewalState, type Subscription, type SubscriptionState } from '../subscriptions/subscriptions.js';
import { money, notice, postForm, SECTIONS } from './admin-kit.js';
import { orderPath, scrollingTable } from './admin-page-parts.js';
import type { StaffSession } from '../staff/staff.js';

export const SUBSCRIPTIONS = SECTIONS.subscriptions.path;

/** A subscription's page in the admin. */
export const subscriptionPath = (id: number) => `${SUBSCRIPTIONS}/${id}`;

export const STATE_LABELS: Record<SubscriptionState, string> = { active: 'Active', paused: 'Paused', canceled: 'Canceled' };

const RENEWAL_LABELS: Record<RenewalState, string> = {
  pending: 'Waiting for the buyer’s approval',
  approved: 'Approved',
  skipped: 'Skipped',
  replaced: 'Replaced (the subscription changed)',
};

/** What the list shows: its filters (each checked: a state named, an email, a page's bound). */
export interface SubscriptionListQuery {
  state?: SubscriptionState;
  email?: string;
  /** The page of subscriptions older than this id (newest first). */
  before?: number;
}

export interface SubscriptionListPage {
  query: SubscriptionListQuery;
  rows: Subscription[];
  /** The id the next (older) page starts below, when there is one. */
  nextBefore: number | undefined;
  upcoming: { subscription: Subscription; renewal: Renewal | undefined }[];
}

/** The list's address for `query`. */
export function subscriptionsLink(query: SubscriptionListQuery): string {
  const params = new URLSearchParams();
  if (query.state) params.set('state', query.state);
  if (query.email) params.set('email', query.email);
  if (query.before !== undefined) params.set('before', String(query.before));
  const text = params.toString();
  return text ? `${SUBSCRIPTIONS}?${text}` : SUBSCRIPTIONS;
}

/** The list's filters as the query gives them; anything that is not one is left out (an unknown state, a bad bound). */
export function subscriptionListQuery(query: Record<string, unknown>): SubscriptionListQuery {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string).trim() : '');
  const state = text('state');
  const email = text('email').slice(0, 254);
  const before = text('before');
  return {
    ...((SUBSCRIPTION_STATES as readonly string[]).includes(state) ? { state: state as SubscriptionState } : {}),
    ...(email ? { email } : {}),
    ...(/^[1-9][0-9]{0,14}$/.test(before) ? { before: Number(before) } : {}),
  };
}

function upcomingPanel(upcoming: SubscriptionListPage['upcoming'], moments: Moments): Html {
  const renewalWords = (renewal: Renewal | undefined) => {
    if (!renewal) return html`<span class="muted">Not mailed yet</span>`;
    if (renewal.remindedAt) return html`Waiting for approval; reminded ${moments.moment(renewal.remindedAt)}`;
    return html`Waiting for approval; mailed ${moments.moment(renewal.producedAt)}`;
  };
  const body = upcoming.length
    ? scrollingTable(
        'upcoming-caption',
        `The next ${upcoming.length === 1 ? 'delivery' : `${upcoming.length} deliveries`}, soonest first`,
        html`<tr><th scope="col">Delivery</th><th scope="col">Subscription</th><th scope="col">Buyer</th><th scope="col">What</th><th scope="col">Renewal</th></tr>`,
        upcoming.map(
          ({ subscription, renewal }) =>
            html`<tr><td>${moments.moment(subscription.nextAt)}</td><td><a href="${subscriptionPath(subscription.id)}">Subscription ${subscription.id}</a></td><td>${typed(
              subscription.buyerEmail,
            )}</td><td>${subscriptionTitle(subscription)}</td><td>${renewalWords(renewal)}</td></tr>`,
        ),
      )
    : html`<p>No active subscription: no delivery is coming up.</p>`;
  return html`<section class="panel" aria-labelledby="upcoming-heading">
<h2 id="upcoming-heading">Upcoming deliveries</h2>
<p class="muted">Each renewal is a checkout the buyer approves: they are mailed its link a few days before the date, reminded once, and the delivery is skipped if they do not approve it.</p>
${body}
</section>`;
}

function filterForm(query: SubscriptionListQuery, moments: Moments): Html {
  return html`<form method="get" action="${SUBSCRIPTIONS}" class="filters" role="search" aria-label="Filter and search subscriptions">
<div class="field"><label for="filter-email">Buyer email</label><input id="filter-email" name="email" type="search" value="${query.email ?? ''}" maxlength="254" autocomplete="off"></div>
<div class="field"><label for="filter-state">State</label><select id="filter-state" name="state">
<option value="">Any</option>${SUBSCRIPTION_STATES.map((state) => html`<option value="${state}"${state === query.state ? html` selected` : ''}>${STATE_LABELS[state]}</option>`)}
</select></div>
<button type="submit">Show subscriptions</button>
<p class="muted">Times in ${moments.timeZone}. <a href="${SUBSCRIPTIONS}">Clear the filters</a></p>
</form>`;
}

function pagination(page: SubscriptionListPage): Html {
  if (page.query.before === undefined && page.nextBefore === undefined) return html``;
  const first = { ...page.query, before: undefined };
  return html`<nav class="pages" aria-label="Pages of subscriptions"><ul>
${page.query.before !== undefined ? html`<li><a href="${subscriptionsLink(first)}">First page</a></li>` : ''}
${page.nextBefore !== undefined ? html`<li><a href="${subscriptionsLink({ ...page.query, before: page.nextBefore })}" rel="next">Next page (older)</a></li>` : ''}
</ul></nav>`;
}

/** The body of GET /admin/subscriptions. */
export function subscriptionListBody(page: SubscriptionListPage, moments: Moments): Html {
  const { query, rows } = page;
  const filtered = query.state !== undefined || query.email !== undefined;
  const table = rows.length
    ? scrollingTable(
        'subscriptions-caption',
        `Subscriptions${filtered ? ' matching' : ''}, newest first`,
        html`<tr><th scope="col">Subscription</th><th scope="col">State</th><th scope="col">Buyer</th><th scope="col">What</th><th scope="col">Plan</th><th scope="col">Next delivery</th><th scope="col">Started</th></tr>`,
        rows.map(
          (subscription) =>
            html`<tr><td><a href="${subscriptionPath(subscription.id)}">Subscription ${subscription.id}</a></td><td>${STATE_LABELS[subscription.state]}</td><td>${typed(
              subscription.buyerEmail,
            )}</td><td>${subscriptionTitle(subscription)}</td><td>${planWords(subscription.plan)}</td><td>${
              subscription.state === 'active' ? moments.moment(subscription.nextAt) : html`<span class="muted">None (${STATE_LABELS[subscription.state].toLowerCase()})</span>`
            }</td><td>${moments.moment(subscription.createdAt)}</td></tr>`,
        ),
      )
    : html`<p>${query.before !== undefined ? 'No subscription on this page: go back to the first page.' : filtered ? 'No subscription matches these filters.' : 'No subscription yet: one starts when a buyer orders on a plan.'}</p>`;
  return html`<h1>Subscriptions</h1>
${upcomingPanel(page.upcoming, moments)}
<h2 id="list-heading">All subscriptions</h2>
${filterForm(query, moments)}
${table}
${pagination(page)}`;
}

/** What ?done= says after an action on a subscription (a fixed sentence per code: nothing from the query is echoed). */
export const DONE: Record<string, string> = {
  canceled: 'The subscription was canceled: no renewal will be produced, and the buyer is mailed.',
};

export interface SubscriptionView {
  details: SubscriptionDetails;
  staff: StaffSession;
  moments: Moments;
  /** May cancel (the form is shown). */
  mayCancel: boolean;
  /** What was just done (DONE's sentence). */
  done?: string;
  /** The cancel refused: why, and the reason typed (shown again in its form). */
  refusal?: { text: string; reason: string };
}

function row(label: string, value: Html | string | number): Html {
  return html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;
}

function addressLines(address: Subscription['shippingAddress']): Html {
  return html`<address>${formatAddress(address).map((line, index) => html`${index ? html`<br>` : ''}${typed(line)}`)}</address>`;
}

function factsPanel(details: SubscriptionDetails, moments: Moments): Html {
  const { subscription, orders } = details;
  const origin = orders.find((order) => order.id === subscription.originOrderId);
  const buyerName = [subscription.buyer.firstName, subscription.buyer.lastName].filter(Boolean).join(' ');
  const state =
    subscription.state === 'canceled'
      ? html`Canceled${subscription.canceledAt ? html` ${moments.moment(subscription.canceledAt)}` : ''}${subscription.cancelReason ? html`: ${typed(subscription.cancelReason)}` : ''}`
      : STATE_LABELS[subscription.state];
  return html`<section class="panel" aria-labelledby="facts-caption"><table>
<caption id="facts-caption">The subscription</caption>
<tbody>
${row('State', state)}
${row('Buyer', html`${typed(subscription.buyerEmail)}${buyerName ? html` (${typed(buyerName)})` : ''}`)}
${row('Plan', html`${planWords(subscription.plan)}, of ${subscription.plan.groupName}<br><span class="muted">${
    details.planOffered ? 'Still offered by the catalog.' : 'No longer offered by the catalog: the subscription keeps the terms it was bought on.'
  }</span>`)}
${row('Ships to', addressLines(subscription.shippingAddress))}
${row('Shipping option', subscription.shippingOption)}
${row('Started', html`${moments.moment(subscription.createdAt)}${origin ? html`, <a href="${orderPath(origin.number)}">order #${origin.number}</a>` : ''}`)}
${row('Next delivery', subscription.state === 'active' ? moments.moment(subscription.nextAt) : subscription.state === 'paused' ? 'None while paused' : 'None: canceled')}
</tbody>
</table></section>`;
}

function nextDeliveryPanel(details: SubscriptionDetails): Html {
  const { next, subscription } = details;
  if (subscription.state === 'canceled') return html``;
  return html`<section class="panel" aria-labelledby="next-heading">
<h2 id="next-heading">The next delivery, priced now</h2>
<p class="muted">At today’s prices less the plan’s saving: the renewal is priced on the day it is made.</p>
${scrollingTable(
  'next-caption',
  `Items of the next delivery`,
  html`<tr><th scope="col">Item</th><th scope="col" class="n">Quantity</th><th scope="col" class="n">Unit price</th><th scope="col" class="n">One-time price</th><th scope="col" class="n">Line total</th><th scope="col">Now</th></tr>`,
  [
    ...next.lines.map(
      (line) =>
        html`<tr><td>${line.title}</td><td class="n">${line.quantity}</td><td class="n">${money(line.unitPrice)}</td><td class="n">${money(line.fullUnitPrice)}</td><td class="n">${money(line.lineTotal)}</td><td>${line.available ? 'In stock' : html`<strong>Not available</strong> (sold out or no longer sold)`}</td></tr>`,
    ),
    html`<tr><th scope="row" colspan="4">Subtotal, before shipping and tax</th><td class="n">${money(next.subtotal)}</td><td></td></tr>`,
  ],
)}
</section>`;
}

function renewalsPanel(details: SubscriptionDetails, moments: Moments): Html {
  const { renewals, orders } = details;
  const orderCell = (orderId: string | null) => {
    const order = orderId === null ? undefined : orders.find((known) => known.id === orderId);
    return order ? html`<a href="${orderPath(order.number)}">#${order.number}</a>` : html`<span class="muted">None</span>`;
  };
  const body = renewals.length
    ? scrollingTable(
        'renewals-caption',
        'Renewals, newest first',
        html`<tr><th scope="col">Delivery</th><th scope="col">State</th><th scope="col">Order</th><th scope="col">Mailed</th><th scope="col">Reminded</th><th scope="col">Why</th></tr>`,
        renewals.map(
          (renewal) =>
            html`<tr><td>${moments.moment(renewal.dueAt)}</td><td>${RENEWAL_LABELS[renewal.state]}</td><td>${orderCell(renewal.orderId)}</td><td>${moments.moment(
              renewal.producedAt,
            )}</td><td>${renewal.remindedAt ? moments.moment(renewal.remindedAt) : html`<span class="muted">No</span>`}</td><td>${typed(renewal.closeReason)}</td></tr>`,
        ),
      )
    : html`<p>No renewal yet: the first is mailed to the buyer a few days before the next delivery.</p>`;
  const orderList = orders.length
    ? scrollingTable(
        'orders-caption',
        'Its orders',
        html`<tr><th scope="col">Order</th><th scope="col">Placed</th><th scope="col" class="n">Total</th></tr>`,
        orders.map((order) => html`<tr><td><a href="${orderPath(order.number)}">#${order.number}</a></td><td>${moments.moment(order.createdAt)}</td><td class="n">${money(order.total)}</td></tr>`),
      )
    : '';
  return html`<section class="panel" aria-labelledby="renewals-heading">
<h2 id="renewals-heading">Renewals and orders</h2>
${body}
${orderList}
</section>`;
}

const ACTOR_WORDS: Record<string, string> = { buyer: 'The buyer', merchant: 'The store', system: 'The schedule' };

function eventsPanel(details: SubscriptionDetails, moments: Moments): Html {
  const { events } = details;
  return html`<section class="panel" aria-labelledby="events-heading">
<h2 id="events-heading">What happened, newest first</h2>
${
  events.length
    ? html`<ol class="timeline">${events.map(
        (event) =>
          html`<li><strong>${event.kind.replace(/_/g, ' ')}</strong> · ${ACTOR_WORDS[event.actor] ?? event.actor} · ${moments.moment(event.at)}${event.detail ? html`<br>${typed(event.detail)}` : ''}</li>`,
      )}</ol>`
    : html`<p>Nothing recorded yet.</p>`
}
</section>`;
}

function cancelPanel(view: SubscriptionView): Html {
  const { details, staff, refusal } = view;
  const { subscription } = details;
  // Refused because it was canceled meanwhile (or the person may not): the refusal alone, where the form was.
  if (subscription.state === 'canceled' || !view.mayCancel) return refusal ? notice('refused', refusal.text) : html``;
  const fields = html`<div class="field"><label for="cancel-reason">Reason (optional, mailed to the buyer)</label><input id="cancel-reason" name="reason" maxlength="200" value="${refusal?.reason ?? ''}" autocomplete="off"></div>`;
  return html`<section class="panel" aria-labelledby="cancel-heading">
<h2 id="cancel-heading">Cancel</h2>
<p>No renewal is produced after this; a renewal waiting for the buyer’s approval is withdrawn. The buyer is mailed.</p>
${postForm(staff, `${subscriptionPath(subscription.id)}/cancel`, fields, 'Cancel the subscription', { danger: true, label: `Cancel subscription ${subscription.id}` })}
${refusal ? notice('refused', refusal.text) : ''}
</section>`;
}

/** The body of GET /admin/subscriptions/:id. */
export function subscriptionPageBody(view: SubscriptionView): Html {
  const { details, moments } = view;
  const { subscription } = details;
  return html`<p><a href="${SUBSCRIPTIONS}">All subscriptions</a></p>
<h1>Subscription ${subscription.id} <span class="muted">${STATE_LABELS[subscription.state]}</span></h1>
${view.done ? notice('done', view.done) : ''}
<p>${subscriptionTitle(subscription)}, ${planWords(subscription.plan)}. Times in ${moments.timeZone}.</p>
${factsPanel(details, moments)}
${scrollingTable(
  'lines-caption',
  'What it delivers',
  html`<tr><th scope="col">Item</th><th scope="col" class="n">Quantity</th></tr>`,
  subscription.lines.map((line) => html`<tr><td>${line.title}</td><td class="n">${line.quantity}</td></tr>`),
)}
${nextDeliveryPanel(details)}
${renewalsPanel(details, moments)}
${eventsPanel(details, moments)}
${cancelPanel(view)}`;
}
