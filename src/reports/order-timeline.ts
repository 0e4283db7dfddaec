/**
 * Everything that happened to one order, on one timeline, oldest first: its checkout's moves, the buyer's approval
 * (how they proved it was them, when, and the digest of what they approved), the order placed, the payment's calls
 * to the provider and the provider's news, shipments, refunds and cancellations, the messages sent about it (mail and
 * order events, delivered, waiting or given up, with the last error) and what people did to it (the audit log).
 * Read only. No message body and no recipient: a delivery is named by its kind and topic.
 */
import type { Queryable } from '../db/database.js';
import { formatMoney } from '../catalog/types.js';
import { redactedError } from '../outbox/outbox-overview.js';

export type TimelineSource = 'checkout' | 'approval' | 'order' | 'payment' | 'fulfilment' | 'adjustment' | 'delivery' | 'staff';

export interface TimelineEntry {
  at: Date;
  source: TimelineSource;
  /** What happened, in a line for a person. */
  what: string;
  /** Who: agent, buyer, system, merchant (checkout moves), a staff member's email or 'terminal' (staff actions). */
  by?: string;
  /** More: a reason, a tracking number, a delivery's last error (shortened, no mail address), a digest. */
  detail?: string;
  /** A delivery's state. */
  delivery?: 'delivered' | 'pending' | 'failed';
  /** A delivery's attempts so far. */
  attempts?: number;
}

export interface Approval {
  provenBy: 'passkey' | 'code' | 'link';
  provenAt: Date;
  /** The digest of exactly what the buyer approved (lines, address, option, totals). */
  digest: string;
}

const PROVEN_WORDS: Record<Approval['provenBy'], string> = {
  passkey: 'with a passkey',
  code: 'with a code mailed to them',
  link: 'by the approval link alone (no proof asked)',
};

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));

/** How the buyer approved the order: the approval that placed it. Undefined for an unknown order. */
export async function approvalOf(db: Queryable, orderId: string): Promise<Approval | undefined> {
  const [row] = await db.query<{ proven_by: Approval['provenBy'] | null; proven_at: Date | string | null; used_at: Date | string; digest: string }>(
    `select a.proven_by, a.proven_at, a.used_at, a.digest
       from orders o join checkout_approvals a on a.checkout_id = o.checkout_id and a.used_at is not null
      where o.id = $1
      order by a.used_at desc limit 1`,
    [orderId],
  );
  if (!row) return undefined;
  return { provenBy: row.proven_by ?? 'link', provenAt: date(row.proven_at ?? row.used_at), digest: row.digest };
}

const STATUS_WORDS: Record<string, string> = {
  incomplete: 'incomplete',
  requires_escalation: "waiting for the buyer's approval",
  ready_for_complete: 'ready to complete',
  complete_in_progress: 'being completed',
  completed: 'completed',
  canceled: 'canceled',
};

const words = (status: string | null) => (status === null ? '' : (STATUS_WORDS[status] ?? status));

