/**
 * The outbox: messages for the world outside the database (the order confirmation email, order events to the
 * platform) are written in the transaction that caused them, so they exist exactly when what they announce
 * does, and are sent after commit by whoever reads the outbox.
 */
import type { Queryable } from '../db/database.js';

export type OutboxTopic = 'order.placed';

export async function addToOutbox(tx: Queryable, topic: OutboxTopic, payload: Record<string, unknown>): Promise<void> {
  await tx.query('insert into outbox (topic, payload) values ($1, $2)', [topic, JSON.stringify(payload)]);
}

export interface OutboxMessage {
  id: number;
  topic: OutboxTopic;
  payload: Record<string, unknown>;
  createdAt: Date;
  sentAt: Date | null;
}

/** Messages not yet sent, oldest first. */
export async function readUnsent(db: Queryable, limit = 100): Promise<OutboxMessage[]> {
  const rows = await db.query<{ id: number; topic: OutboxTopic; payload: Record<string, unknown> | string; created_at: Date | string; sent_at: Date | string | null }>(
    'select id, topic, payload, created_at, sent_at from outbox where sent_at is null order by id limit $1',
    [limit],
  );
  return rows.map((row) => ({
    id: row.id,
    topic: row.topic,
    payload: typeof row.payload === 'string' ? (JSON.parse(row.payload) as Record<string, unknown>) : row.payload,
    createdAt: new Date(row.created_at),
    sentAt: row.sent_at === null ? null : new Date(row.sent_at),
  }));
}
