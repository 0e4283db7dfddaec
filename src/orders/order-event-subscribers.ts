/** Who hears of an order's events, in the event's transaction: the buyer's and merchant's mail, the platform's webhook. */
import type { Config } from '../config.js';
import { orderMailSubscriber } from '../mail/order-mail-subscriber.js';
import { mailShop } from '../mail/mail-parts.js';
import { orderWebhookSubscriber } from '../ucp/webhooks/order-webhooks.js';
import type { OrderEventSubscriber } from './order-events.js';

export function orderEventSubscribers(config: Config): OrderEventSubscriber[] {
  return [
    orderMailSubscriber(mailShop(config), config.outbox.mailDeadlineSeconds),
    orderWebhookSubscriber({ baseUrl: config.baseUrl, deadlineSeconds: config.outbox.webhookDeadlineSeconds, captureOn: config.payment.captureOn }),
  ];
}