/** The order's timeline, oldest first (entries at one moment in the order things happen: checkout, approval, order, …). */
export async function orderTimeline(db: Queryable, orderId: string): Promise<TimelineEntry[]> {
  const [order] = await db.query<{ number: string | number; checkout_id: string; created_at: Date | string; currency: string; channel: string; agent_platform: string | null }>(
    'select number, checkout_id, created_at, currency, channel, agent_platform from orders where id = $1',
    [orderId],
  );
  if (!order) return [];
  const money = (cents: number) => formatMoney(cents, order.currency);
  const [transitions, approval, operations, providerEvents, fulfilments, adjustments, deliveries, audit] = await Promise.all([
    db.query<{ from_status: string | null; to_status: string; actor: string; reason: string | null; at: Date | string }>(
      'select from_status, to_status, actor, reason, at from checkout_transitions where checkout_id = $1 order by id',
      [order.checkout_id],
    ),
    approvalOf(db, orderId),
    db.query<{ kind: string; amount: number; state: string; reason: string | null; failure: string | null; requested_at: Date | string; settled_at: Date | string | null }>(
      'select kind, amount, state, reason, failure, requested_at, settled_at from payment_operations where order_id = $1 order by requested_at, id',
      [orderId],
    ),
    db.query<{ provider: string; type: string; received_at: Date | string }>(
      'select provider, type, received_at from payment_provider_events where order_id = $1 order by received_at',
      [orderId],
    ),
    db.query<{ line_items: { quantity: number }[] | string; tracking_number: string | null; carrier: string | null; occurred_at: Date | string }>(
      'select line_items, tracking_number, carrier, occurred_at from order_fulfillments where order_id = $1 order by occurred_at, id',
      [orderId],
    ),
    db.query<{ type: string; amount: number; reason: string | null; occurred_at: Date | string }>(
      'select type, amount, reason, occurred_at from order_adjustments where order_id = $1 order by occurred_at, id',
      [orderId],
    ),
    db.query<{ kind: string; topic: string; created_at: Date | string; sent_at: Date | string | null; failed_at: Date | string | null; attempts: number; last_error: string | null }>(
      'select kind, topic, created_at, sent_at, failed_at, attempts, last_error from outbox where order_id = $1 order by id',
      [orderId],
    ),
    db.query<{ at: Date | string; actor: string; action: string; summary: string }>('select at, actor, action, summary from audit_log where order_id = $1 order by id', [
      orderId,
    ]),
  ]);

  const entries: TimelineEntry[] = [];
  for (const move of transitions) {
    entries.push({
      at: date(move.at),
      source: 'checkout',
      what: move.from_status === null ? `Checkout created (${words(move.to_status)})` : `Checkout ${words(move.from_status)} → ${words(move.to_status)}`,
      by: move.actor,
      ...(move.reason ? { detail: move.reason } : {}),
    });
  }
  if (approval) {
    entries.push({ at: approval.provenAt, source: 'approval', what: `Approved by the buyer ${PROVEN_WORDS[approval.provenBy]}`, by: 'buyer', detail: `digest ${approval.digest}` });
  }
  const prepared = order.channel === 'agent' ? `prepared by an agent${order.agent_platform ? ` of ${order.agent_platform}` : ''}` : 'prepared in a browser';
  entries.push({ at: date(order.created_at), source: 'order', what: `Order #${Number(order.number)} placed, ${prepared}` });
  for (const operation of operations) {
    const amount = operation.kind === 'cancel' ? '' : ` of ${money(operation.amount)}`;
    entries.push({
      at: date(operation.requested_at),
      source: 'payment',
      what: `Payment ${operation.kind}${amount} asked of the provider`,
      ...(operation.reason ? { detail: operation.reason } : {}),
    });
    if (operation.settled_at !== null) {
      entries.push({
        at: date(operation.settled_at),
        source: 'payment',
        what: `Payment ${operation.kind}${amount} ${operation.state === 'succeeded' ? 'done' : 'refused by the provider'}`,
        ...(operation.failure ? { detail: redactedError(operation.failure) } : {}),
      });
    }
  }
  for (const event of providerEvents) entries.push({ at: date(event.received_at), source: 'payment', what: `News from ${event.provider}: ${event.type}` });
  for (const fulfilment of fulfilments) {
    const lines = typeof fulfilment.line_items === 'string' ? (JSON.parse(fulfilment.line_items) as { quantity: number }[]) : fulfilment.line_items;
    const units = lines.reduce((sum, line) => sum + line.quantity, 0);
    const tracking = [fulfilment.carrier, fulfilment.tracking_number].filter((part) => part).join(' ');
    entries.push({ at: date(fulfilment.occurred_at), source: 'fulfilment', what: `Shipped ${units} unit${units === 1 ? '' : 's'}`, ...(tracking ? { detail: tracking } : {}) });
  }
  for (const adjustment of adjustments) {
    const what = adjustment.type === 'refund' ? `Refunded ${money(-adjustment.amount)}` : adjustment.type === 'cancellation' ? 'Order canceled' : adjustment.type;
    entries.push({ at: date(adjustment.occurred_at), source: 'adjustment', what, ...(adjustment.reason ? { detail: adjustment.reason } : {}) });
  }
  for (const message of deliveries) {
    const delivery = message.sent_at !== null ? 'delivered' : message.failed_at !== null ? 'failed' : 'pending';
    const kind = message.kind === 'mail' ? 'Mail' : message.kind === 'webhook' ? 'Order event to the agent platform' : 'Message';
    const error = redactedError(message.last_error);
    entries.push({
      at: date(message.created_at),
      source: 'delivery',
      what: `${kind} ${message.topic}: ${delivery === 'delivered' ? 'delivered' : delivery === 'failed' ? 'given up' : 'waiting'}`,
      delivery,
      attempts: message.attempts,
      ...(error && delivery !== 'delivered' ? { detail: error } : {}),
    });
  }
  for (const action of audit) entries.push({ at: date(action.at), source: 'staff', what: action.summary, by: action.actor, detail: action.action });

  // Stable: entries at one moment keep the order they were gathered in (checkout, approval, order, payment, …).
  return entries.map((entry, index) => ({ entry, index })).sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || a.index - b.index).map(({ entry }) => entry);
}
