/**
 * A checkout's page (its continue_url while no approval is pending): the lines and totals so far, what is still
 * missing, and where it stands. It never places an order: only the approval page does, once the agent (or the buyer,
 * checking out in the browser) asks.
 */
import type { Channel, CheckoutMessage, CheckoutView } from '../../checkout/checkout.js';
import type { CheckoutStatus } from '../../checkout/machine.js';
import { checkoutSummary, orderPath } from './approval-page.js';
import { buyerSentence } from './checkout-sentences.js';
import { html, type Html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';

/** Where the checkout stands, said to the buyer of an agent's checkout and to one who checked out in this browser. */
const STANDING: Record<CheckoutStatus, { title: string; says: Record<Channel, string> }> = {
  incomplete: {
    title: 'Your checkout',
    says: {
      agent:
        'Your agent has not asked to place this order yet, and the checkout still needs the details listed below. Nothing is ordered or charged until you approve the order on the page your agent sends you.',
      browser: 'The checkout still needs the details listed below. Nothing is ordered or charged until you approve the order.',
    },
  },
  ready_for_complete: {
    title: 'Your checkout',
    says: {
      agent: 'Your agent has not asked to place this order yet. Nothing is ordered or charged until you approve the order on the page your agent sends you.',
      browser: 'You have not asked to place this order yet. Nothing is ordered or charged until you approve the order.',
    },
  },
  requires_escalation: {
    title: 'Your checkout is waiting for your approval',
    says: {
      agent: 'Your agent asked to place this order. Open the approval link your agent gave you to review it and approve or decline it.',
      browser: 'You asked to place this order. Approve or decline it on the approval page you were taken to; if you closed that page, check out again from your cart.',
    },
  },
  complete_in_progress: { title: 'Your order is being placed', says: { agent: 'You approved this order and it is being placed.', browser: 'You approved this order and it is being placed.' } },
  completed: { title: 'Your checkout is completed', says: { agent: 'You approved this order and it is placed.', browser: 'You approved this order and it is placed.' } },
  canceled: {
    title: 'Your checkout is canceled',
    says: { agent: 'This checkout is canceled. Nothing was ordered or charged.', browser: 'This checkout is canceled. Nothing was ordered or charged.' },
  },
};

export function checkoutPage(context: PageContext, view: CheckoutView): string {
  const { status, orderId, channel } = view.record;
  const standing = STANDING[status];
  const missing = view.messages.filter((message) => message.type === 'error');
  const notes = view.messages.filter((message) => message.type !== 'error');
  const open = status !== 'completed' && status !== 'canceled';
  const list = (heading: string, items: readonly CheckoutMessage[]): Html | string =>
    items.length === 0 ? '' : html`<h2>${heading}</h2>
<ul>${items.map((item) => html`<li>${buyerSentence(item, view.options)}</li>`)}</ul>`;
  const body = html`<h1>${standing.title}</h1>
<p class="notice">${standing.says[channel]}</p>
${status === 'completed' && orderId ? html`<p><a href="${orderPath(orderId)}">See your order</a></p>` : ''}
${status === 'requires_escalation' && channel === 'browser' ? html`<p><a href="/cart">Return to your cart</a></p>` : ''}
${open ? list('Still needed', missing) : ''}
${open ? list('Please note', notes) : ''}
${view.lines.length > 0 ? checkoutSummary(view) : html`<p>The checkout has no items yet.</p>`}`;
  return layout(context, { title: standing.title, body, path: `/checkouts/${view.record.id}`, personal: true });
}
