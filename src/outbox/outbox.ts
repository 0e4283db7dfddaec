/**
 * The outbox: messages for the world outside the database (mail to the buyer and merchant, order events to the
 * agent's platform) are written in the transaction that caused them, so they exist exactly when what they
 * announce does (a rolled-back approval leaves none), and are delivered after commit by the dispatcher
 * (outbox-dispatcher.ts), at least once, until delivered or their deadline passes.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';

export type OutboxKind = 'mail' | 'webhook';

/** Every insert is announced on this channel (a trigger, migration 007): dispatchers of every instance wake. */
export const OUTBOX_CHANNEL = 'storefront_outbox';

/** A message, rendered, ready to hand to a mail server. The sender (MAIL_FROM) is added when it is sent. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** An order event for the agent's platform: the JSON body, where it goes, and when it happened (unix seconds). */
export interface WebhookMessage {
  url: string;
  body: string;
  timestamp: number;
}

export type OutboxEntry =
  | { kind: 'mail'; orderId?: string; topic: string; message: MailMessage }
  | { kind: 'webhook'; orderId?: string; topic: string; message: WebhookMessage };

/** One id per event, kept across retries: the webhook's Webhook-Id (a UUID, as UCP's order webhook asks) and the mail's Message-ID. */
export const newEventId = () => randomUUID();

/**
 * Adds a message to the outbox in the caller's transaction; `deadlineSeconds` from now it is given up if still
 * not delivered. Returns its event id.
 */
export async function addToOutbox(tx: Queryable, entry: OutboxEntry, deadlineSeconds: number): Promise<string> {
  const eventId = newEventId();
  await tx.query(
    `insert into outbox (kind, topic, event_id, order_id, payload, deadline_at)
     values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [entry.kind, entry.topic, eventId, entry.orderId ?? null, JSON.stringify(entry.message), deadlineSeconds],
  );
  return eventId;
}
