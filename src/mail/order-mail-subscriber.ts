/** Turns each order event into its mail (buyer, merchant), written to the outbox in the event's transaction. */
import type { OrderEventSubscriber } from '../orders/order-events.js';
import { addToOutbox } from '../outbox/outbox.js';
import type { MailShop } from './mail-parts.js';
import { orderMails } from './order-mail.js';

export function orderMailSubscriber(shop: MailShop, deadlineSeconds: number): OrderEventSubscriber {
  return async (tx, event) => {
    for (const message of orderMails(event, shop)) {
      await addToOutbox(tx, { kind: 'mail', orderId: event.order.id, topic: `order.${event.type}`, message }, deadlineSeconds);
    }
  };
}
