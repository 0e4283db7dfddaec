/** The words the orders list and an order's page share: its state, its fulfilment, and who prepared it. */
import { html, typed, type Html } from '../markup/html.js';
import type { FulfilmentState } from '../orders/order-machine.js';
import type { OrderStatus } from '../orders/orders.js';

export const ORDER_STATUS_LABELS: Record<OrderStatus, string> = { placed: 'Placed', canceled: 'Canceled' };

export const FULFILMENT_LABELS: Record<FulfilmentState, string> = {
  unfulfilled: 'Not shipped',
  partially_fulfilled: 'Partly shipped',
  fulfilled: 'Shipped',
  partially_canceled: 'Shipped, the rest canceled',
  canceled: 'Canceled',
};

/** "A browser", or "An agent" and its platform (the host of its profile) when known. */
export function preparedBy(channel: 'agent' | 'browser', platform: string | null): Html {
  if (channel === 'browser') return html`A browser`;
  return platform ? html`An agent of ${typed(platform)}` : html`An agent`;
}
