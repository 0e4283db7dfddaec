/**
 * A checkout's page (its continue_url while no approval is pending): the lines and totals so far, what is still
 * missing, and where it stands. It never places an order: only the approval page does, once the agent asks.
 */
import type { CheckoutMessage, CheckoutView } from '../../checkout/checkout.js';
import type { CheckoutStatus } from '../../checkout/machine.js';
import { checkoutSummary, orderPath } from './approval-page.js';
import { buyerSentence } from './checkout-sentences.js';
import { html, type Html } from './html.js';
import { layout, type PageContext } from './layout.js';

const STANDING: Record<CheckoutStatus, { title: string; says: string }> = {
  incomplete: {
    title: 'Your checkout',
    says: 'Your agent has not asked to place this order yet, and the checkout still needs the details listed below. Nothing is ordered or charged until you approve the order on the page your agent sends you.',
  },
  ready_for_complete: {
    title: 'Your checkout',
    says: 'Your agent has not asked to place this order yet. Nothing is ordered or charged until you approve the order on the page your agent sends you.',
  },
  requires_escalation: {
    title: 'Your checkout is waiting for your approval',
    says: 'Your agent asked to place this order. Open the approval link your agent gave you to review it and approve or decline it.',
  },
  complete_in_progress: { title: 'Your order is being placed', says: 'You approved this order and it is being placed.' },
  completed: { title: 'Your checkout is completed', says: 'You approved this order and it is placed.' },
  canceled: { title: 'Your checkout is canceled', says: 'This checkout is canceled. Nothing was ordered or charged.' },
};

export function checkoutPage(context: PageContext, view: CheckoutView): string {
  const { status, orderId } = view.record;
  const standing = STANDING[status];
  const missing = view.messages.filter((message) => message.type === 'error');
  const notes = view.messages.filter((message) => message.type !== 'error');
  const open = status !== 'completed' && status !== 'canceled';
  const list = (heading: string, items: readonly CheckoutMessage[]): Html | string =>
    items.length === 0 ? '' : html`<h2>${heading}</h2>
<ul>${items.map((item) => html`<li>${buyerSentence(item, view.options)}</li>`)}</ul>`;
  const body = html`<h1>${standing.title}</h1>
<p class="notice">${standing.says}</p>
${status === 'completed' && orderId ? html`<p><a href="${orderPath(orderId)}">See your order</a></p>` : ''}
${open ? list('Still needed', missing) : ''}
${open ? list('Please note', notes) : ''}
${view.lines.length > 0 ? checkoutSummary(view) : html`<p>The checkout has no items yet.</p>`}`;
  return layout(context, { title: standing.title, body, personal: true });
}
