/**
 * Order events for the agent platform that asked for them (its profile's order capability `config.webhook_url`,
 * kept on the order): each event becomes one outbox row in the transaction that made it happen, holding the full
 * order as UCP renders it, in the release of the agent that created the checkout (the order event webhook's request
 * body is the order entity, rest.openapi.json; the event's id and time travel in the Webhook-Id and Webhook-Timestamp
 * headers). The order carries its payment's state as `get_order` does (an info message `payment_<state>`): a payment
 * that failed, was disputed or whose hold was released at the provider is sent as the order with its new state (UCP's
 * order event has no event type of its own; the entity says what is true now).
 */
import type { CaptureOn } from '../../orders/order-machine.js';
import type { OrderEvent, OrderEventSubscriber } from '../../orders/order-events.js';
import { addToOutbox } from '../../outbox/outbox.js';
import { ucpOrder } from '../checkout/ucp-checkout.js';
import { releaseOf } from './agent-releases.js';

/** When the event happened: its fulfillment's or adjustment's time, the order's creation, else now (its transaction). */
function occurredAt(event: OrderEvent): Date {
  if ('fulfillment' in event) return event.fulfillment.occurredAt;
  if ('adjustment' in event) return event.adjustment.occurredAt;
  if (event.type === 'placed') return event.order.createdAt;
  return new Date();
}

/** `captureOn`: CAPTURE_ON, so the payment's words say when a card hold is charged. */
export function orderWebhookSubscriber(options: { baseUrl: string; deadlineSeconds: number; captureOn?: CaptureOn }): OrderEventSubscriber {
  return async (tx, event) => {
    const url = event.order.webhookUrl;
    // A hold about to lapse changes nothing the order entity carries: it is the merchant's alone (a mail).
    if (!url || event.type === 'payment_expiring') return;
    // In the release of the agent behind the checkout (as it last created or updated it).
    const release = await releaseOf(tx, event.order.checkoutId);
    const body = JSON.stringify(ucpOrder(event.order, { release, baseUrl: options.baseUrl, versions: new Map(), captureOn: options.captureOn }));
    const timestamp = Math.floor(occurredAt(event).getTime() / 1000);
    const message = { url, body, timestamp };
    await addToOutbox(tx, { kind: 'webhook', orderId: event.order.id, topic: `order.${event.type}`, message }, options.deadlineSeconds);
  };
}
