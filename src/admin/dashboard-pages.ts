/**
 * The admin's home, GET /admin: the business at a glance (src/reports/dashboard.ts). Sales, orders and the average
 * order of today, 7 and 30 days beside the days before; what waits for the merchant; orders per day by who prepared
 * them and units sold per product as charts drawn here (svg-charts.ts), each with its numbers in a table; low stock;
 * deliveries given up; subscriptions and the renewals approved, linking to the subscriptions list. Every figure of
 * orders links to the orders list filtered to exactly those orders. No script.
 */
import type { FastifyInstance } from 'fastify';
import { html, typed, type Html } from '../markup/html.js';
import type { Moments } from '../markup/moments.js';
import {
  DashboardCache,
  dashboardFigures,
  type DashboardFigures,
  type DaySpan,
  type PeriodComparison,
  type PeriodFigures,
  type Preparer,
  type SubscriptionFigures,
  type WaitingOrders,
} from '../reports/dashboard.js';
import { orderSearchParams, type OrderSearch, type WaitingFilter } from '../reports/order-search.js';
import { allowed, money, sendPage, staffOf, SECTIONS, type AdminContext } from './admin-kit.js';
import { orderPath, scrollingTable } from './admin-page-parts.js';
import { subscriptionsLink } from './subscription-view.js';
import { horizontalBarChart, legend, stackedBarChart } from './svg-charts.js';

const ORDERS = SECTIONS.orders.path;

/** The orders list filtered to `search`. */
export function ordersLink(search: OrderSearch): string {
  const query = orderSearchParams(search).toString();
  return query ? `${ORDERS}?${query}` : ORDERS;
}

const PERIOD_LABELS: Record<PeriodComparison['name'], { now: string; before: string }> = {
  today: { now: 'Today', before: 'yesterday' },
  '7d': { now: 'Last 7 days', before: 'the 7 days before' },
  '30d': { now: 'Last 30 days', before: 'the 30 days before' },
};

// Made once: a formatter costs more to make than the page's sixty days cost to format.
const SHORT_DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
const LONG_DAY = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });

/** A day as the page shows it ("29 Nov"), from YYYY-MM-DD (a calendar day: no zone moves it). */
function shortDay(day: string): string {
  return SHORT_DAY.format(new Date(`${day}T12:00:00Z`));
}

const WEEK_DAY = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });

/** "Sun 29 Nov". */
function weekDay(day: string): string {
  return WEEK_DAY.format(new Date(`${day}T12:00:00Z`)).replace(',', '');
}

/** "Sun, 29 November 2026". */
function longDay(day: string): string {
  return LONG_DAY.format(new Date(`${day}T12:00:00Z`));
}

/** The change against the days before, in words: "up 25%", "down 10%", "new", "no change". */
export function change(now: number, before: number): string {
  if (now === before) return 'no change';
  if (before === 0) return 'none before';
  const percent = Math.round(((now - before) / before) * 100);
  if (percent === 0) return now > before ? 'up under 1%' : 'down under 1%';
  return percent > 0 ? `up ${percent}%` : `down ${-percent}%`;
}

const placedIn = (span: DaySpan): OrderSearch => ({ status: 'placed', from: span.from, to: span.to });

function periodPanel(period: PeriodComparison, currency: string): Html {
  const labels = PERIOD_LABELS[period.name];
  const now = placedIn(period.span);
  const before = placedIn(period.beforeSpan);
  const row = (label: string, value: (figures: PeriodFigures) => number, shown: (value: number) => string, link: boolean) => {
    const current = value(period.current);
    const earlier = value(period.before);
    const figure = link ? html`<a href="${ordersLink(now)}">${shown(current)}</a>` : html`${shown(current)}`;
    const previous = link ? html`<a href="${ordersLink(before)}">${shown(earlier)}</a>` : html`${shown(earlier)}`;
    return html`<tr><th scope="row">${label}</th><td class="n"><span class="figure">${figure}</span></td><td class="n">${previous}<br><span class="muted">${change(current, earlier)}</span></td></tr>`;
  };
  const cents = (value: number) => money(value, currency);
  const id = `period-${period.name}`;
  return html`<section class="panel" aria-labelledby="${id}">
<table>
<caption id="${id}">${labels.now} <span class="muted">(${period.span.from === period.span.to ? longDay(period.span.from) : `${shortDay(period.span.from)} – ${shortDay(period.span.to)}`}), beside ${labels.before}</span></caption>
<thead><tr><td></td><th scope="col" class="n">Now</th><th scope="col" class="n">Before</th></tr></thead>
<tbody>
${row('Sales', (f) => f.sales, cents, true)}
${row('Orders', (f) => f.orders, String, true)}
${row('Average order', (f) => f.averageOrder, cents, false)}
${row('Refunds', (f) => f.refunds, cents, false)}
</tbody>
</table>
</section>`;
}

