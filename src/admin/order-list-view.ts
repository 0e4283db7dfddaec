/**
 * The orders list as the merchant reads it: a form of filters (order, payment and fulfilment state, who prepared it,
 * an agent's platform, a date range in the store's zone, the dashboard's "waiting" lists) and a search (an order
 * number, an email or its start), then one page of orders, newest first, with links to the pages before and after.
 * A plain GET form: it works without JavaScript, and every filtered list has its own address.
 */
import type { Html } from '../markup/html.js';
import { html, typed } from '../markup/html.js';
import type { Moments } from '../markup/moments.js';
import { PAYMENT_LABELS } from '../payments/payment-words.js';
import {
  FULFILMENT_FILTERS,
  ORDER_STATUSES,
  PAYMENT_STATES,
  WAITING_FILTERS,
  orderSearchParams,
  type FulfilmentFilter,
  type OrderPage,
  type OrderSearch,
  type WaitingFilter,
} from '../reports/order-search.js';
import { money, SECTIONS } from './admin-kit.js';
import { orderPath, scrollingTable } from './admin-page-parts.js';
import { FULFILMENT_LABELS, ORDER_STATUS_LABELS, preparedBy } from './order-words.js';

const ORDERS = SECTIONS.orders.path;

const FULFILMENT_FILTER_LABELS: Record<FulfilmentFilter, string> = {
  unfulfilled: 'Not shipped',
  partial: 'Partly shipped',
  unshipped: 'Anything left to ship',
  fulfilled: 'Shipped',
  partially_canceled: 'Shipped, the rest canceled',
  canceled: 'Canceled',
};

const WAITING_LABELS: Record<WaitingFilter, string> = {
  capture: 'A capture',
  shipment: 'A shipment',
  overdue: 'A payment past its due date',
  expiring: 'A card hold about to lapse',
};

/** A select of one filter: "Any" first, then each value, the current one selected. */
function choice<T extends string>(name: string, label: string, values: readonly T[], labels: Record<T, string>, current: T | undefined): Html {
  return html`<div class="field"><label for="filter-${name}">${label}</label><select id="filter-${name}" name="${name}">
<option value="">Any</option>${values.map((value) => html`<option value="${value}"${value === current ? html` selected` : ''}>${labels[value]}</option>`)}
</select></div>`;
}

function filterForm(search: OrderSearch, moments: Moments): Html {
  return html`<form method="get" action="${ORDERS}" class="filters" role="search" aria-label="Filter and search orders">
<div class="field"><label for="filter-q">Order number or email</label><input id="filter-q" name="q" type="search" value="${search.q ?? ''}" maxlength="200" autocomplete="off"></div>
${choice('status', 'Order', ORDER_STATUSES, ORDER_STATUS_LABELS, search.status)}
${choice('payment', 'Payment', PAYMENT_STATES, PAYMENT_LABELS, search.payment)}
${choice('fulfilment', 'Fulfilment', FULFILMENT_FILTERS, FULFILMENT_FILTER_LABELS, search.fulfilment)}
${choice('prepared', 'Prepared by', ['agent', 'browser'] as const, { agent: 'An agent', browser: 'A browser' }, search.prepared)}
<div class="field"><label for="filter-platform">Agent platform</label><input id="filter-platform" name="platform" value="${search.platform ?? ''}" maxlength="260" placeholder="chat.example" autocomplete="off"></div>
${choice('waiting', 'Waiting for', WAITING_FILTERS, WAITING_LABELS, search.waiting)}
<div class="field"><label for="filter-from">Placed from</label><input id="filter-from" name="from" type="date" value="${search.from ?? ''}"></div>
<div class="field"><label for="filter-to">Placed until</label><input id="filter-to" name="to" type="date" value="${search.to ?? ''}"></div>
<button type="submit">Show orders</button>
<p class="muted">Days in ${moments.timeZone}. <a href="${ORDERS}">Clear the filters</a></p>
</form>`;
}

function pageLink(search: OrderSearch, page: number): string {
  const params = orderSearchParams({ ...search, page });
  const query = params.toString();
  return query ? `${ORDERS}?${query}` : ORDERS;
}

function pagination(search: OrderSearch, result: OrderPage): Html {
  const pages = Math.max(1, Math.ceil(result.total / result.pageSize));
  if (pages === 1 && result.page === 1) return html``;
  return html`<nav class="pages" aria-label="Pages of orders"><ul>
${result.page > 1 ? html`<li><a href="${pageLink(search, result.page - 1)}" rel="prev">Previous page</a></li>` : ''}
<li aria-current="page">Page ${result.page} of ${pages}</li>
${result.hasNext ? html`<li><a href="${pageLink(search, result.page + 1)}" rel="next">Next page</a></li>` : ''}
</ul></nav>`;
}

/** The body of GET /admin/orders. */
export function orderListBody(search: OrderSearch, result: OrderPage, moments: Moments): Html {
  const first = (result.page - 1) * result.pageSize + 1;
  const last = first + result.rows.length - 1;
  const filtered = [...orderSearchParams({ ...search, page: undefined }).keys()].length > 0;
  const table = result.rows.length
    ? scrollingTable(
        'orders-caption',
        html`Orders ${first}–${last} of ${result.total}, newest first`,
        html`<tr><th scope="col">Order</th><th scope="col">Placed</th><th scope="col">Buyer</th><th scope="col">Prepared by</th><th scope="col">Order state</th><th scope="col">Payment</th><th scope="col">Fulfilment</th><th scope="col" class="n">Total</th></tr>`,
        result.rows.map(
          (row) => html`<tr><td><a href="${orderPath(row.number)}">#${row.number}</a></td><td>${moments.moment(row.createdAt)}</td><td>${typed(row.buyerEmail)}</td><td>${preparedBy(
            row.channel,
            row.agentPlatform,
          )}</td><td>${ORDER_STATUS_LABELS[row.status]}</td><td>${PAYMENT_LABELS[row.paymentState]}</td><td>${FULFILMENT_LABELS[row.fulfilmentState]}</td><td class="n">${money(
            row.total,
            row.currency,
          )}</td></tr>`,
        ),
      )
    : html`<p>${result.total > 0 ? 'No order on this page: go back to the first page.' : filtered ? 'No order matches these filters.' : 'No order has been placed yet.'}</p>`;
  return html`<h1>Orders</h1>
${filterForm(search, moments)}
<h2 id="results">${result.total === 1 ? '1 order' : `${result.total} orders`}${filtered ? ' match' : ''}</h2>
${table}
${pagination(search, result)}`;
}
