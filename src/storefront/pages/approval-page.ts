/**
 * The buyer's approval page (the continue_url of a checkout an agent asked to complete): what the order will be,
 * exactly, and one button to approve it and one to decline it. Also the page for a link that was used (the order
 * it placed) or no longer works (why, and what changed since it was shown).
 */
import type { ProofOffer } from '../../checkout/buyer-proof.js';
import type { CheckoutView } from '../../checkout/checkout.js';
import { formatAddress } from '../../checkout/shipping.js';
import type { Order } from '../../orders/orders.js';
import { html, type Html } from './html.js';
import { layout, policyLinks, type PageContext } from './layout.js';
import { messagePage, sentence } from './message-page.js';
import { addressBlock, checkoutLines, formatMoney, linesTable, totalsList } from './purchase-parts.js';

/** Dates as the buyer reads them, in UTC so every instance writes the same page. */
export function formatDate(date: Date): string {
  return `${new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}

export const orderPath = (orderId: string) => `/orders/${orderId}`;
export const approvalPath = (token: string) => `/checkout/approve/${token}`;

/** What the checkout will be: lines, address, shipping option, totals. */
export function checkoutSummary(view: CheckoutView, caption = 'Items'): Html {
  const option = view.selectedOption;
  return html`${linesTable(caption, checkoutLines(view))}
${
  view.address
    ? html`<h2>Ship to</h2>
${addressBlock(formatAddress(view.address))}`
    : ''
}
${view.record.buyer.email ? html`<p>Email for this order: ${view.record.buyer.email}</p>` : ''}
${
  option
    ? html`<h2>Shipping</h2>
<p>${option.title} (${option.description}): ${formatMoney(option.amount)}</p>`
    : ''
}
<h2>Total</h2>
${totalsList(view.totals, option?.title)}`;
}

export interface PendingApproval {
  token: string;
  view: CheckoutView;
  /** The secret the form sends back (also in the approval cookie). */
  formToken: string;
  /** The digest of exactly what this page shows. */
  digest: string;
  expiresAt: Date;
  /** How the order is paid, in the payment handler's words. */
  payment: { title: string; buyerNotice: string };
  /** What the person must prove, and what the page can offer now. */
  offer: ProofOffer;
  /** Why the last answer was not accepted (a wrong code, a passkey that failed), shown beside the proof. */
  problem?: string;
  /** What just happened (a code was mailed). */
  notice?: string;
}

export const passkeyOptionsPath = (token: string) => `${approvalPath(token)}/passkey`;

/** The hidden fields every form of the page carries: the form secret and the digest of what it shows. */
const formFields = (approval: PendingApproval) => html`<input type="hidden" name="form_token" value="${approval.formToken}">
<input type="hidden" name="digest" value="${approval.digest}">`;

/** Whether the page offers a passkey: the mode allows it and the email holds one. */
export const offersPasskey = (offer: ProofOffer) => offer.mode === 'passkey-or-code' && offer.passkeys > 0;

function minutes(count: number): string {
  return `${count} ${count === 1 ? 'minute' : 'minutes'}`;
}

/** The proof part of the page: a passkey (with the store's script), then the mailed code (no script needed). */
function proofSection(approval: PendingApproval): Html {
  const { offer } = approval;
  const total = formatMoney(approval.view.totals.total);
  const action = approvalPath(approval.token);
  if (offer.mode === 'link') {
    return html`<p class="problem">No proof is asked: this store runs with APPROVAL_PROOF=link, for development only. Whoever holds this link can place the order.</p>
<form method="post" action="${action}">
${formFields(approval)}
<div class="actions"><button type="submit" name="action" value="approve" class="approve">Approve and place order (${total})</button></div>
</form>`;
  }
  const code = offer.code;
  const canSend = offer.nextCodeInMinutes === 0;
  const codeStatus =
    code.state === 'active'
      ? `We emailed a 6-digit code to ${offer.email}. It works until ${formatDate(code.expiresAt)} (${code.triesLeft} ${code.triesLeft === 1 ? 'try' : 'tries'} left).`
      : code.state === 'locked'
        ? 'Too many wrong codes were tried, so that code is locked.'
        : code.state === 'expired'
          ? 'The code we emailed has expired.'
          : code.state === 'used'
            ? 'The code we emailed was already used.'
            : `We can email a 6-digit code to ${offer.email}. Only someone who can read that mailbox can approve with it.`;
  const sendButton = canSend
    ? html`<form method="post" action="${action}">
${formFields(approval)}
<button type="submit" name="action" value="send_code" class="${code.state === 'active' ? 'secondary' : 'approve'}">${code.state === 'none' ? 'Email me a code' : 'Email me a new code'}</button>
</form>`
    : html`<p class="problem" id="code-limit">Too many codes were sent for this order or this email. You can ask for a new code in ${minutes(offer.nextCodeInMinutes)}.</p>`;
  return html`<section class="proof" aria-labelledby="proof-title">
<h2 id="proof-title">Confirm it is you</h2>
<p>To place this order, confirm you are the buyer (${offer.email}). Your agent cannot do this step for you.</p>
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

export function approvalPendingPage(context: PageContext, approval: PendingApproval): string {
  const title = 'Approve your order';
  const body = html`<h1>${title}</h1>
<p>Your agent asked to place this order with ${context.storeName}. Review it, then approve or decline it.</p>
<p class="notice"><strong>Nothing is charged until you approve.</strong> ${approval.payment.title}. ${approval.payment.buyerNotice}</p>
${checkoutSummary(approval.view)}
<h2>Store policies</h2>
<p>Before you approve, you can read the store's policies:</p>
${policyLinks(context.policies)}
${proofSection(approval)}
<form method="post" action="${approvalPath(approval.token)}">
${formFields(approval)}
<div class="actions">
<button type="submit" name="action" value="decline" class="decline">Decline and cancel checkout</button>
</div>
</form>
<p>This link works once, until ${formatDate(approval.expiresAt)}. If the checkout changes before you approve, this page no longer places
the order and says what changed.</p>`;
  return layout(context, { title, body, personal: true, scripts: offersPasskey(approval.offer) });
}

/** A used link: the order it placed. */
export function approvalCompletedPage(context: PageContext, order: Order, note?: string): string {
  return messagePage(context, {
    title: `Order #${order.number} is placed`,
    paragraphs: [note ?? `You approved this order on ${formatDate(order.createdAt)}.`, order.paymentSummary],
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
  const body = html`<h1>${closed.title}</h1>
<p class="problem">${sentence(closed.reason)}</p>
${
  closed.changes.length > 0
    ? html`<h2>What changed</h2>
<ul>${closed.changes.map((change) => html`<li>${change}</li>`)}</ul>`
    : ''
}
<p>Nothing was ordered or charged. If you still want this order, ask your agent for a new approval link.</p>
${
  closed.view && closed.view.lines.length > 0
    ? html`<h2>The checkout now</h2>
${checkoutSummary(closed.view, 'Items in the checkout now')}`
    : ''
}`;
  return layout(context, { title: closed.title, body, personal: true });
}

export function approvalDeclinedPage(context: PageContext): string {
  return messagePage(context, {
    title: 'You declined this order',
    paragraphs: ['The checkout is canceled. Nothing was ordered or charged.', 'Your agent can start a new checkout if you change your mind.'],
  });
}
