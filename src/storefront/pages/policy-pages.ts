/**
 * The store's policy pages (/policies/{kind}, the default policy links): short statements of what this service
 * does, read from its configuration. They promise nothing the code does not do.
 */
import { POLICY_KINDS, type CheckoutConfig, type PolicyKind } from '../../checkout/checkout-options.js';
import { shippingOptions } from '../../checkout/shipping.js';
import { html, type Html } from '../../markup/html.js';
import { layout, POLICY_TITLES, type PageContext } from './layout.js';
import { formatMoney } from './purchase-parts.js';
import { oneLineWords, paymentTerms, type PaymentPlan } from '../../payments/payment-words.js';
import { paymentParagraphs } from './payment-parts.js';

/** The policy a path segment names (/policies/terms-of-service, …), as config.ts builds the default links. */
export function policyKindOf(slug: string): PolicyKind | undefined {
  return POLICY_KINDS.find((kind) => kind.replace(/_/g, '-') === slug);
}

export interface PolicyFacts {
  checkout: CheckoutConfig;
  /** How orders are paid (the provider, the manual provider's instructions and due days, when a card hold is charged). */
  payment: PaymentPlan;
  /** How long a cart unchanged is kept. */
  cartLifetimeDays: number;
}

/** 900 -> "15 minutes", 21600 -> "6 hours", 90 -> "90 seconds". */
export function formatDuration(seconds: number): string {
  const unit = (count: number, name: string) => `${count} ${name}${count === 1 ? '' : 's'}`;
  if (seconds % 86_400 === 0) return unit(seconds / 86_400, 'day');
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

/** Basis points as a percentage: 725 -> "7.25%". */
const percent = (bps: number) => `${(bps / 100).toFixed(2).replace(/\.?0+$/, '')}%`;

function termsOfService(context: PageContext, facts: PolicyFacts): Html {
  return html`<p>${context.storeName} sells through this website and through AI shopping agents acting for you.</p>
<ul>
<li>An agent can search the catalog, fill a cart and prepare a checkout, but it cannot place an order or pay. An order is placed
only when you approve it on this store's approval page, which shows every item, the shipping address, the shipping option and the total.</li>
<li>An approval link works once and for ${formatDuration(facts.checkout.approvalTtlSeconds)}. If the checkout changes after the page
was shown, the approval is refused and the page says what changed. Declining cancels the checkout.</li>
<li>A checkout that is not completed expires ${formatDuration(facts.checkout.ttlSeconds)} after it was started and is then canceled.</li>
<li>Prices are in US dollars. The total you approve includes shipping and any sales tax, as the approval page shows them.</li>
<li>Payment: ${oneLineWords(paymentTerms(facts.payment).how)}</li>
</ul>`;
}

function privacyPolicy(_context: PageContext, facts: PolicyFacts): Html {
  return html`<p>What this service keeps about you, and why:</p>
<ul>
<li>An order keeps your email address, your name and phone number when you give them with the address, the shipping address,
the items, the shipping option and the totals, so that the order can be shipped and you can be contacted about it.</li>
<li>A checkout your agent prepares keeps the same details while it is open.</li>
<li>${
    facts.payment.provider === 'manual'
      ? 'No card or bank details are asked for or stored: you pay the store as its payment instructions say.'
      : "Card details are entered on Stripe's payment page, never on this website, and the store keeps none of them."
  }</li>
<li>Cookies: <code>cart</code> holds your cart's token (it expires after ${facts.cartLifetimeDays} days, and a cart unchanged for that long
is deleted). The approval page sets a cookie that holds its form's token, sent only to that page, until the link expires.</li>
<li>Approval and order pages are not cached, and links you follow from them do not tell other sites where you came from.
They load nothing from other sites but product pictures, when the store keeps its pictures on an image host; the page's
address is not sent with them.</li>
</ul>`;
}

function refundPolicy(context: PageContext, facts: PolicyFacts): Html {
  const terms = paymentTerms(facts.payment);
  return html`${paymentParagraphs(terms.how, { className: 'payment' })}
<p>To return an item or ask for a refund, write to ${context.storeName} at <a href="mailto:${context.contactEmail}">${context.contactEmail}</a>
and quote your order number (such as #1001, shown on your order page). ${terms.refunds}</p>`;
}

function shippingPolicy(_context: PageContext, facts: PolicyFacts): Html {
  const { checkout } = facts;
  const [standard, express] = shippingOptions(checkout, 0);
  const taxes = Object.entries(checkout.taxRatesBps).sort(([a], [b]) => a.localeCompare(b));
  return html`<p>Orders ship to addresses in the United States only: the 50 states, the District of Columbia, Puerto Rico, Guam,
the US Virgin Islands, American Samoa and the Northern Mariana Islands.</p>
<table>
<caption>Shipping options</caption>
<thead><tr><th scope="col">Option</th><th scope="col">Delivery</th><th scope="col" class="n">Price</th></tr></thead>
<tbody>
<tr><th scope="row">${standard!.title}</th><td>${standard!.description}</td><td class="n">${formatMoney(standard!.amount)}</td></tr>
<tr><th scope="row">${express!.title}</th><td>${express!.description}</td><td class="n">${formatMoney(express!.amount)}</td></tr>
</tbody>
</table>
${
  checkout.freeShippingOverCents > 0
    ? html`<p>Standard shipping is free for orders of ${formatMoney(checkout.freeShippingOverCents)} or more in items.</p>`
    : ''
}
${
  taxes.length === 0
    ? html`<p>No sales tax is added to orders.</p>`
    : html`<p>Sales tax is added on the items (not on shipping) at the rate of the destination's state:
${taxes.map(([state, bps], index) => html`${index > 0 ? ', ' : ''}${state} ${percent(bps)}`)}. Other states: none.</p>`
}
<p>The shipping option and its price are shown on the approval page before you approve the order.</p>`;
}

const POLICY_BODIES: Record<PolicyKind, (context: PageContext, facts: PolicyFacts) => Html> = {
  terms_of_service: termsOfService,
  privacy_policy: privacyPolicy,
  refund_policy: refundPolicy,
  shipping_policy: shippingPolicy,
};

export function policyPage(context: PageContext, kind: PolicyKind, facts: PolicyFacts): string {
  const title = POLICY_TITLES[kind];
  const body = html`<h1>${title}</h1>
${POLICY_BODIES[kind](context, facts)}`;
  return layout(context, { title, body, path: `/policies/${kind.replace(/_/g, '-')}` });
}
