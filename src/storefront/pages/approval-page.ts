/**
 * The buyer's approval page (the continue_url of a checkout an agent, or the buyer's own browser, asked to
 * complete), made for a phone: a summary first (the total, the items with their pictures, where it ships, how and by
 * when it is paid, in the words every surface uses: src/payments/payment-words.ts), then the approve action, then
 * the details. Declining asks once more before it cancels. Also the page for a
 * link that was used (the order it placed) or no longer works (why, and what changed since it was shown).
 */
import { findSellingPlan } from '../../cart/cart.js';
import { planWords, STORE_CURRENCY } from '../../catalog/types.js';
import type { ProofOffer } from '../../checkout/buyer-proof.js';
import type { Channel, CheckoutView } from '../../checkout/checkout.js';
import { noteLines, planSavingWords } from '../../mail/mail-parts.js';
import type { Order } from '../../orders/orders.js';
import { approvalPaymentWords, paymentContextOf, paymentLine, type PaymentPlan } from '../../payments/payment-words.js';
import { html, typed, type Html } from '../../markup/html.js';
import type { Moments } from '../../markup/moments.js';
import { layout, type PageContext } from './layout.js';
import { messagePage, sentence } from './message-page.js';
import { paymentParagraphs } from './payment-parts.js';
import {
  addressBlock,
  addressLines,
  checkoutLines,
  formatMoney,
  linesTable,
  propertyDetail,
  thumbnailImage,
  totalsList,
  type DisplayLine,
  type Thumbnail,
} from './purchase-parts.js';

/**
 * A clock time in the store's zone (STORE_TIMEZONE, the pages' `moments`), "22:42 CET"; with its date when that is
 * not `now`'s day in that zone: "26 November 2026, 00:05 CET".
 */