const WAITING: { key: WaitingFilter; label: string; none: string }[] = [
  { key: 'capture', label: 'Waiting for a capture (a card hold to take)', none: 'No card hold waits to be captured.' },
  { key: 'shipment', label: 'Waiting for a shipment', none: 'Nothing waits to ship.' },
  { key: 'overdue', label: 'Payment past its due date', none: 'No payment is past its due date.' },
  { key: 'expiring', label: 'Card hold lapsing within 24 hours', none: 'No card hold lapses within 24 hours.' },
];

function waitingPanel(waiting: DashboardFigures['waiting']): Html {
  const item = ({ key, label, none }: (typeof WAITING)[number]) => {
    const list: WaitingOrders = waiting[key];
    if (list.count === 0) return html`<li>${label}: 0 <span class="muted">(${none})</span></li>`;
    const more = list.count - list.numbers.length;
    return html`<li><a href="${ordersLink({ waiting: key })}"><strong>${label}: ${list.count}</strong></a>
<br>${list.numbers.map((number, index) => html`${index ? ', ' : ''}<a href="${orderPath(number)}">#${number}</a>`)}${more > 0 ? html` and ${more} more` : ''}</li>`;
  };
  return html`<section class="panel" aria-labelledby="waiting-heading">
<h2 id="waiting-heading">Waiting for you</h2>
<ul>${WAITING.map(item)}</ul>
</section>`;
}

function preparerLabel(preparer: Preparer): string {
  if (preparer.prepared === 'browser') return 'Browser';
  return preparer.platform ? `Agent: ${preparer.platform}` : 'Agent (platform not known)';
}

function preparerSearch(preparer: Preparer, span: DaySpan): OrderSearch {
  const prepared: OrderSearch = preparer.prepared === 'agent' && preparer.platform ? { platform: preparer.platform } : { prepared: preparer.prepared };
  return { ...placedIn(span), ...prepared };
}