export function clockTime(date: Date, now: Date, moments: Moments): string {
  return moments.dayKey(date) === moments.dayKey(now) ? moments.time(date) : moments.moment(date);
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** How much longer something works, counted down to whole minutes: "14 more minutes", "2 more hours and 5 minutes". */
export function timeLeft(until: Date, now: Date): string {
  const minutes = Math.floor((until.getTime() - now.getTime()) / 60_000);
  if (minutes < 1) return 'less than a minute more';
  if (minutes < 120) return `${minutes} more ${minutes === 1 ? 'minute' : 'minutes'}`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return `${hours} more hours${rest > 0 ? ` and ${count(rest, 'minute', 'minutes')}` : ''}`;
}

export const orderPath = (orderId: string) => `/orders/${orderId}`;
export const approvalPath = (token: string) => `/checkout/approve/${token}`;

/** Who asked for the order: the buyer themselves (a browser checkout) or their agent. */
const askedBy = (channel: Channel) => (channel === 'browser' ? 'You asked to place this order.' : 'Your agent asked to place this order.');

/** What a buyer does when a link no longer places the order: back to the cart, or back to the agent. */
const startAgain = (channel: Channel): Html =>
  channel === 'browser'
    ? html`If you still want these items, <a href="/cart">return to your cart</a> and check out again.`
    : html`If you still want this order, ask your agent for a new approval link.`;

/**
 * A domain reason as this buyer reads it: the checkout service writes some for an agent's buyer ("Ask your agent
 * for a new one."); a buyer who checked out in the browser is told to return to the cart instead (startAgain).
 */
function forThisBuyer(reason: string, channel: Channel): string {
  return channel === 'browser' ? reason.replace(/\s*Ask your agent[^.]*\./g, '') : reason;
}

/** "Sold by …" with the merchant's contact and postal address: who the buyer is dealing with, near the top. */
function sellerLine(context: PageContext): Html {
  return html`<p class="seller">Sold by <strong>${context.storeName}</strong> · <a href="mailto:${context.contactEmail}">${context.contactEmail}</a>${
    context.address.length > 0 ? html`<span class="postal">${context.address.join(', ')}</span>` : ''
  }</p>`;
}

/** A heading of the details: h2 on its own page, h3 under the approval page's "Order details". */
type HeadingLevel = 2 | 3;
const heading = (level: HeadingLevel, text: string) => (level === 2 ? html`<h2>${text}</h2>` : html`<h3>${text}</h3>`);

/**
 * A line's details with its plan in full first ("Delivery every month (every month, save 10%) — you save $0.65"), in
 * place of the plan's bare name the shared lines give (`shortNames`: the names that stand for the plan there).
 */
export function withPlanWords(line: DisplayLine, planSaving: string | undefined, shortNames: readonly (string | undefined)[] = []): DisplayLine {
  if (!planSaving) return line;
  return { ...line, details: [planSaving, ...line.details.filter((detail) => typeof detail !== 'string' || !shortNames.includes(detail))] };
}

/** The checkout's lines as a page lists them, a line bought on a plan saying its plan, interval and saving. */
export function checkoutPlanLines(view: CheckoutView): DisplayLine[] {
  return checkoutLines(view).map((line, index) => {
    const priced = view.lines[index]!;
    if (!priced.plan) return line;
    const catalogPlan = priced.item && priced.line.sellingPlanId !== null ? findSellingPlan(priced.item.product, priced.line.sellingPlanId)?.plan.name : undefined;
    const saving = (priced.fullUnitPrice - priced.unitPrice) * priced.line.quantity;
    return withPlanWords(line, planSavingWords(priced.plan, saving), [catalogPlan, priced.plan.name, planWords(priced.plan)]);
  });
}

/**
 * The buyer's note (its line breaks kept) and the cart's attributes, as the buyer or the theme wrote them (isolated in
 * <bdi>), under their headings; nothing when the cart had none.
 */
export function buyerNotes(note: string | null | undefined, attributes: Record<string, string> | undefined, level: HeadingLevel = 2): Html | '' {
  const lines = noteLines(note);
  const entries = Object.entries(attributes ?? {});
  if (lines.length === 0 && entries.length === 0) return '';
  return html`${
    lines.length > 0
      ? html`${heading(level, 'Note')}
<p class="note">${lines.map((line, index) => html`${index > 0 ? html`<br>` : ''}${typed(line)}`)}</p>`
      : ''
  }
${
  entries.length > 0
    ? html`${heading(level, 'Additional details')}
<ul class="attributes">${entries.map(([name, value]) => html`<li>${propertyDetail(name, value)}</li>`)}</ul>`
    : ''
}`;
}

/** What the checkout will be: lines, the buyer's note, address, shipping option, totals. */
export function checkoutSummary(view: CheckoutView, caption = 'Items', level: HeadingLevel = 2): Html {
  const option = view.selectedOption;
  return html`${linesTable(caption, checkoutPlanLines(view))}
${buyerNotes(view.record.note, view.record.attributes, level)}
${
  view.address
    ? html`${heading(level, 'Ship to')}
${addressBlock(addressLines(view.address))}`
    : ''
}
${view.record.buyer.email ? html`<p>Email for this order: ${typed(view.record.buyer.email)}</p>` : ''}
${
  option
    ? html`${heading(level, 'Shipping')}
<p>${option.title} (${option.description}): ${formatMoney(option.amount)}</p>`
    : ''
}
${heading(level, 'Total')}
${totalsList(view.totals, option?.title)}`;
}

/** The products' pictures, each once, at most four (the lines table below shows them all). */
function summaryPictures(view: CheckoutView): Thumbnail[] {
  const seen = new Map<string, Thumbnail>();
  for (const line of checkoutLines(view)) if (line.image && !seen.has(line.image.src)) seen.set(line.image.src, line.image);
  return [...seen.values()].slice(0, 4);
}

/**
 * What approving lines bought on a plan means: a cart's start a subscription, each later delivery of which the buyer
 * approves first, as this one; a renewal's lines (which carry the subscription's own terms) are its next delivery.
 * Nothing when no line is on a plan.
 */
function subscriptionSentence(view: CheckoutView): Html | '' {
  const planned = view.lines.filter((priced) => priced.plan);
  if (planned.length === 0) return '';
  const named = planned.map((priced) => `${priced.title}: ${planWords(priced.plan!)}`).join('; ');
  return planned.every((priced) => priced.line.plan)
    ? html`<p class="summary-plan">The next delivery of your subscription (${named}). If you do not approve it, this delivery is skipped and your subscription stays active.</p>`
    : html`<p class="summary-plan">You subscribe to ${named}. Each later delivery waits for your approval, and you can skip or cancel any time.</p>`;
}

/**
 * The top of the page: the total, the items (with pictures), where it ships, and how and by when it is paid if
 * approved `now` (manual: the amount, the instructions, the due date, and the order number as the reference).
 */
function summary(view: CheckoutView, payment: { plan: PaymentPlan; now: Date; moments: Moments } | undefined): Html {
  const items = view.lines.reduce((n, priced) => n + priced.line.quantity, 0);
  const shipTo = view.address ? addressLines(view.address).filter((line) => line !== 'United States') : undefined;
  return html`<section class="summary" aria-labelledby="summary-title">
<h2 id="summary-title" class="visually-hidden">Summary</h2>
<p class="summary-total">Total <strong>${formatMoney(view.totals.total)}</strong></p>
<p class="summary-items"><span>${count(items, 'item', 'items')}</span>${summaryPictures(view).map((image) => thumbnailImage(image))}</p>
${subscriptionSentence(view)}
${shipTo ? html`<p class="summary-ship">Ship to ${shipTo.map((line, index) => html`${index > 0 ? ', ' : ''}${line}`)}${view.selectedOption ? ` · ${view.selectedOption.title}` : ''}</p>` : ''}
${payment ? paymentParagraphs(approvalPaymentWords(payment.plan, { total: view.totals.total, currency: STORE_CURRENCY, now: payment.now, moments: payment.moments }), { className: 'summary-pay' }) : ''}
</section>`;
}

export interface PendingApproval {
  token: string;
  view: CheckoutView;
  /** The secret the form sends back (also in the approval cookie). */
  formToken: string;
  /** The digest of exactly what this page shows. */
  digest: string;
  expiresAt: Date;
  /** When the page is rendered: the time left on the link is counted from it. */
  now: Date;
  /** How the order will be paid (the provider, the manual provider's instructions and due days, CAPTURE_ON). */
  payment: PaymentPlan;
  /** What the person must prove, and what the page can offer now. */
  offer: ProofOffer;
  /** Why the last answer was not accepted (a wrong code, a passkey that failed), shown beside the proof. */
  problem?: string;
  /** What just happened (a code was mailed). */
  notice?: string;
  /** With a hosted payment page: the buyer already proved it is them (no proof is asked again). */
  proven?: boolean;
  /** The payment page the buyer pays on now (a plain link: the page's policy names no other origin). */
  paymentUrl?: string;
}

export const passkeyOptionsPath = (token: string) => `${approvalPath(token)}/passkey`;

/** The hidden fields every form of the page carries: the form secret and the digest of what it shows. */
const formFields = (approval: Pick<PendingApproval, 'formToken' | 'digest'>) => html`<input type="hidden" name="form_token" value="${approval.formToken}">
<input type="hidden" name="digest" value="${approval.digest}">`;

/** Whether the page offers a passkey: the mode allows it, for every email alike (the page never says whether one holds a passkey). */
export const offersPasskey = (offer: ProofOffer) => offer.mode === 'passkey-or-code';

const minutes = (n: number) => count(n, 'minute', 'minutes');

/** The proof part of the page: a passkey (with the store's script), then the mailed code (no script needed). */
function proofSection(approval: PendingApproval, moments: Moments): Html {
  const { offer } = approval;
  const total = formatMoney(approval.view.totals.total);
  const action = approvalPath(approval.token);
  if (offer.mode === 'link') {
    return html`<section class="proof" aria-label="Approve">
<p class="problem">No proof is asked: this store runs with APPROVAL_PROOF=link, for development only. Whoever holds this link can place the order.</p>
<form method="post" action="${action}">
${formFields(approval)}
<div class="actions"><button type="submit" name="action" value="approve" class="approve">Approve and place order (${total})</button></div>
</form>
</section>`;
  }
  const code = offer.code;
  const canSend = offer.nextCodeInMinutes === 0;
  const codeStatus =
    code.state === 'active'
      ? html`We emailed a 6-digit code to ${typed(offer.email)}. It works until ${clockTime(code.expiresAt, approval.now, moments)} (${count(code.triesLeft, 'try', 'tries')} left).`
      : code.state === 'locked'
        ? 'Too many wrong codes were tried, so that code is locked.'
        : code.state === 'expired'
          ? 'The code we emailed has expired.'
          : code.state === 'used'
            ? 'The code we emailed was already used.'
            : html`We can email a 6-digit code to ${typed(offer.email)}: only someone who reads that mailbox can approve this order.${
                approval.view.record.channel === 'agent' ? ' Your agent cannot do this step for you.' : ''
              }`;
  const sendButton = canSend
    ? html`<form method="post" action="${action}">
${formFields(approval)}
<div class="actions"><button type="submit" name="action" value="send_code" class="${code.state === 'active' ? 'secondary' : 'approve'}">${code.state === 'none' ? 'Email me a code' : 'Email me a new code'}</button></div>
</form>`
    : html`<p class="problem" id="code-limit">Too many codes were sent for this order or this email. You can ask for a new code in ${minutes(offer.nextCodeInMinutes)}.</p>`;
  return html`<section class="proof" aria-labelledby="proof-title">
<h2 id="proof-title">Confirm it is you</h2>
${approval.problem ? html`<p class="problem" role="alert" id="proof-problem">${approval.problem}</p>` : ''}
${approval.notice ? html`<p class="notice" role="status">${approval.notice}</p>` : ''}
${
  offersPasskey(offer)
    ? html`<div id="passkey-approval" data-options="${passkeyOptionsPath(approval.token)}" hidden>
<h3>With your passkey</h3>
<form method="post" action="${action}" id="passkey-form">
${formFields(approval)}
<input type="hidden" name="action" value="approve">
<input type="hidden" name="challenge_id" value="">
<input type="hidden" name="assertion" value="">
<div class="actions"><button type="button" id="passkey-button" class="approve">Approve with your passkey (${total})</button></div>
<p id="passkey-status" role="status" aria-live="polite"></p>
</form>
<h3>Or with a code we email you</h3>
</div>`
    : ''
}
<p>${codeStatus}</p>
${
  code.state === 'active'
    ? html`<form method="post" action="${action}">
${formFields(approval)}
<label for="code">Code from the email</label>
<input id="code" name="code" class="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${approval.problem ? html` aria-describedby="proof-problem"` : ''}>
<div class="actions"><button type="submit" name="action" value="approve" class="approve">Approve and place order (${total})</button></div>
</form>`
    : ''
}
${sendButton}
</section>`;
}

/** The buyer proved it is them: the payment page next (its link), or the button that opens it again. */
function paymentSection(approval: PendingApproval): Html {
  const total = formatMoney(approval.view.totals.total);
  const said = html`${approval.problem ? html`<p class="problem" role="alert" id="proof-problem">${approval.problem}</p>` : ''}
${approval.notice ? html`<p class="notice" role="status">${approval.notice}</p>` : ''}`;
  if (approval.paymentUrl) {
    return html`<section class="proof" aria-labelledby="proof-title">
<h2 id="proof-title">Pay for your order</h2>
${said}
<p>You confirmed it is you. Pay on the secure payment page; your order is placed as soon as the payment is authorized.</p>
<p class="actions"><a class="button approve" id="pay-link" href="${approval.paymentUrl}">Continue to payment (${total})</a></p>
</section>`;
  }
  return html`<section class="proof" aria-labelledby="proof-title">
<h2 id="proof-title">Pay for your order</h2>
${said}
<p>You confirmed it is you. Nothing was charged yet.</p>
<form method="post" action="${approvalPath(approval.token)}">
${formFields(approval)}
<div class="actions"><button type="submit" name="action" value="approve" class="approve">Continue to payment (${total})</button></div>
</form>
</section>`;
}

/**
 * The pending approval: the summary and the approve action first (a phone shows them without scrolling), then how
 * long the link works and the decline button, then every detail of the order.
 */
export function approvalPendingPage(context: PageContext, approval: PendingApproval): string {
  const title = 'Approve your order';
  const { view } = approval;
  const body = html`<h1>${title}</h1>
${sellerLine(context)}
<p class="lead">${askedBy(view.record.channel)} Review it, then approve or decline.</p>
${summary(view, { plan: approval.payment, now: approval.now, moments: context.moments })}
${approval.proven ? paymentSection(approval) : proofSection(approval, context.moments)}
<p class="expiry">This link works for ${timeLeft(approval.expiresAt, approval.now)} (until ${clockTime(approval.expiresAt, approval.now, context.moments)}).
If the checkout changes before you approve, this page no longer places the order and says what changed.</p>
<form method="post" action="${approvalPath(approval.token)}">
${formFields(approval)}
<div class="actions"><button type="submit" name="action" value="decline" class="decline">Decline this order</button></div>
</form>
<section class="details" aria-labelledby="details-title">
<h2 id="details-title">Order details</h2>
${checkoutSummary(view, 'Items', 3)}
<p>Before you approve, you can read the store's terms, privacy, refund and shipping policies: they are linked at the foot of this page.</p>
</section>`;
  return layout(context, { title, body, path: approvalPath(approval.token), personal: true, scripts: offersPasskey(approval.offer) });
}

/** The step declining asks for: the same form again, to confirm; the checkout is canceled only then. */
export function declineConfirmPage(context: PageContext, approval: Pick<PendingApproval, 'token' | 'view' | 'formToken' | 'digest'>): string {
  const title = 'Decline this order?';
  const body = html`<h1>${title}</h1>
${sellerLine(context)}
<p>Declining cancels this checkout: nothing is ordered or charged, and this approval link stops working.</p>
${summary(approval.view, undefined)}
<form method="post" action="${approvalPath(approval.token)}">
${formFields(approval)}
<div class="actions"><button type="submit" name="action" value="decline_confirmed" class="decline">Yes, decline and cancel checkout</button></div>
</form>
<p><a href="${approvalPath(approval.token)}">No, go back to the order</a></p>`;
  return layout(context, { title, body, path: approvalPath(approval.token), personal: true });
}

/** A used link: the order it placed. */
export function approvalCompletedPage(context: PageContext, order: Order, note?: string): string {
  return messagePage(context, {
    title: `Order #${order.number} is placed`,
    paragraphs: [note ?? `You approved this order on ${context.moments.moment(order.createdAt)}.`, paymentLine(order.payment, paymentContextOf(order, undefined, context.moments))],
    extra: html`<p><a href="${orderPath(order.id)}">See order #${order.number}</a></p>`,
  });
}

/**
 * A link that no longer places the order (changed, expired, declined, replaced) or an approval that failed: why,
 * what changed since the page was shown, and the checkout as it is now.
 */
export function approvalClosedPage(
  context: PageContext,
  closed: { title: string; reason: string; changes: readonly string[]; view: CheckoutView | undefined },
): string {
  const channel = closed.view?.record.channel ?? 'agent';
  const body = html`<h1>${closed.title}</h1>
<p class="problem">${sentence(forThisBuyer(closed.reason, channel))}</p>
${
  closed.changes.length > 0
    ? html`<h2>What changed</h2>
<ul>${closed.changes.map((change) => html`<li>${change}</li>`)}</ul>`
    : ''
}
<p>Nothing was ordered or charged. ${startAgain(channel)}</p>
${
  closed.view && closed.view.lines.length > 0
    ? html`<h2>The checkout now</h2>
${checkoutSummary(closed.view, 'Items in the checkout now', 3)}`
    : ''
}`;
  return layout(context, { title: closed.title, body, personal: true });
}

export function approvalDeclinedPage(context: PageContext, channel: Channel): string {
  return messagePage(context, {
    title: 'You declined this order',
    paragraphs: ['The checkout is canceled. Nothing was ordered or charged.'],
    extra:
      channel === 'browser'
        ? html`<p>If you change your mind, <a href="/cart">return to your cart</a> and check out again.</p>`
        : html`<p>Your agent can start a new checkout if you change your mind.</p>`,
  });
}