function ordersByDaySection(figures: DashboardFigures): Html {
  const { preparers, days } = figures.ordersByDay;
  const span: DaySpan = { from: days[0]!.day, to: days.at(-1)!.day };
  const series = preparers.map((preparer) => ({ key: preparer.key, label: preparerLabel(preparer) }));
  const total = days.reduce((sum, day) => sum + day.total, 0);
  const byAgents = days.reduce((sum, day) => sum + preparers.filter((p) => p.prepared === 'agent').reduce((n, p) => n + (day.byPreparer[p.key] ?? 0), 0), 0);
  const title = `Orders per day, last 30 days: ${total} orders, ${byAgents} prepared by agents, ${total - byAgents} in a browser.`;
  const chart = stackedBarChart({
    id: 'orders-chart-title',
    title,
    categories: days.map((day) => day.day),
    // Every seventh day named, counting back from today (always named).
    categoryLabels: days.map((day, index) => ((days.length - 1 - index) % 7 === 0 ? shortDay(day.day) : '')),
    series,
    values: days.map((day) => preparers.map((preparer) => day.byPreparer[preparer.key] ?? 0)),
  });
  const totals = preparers.map((preparer) => days.reduce((sum, day) => sum + (day.byPreparer[preparer.key] ?? 0), 0));
  // Headers that may wrap (a platform's host is long) and short days: the table fits a phone's width.
  const head = html`<tr><th scope="col">Day</th>${series.map((entry) => html`<th scope="col">${entry.label}</th>`)}<th scope="col" class="n">All</th></tr>`;
  const rows = [...days].reverse().map(
    (day) =>
      html`<tr><th scope="row"><time datetime="${day.day}">${weekDay(day.day)}</time></th>${preparers.map((preparer) => html`<td class="n">${day.byPreparer[preparer.key] ?? 0}</td>`)}<td class="n">${
        day.total
          ? html`<a href="${ordersLink(placedIn({ from: day.day, to: day.day }))}">${day.total}</a>`
          : '0'
      }</td></tr>`,
  );
  const totalRow = html`<tr><th scope="row">30 days</th>${preparers.map(
    (preparer, index) => html`<td class="n"><a href="${ordersLink(preparerSearch(preparer, span))}">${totals[index]}</a></td>`,
  )}<td class="n"><a href="${ordersLink(placedIn(span))}">${total}</a></td></tr>`;
  return html`<section class="panel" aria-labelledby="orders-by-day-heading">
<h2 id="orders-by-day-heading">Orders by who prepared them</h2>
${total === 0 ? html`<p>No order in the last 30 days.</p>` : html`${chart}${legend(series)}`}
<p>${preparers.map(
    (preparer, index) => html`${index ? ' · ' : ''}<a href="${ordersLink(preparerSearch(preparer, span))}">${typed(preparerLabel(preparer))}: ${totals[index]}</a>`,
  )}</p>
<details open><summary>The numbers, day by day</summary>
${scrollingTable('orders-by-day-caption', 'Orders per day (not canceled), newest first', head, [totalRow, ...rows])}
</details>
</section>`;
}

function unitsSection(figures: DashboardFigures): Html {
  const { products, otherUnits, span } = figures.unitsByProduct;
  const units = (n: number) => (n === 1 ? '1 unit' : `${n} units`);
  const total = products.reduce((sum, product) => sum + product.units, 0) + otherUnits;
  const chart = horizontalBarChart(
    'units-chart-title',
    `Units sold per product, last 30 days: ${total} units${products[0] ? `, most of ${products[0].title} (${products[0].units})` : ''}.`,
    products.map((product) => ({ label: product.title, value: product.units, shown: units(product.units) })),
  );
  const table = scrollingTable(
    'units-caption',
    `Units sold per product, ${shortDay(span.from)} – ${shortDay(span.to)}`,
    html`<tr><th scope="col">Product</th><th scope="col" class="n">Units</th><th scope="col" class="n">Sales</th></tr>`,
    [
      ...products.map(
        (product) => html`<tr><th scope="row">${product.title}</th><td class="n">${product.units}</td><td class="n">${money(product.sales, figures.currency)}</td></tr>`,
      ),
      ...(otherUnits > 0 ? [html`<tr><th scope="row">Other products</th><td class="n">${otherUnits}</td><td></td></tr>`] : []),
    ],
  );
  return html`<section class="panel" aria-labelledby="units-heading">
<h2 id="units-heading">Units sold per product</h2>
${products.length ? html`${chart}<details open><summary>The numbers</summary>${table}</details>` : html`<p>Nothing sold in the last 30 days.</p>`}
</section>`;
}

function lowStockSection(figures: DashboardFigures): Html {
  const { threshold, count, variants } = figures.lowStock;
  const body = variants.length
    ? scrollingTable(
        'low-stock-caption',
        count > variants.length ? `The ${variants.length} lowest of ${count}` : `${count === 1 ? '1 variant' : `${count} variants`} at ${threshold} or fewer`,
        html`<tr><th scope="col">Product</th><th scope="col">SKU</th><th scope="col" class="n">On hand</th></tr>`,
        variants.map(
          (variant) =>
            html`<tr><td><a href="${SECTIONS.products.path}/${variant.productId}">${variant.productTitle}</a>${
              variant.variantTitle && variant.variantTitle !== 'Default Title' ? html` <span class="muted">${variant.variantTitle}</span>` : ''
            }</td><td>${variant.sku ?? ''}</td><td class="n">${variant.onHand}</td></tr>`,
        ),
      )
    : html`<p>No tracked variant has ${threshold} or fewer on hand.</p>`;
  return html`<section class="panel" aria-labelledby="low-stock-heading">
<h2 id="low-stock-heading">Low stock</h2>
${body}
</section>`;
}

const KIND_WORDS: Record<string, string> = { mail: 'Mail', webhook: 'Order event to the agent platform', legacy: 'Message of an older version' };

function failedSection(figures: DashboardFigures, moments: Moments): Html {
  const { count, latest } = figures.failedDeliveries;
  const body = latest.length
    ? scrollingTable(
        'failed-caption',
        count > latest.length ? `The latest ${latest.length} of ${count}` : `${count === 1 ? '1 message' : `${count} messages`} given up`,
        html`<tr><th scope="col">Message</th><th scope="col">Order</th><th scope="col">Given up</th><th scope="col">Last error</th></tr>`,
        latest.map(
          (failed) => html`<tr><td>${KIND_WORDS[failed.kind] ?? failed.kind}<br><span class="muted">${failed.topic} · ${failed.attempts} attempts</span></td><td>${
            failed.orderNumber === null ? html`<span class="muted">none</span>` : html`<a href="${orderPath(failed.orderNumber)}">#${failed.orderNumber}</a>`
          }</td><td>${moments.moment(failed.failedAt)}</td><td>${typed(failed.lastError)}</td></tr>`,
        ),
      )
    : html`<p>Every message was delivered or is still being tried.</p>`;
  return html`<section class="panel" aria-labelledby="failed-heading">
<h2 id="failed-heading">Deliveries that failed</h2>
${body}
${count ? html`<p><a href="${SECTIONS.deliveries.path}">See and retry them in Deliveries</a></p>` : ''}
</section>`;
}

function subscriptionsPanel(figures: SubscriptionFigures): Html {
  const approved = (Object.keys(PERIOD_LABELS) as PeriodComparison['name'][]).map(
    (name) => html`<tr><th scope="row">${PERIOD_LABELS[name].now}</th><td class="n">${figures.renewalsApproved[name]}</td></tr>`,
  );
  return html`<section class="panel" aria-labelledby="subscriptions-heading">
<h2 id="subscriptions-heading">Subscriptions</h2>
<p><a href="${subscriptionsLink({ state: 'active' })}"><span class="figure">${figures.active}</span> active</a> · <a href="${subscriptionsLink({ state: 'paused' })}">${figures.paused} paused</a></p>
<table>
<caption id="renewals-approved-caption">Renewals approved by their buyers</caption>
<tbody>${approved}</tbody>
</table>
<p><a href="${subscriptionsLink({})}">Upcoming deliveries and every subscription</a></p>
</section>`;
}

/** The body of GET /admin. */
export function dashboardBody(figures: DashboardFigures, moments: Moments): Html {
  return html`<h1>Dashboard</h1>
<p class="muted">As of ${moments.moment(figures.now)}. Days in ${figures.timeZone}; sales are orders not canceled.</p>
<div class="grid">
${figures.periods.map((period) => periodPanel(period, figures.currency))}
</div>
<div class="grid">
${waitingPanel(figures.waiting)}
${failedSection(figures, moments)}
${figures.subscriptions ? subscriptionsPanel(figures.subscriptions) : ''}
</div>
${ordersByDaySection(figures)}
<div class="grid">
${unitsSection(figures)}
${lowStockSection(figures)}
</div>`;
}

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const cache = new DashboardCache();
  admin.get(SECTIONS.dashboard.path, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, SECTIONS.dashboard.needs)) return reply;
    const figures = await dashboardFigures(ctx.store.db, { now: ctx.store.clock(), timeZone: ctx.moments.timeZone, cache, subscriptions: ctx.store.subscriptions });
    return sendPage(reply, ctx, staffOf(request), { title: 'Dashboard', section: 'dashboard', body: dashboardBody(figures, ctx.moments) });
  });
}
