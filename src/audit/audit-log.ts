/**
 * The audit log: every action a person takes on the store from the admin or the terminal (who, what, when, the
 * order or product), written in the action's own transaction so it exists exactly when the change does. Shown on
 * an order's timeline and a product's page. A summary is one line for a person: no secrets, no links.
 */
import type { Queryable } from '../db/database.js';

/** Who acted: a staff member (their id and email), or the terminal (the CLI, run with the store's environment). */
export interface Actor {
  staffId: string | null;
  /** The staff member's email, or 'terminal'. */
  label: string;
}

export const TERMINAL_ACTOR: Actor = Object.freeze({ staffId: null, label: 'terminal' });

export interface AuditEntry {
  /** 'order.capture', 'order.refund', 'product.update', 'staff.add', … */
  action: string;
  orderId?: string;
  productId?: string;
  /** One line for a person: "refunded $5.00 (damaged)". */
  summary: string;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  at: Date;
  actor: string;
  staffId: string | null;
}

// Control characters and line breaks would let a summary pose as several entries.
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]+/gu;
const oneLine = (text: string) => text.replace(UNPRINTABLE, ' ').replace(/\s+/g, ' ').trim();
const MAX_SUMMARY = 500;

/** Records an action in the caller's transaction. */
export async function recordAudit(tx: Queryable, actor: Actor, entry: AuditEntry): Promise<void> {
  await tx.query(
    `insert into audit_log (staff_id, actor, action, order_id, product_id, summary) values ($1, $2, $3, $4, $5, $6)`,
    [actor.staffId, oneLine(actor.label), entry.action, entry.orderId ?? null, entry.productId ?? null, oneLine(entry.summary).slice(0, MAX_SUMMARY)],
  );
}

const COLUMNS = 'id, at, staff_id, actor, action, order_id, product_id, summary';

function recordFromRow(row: Record<string, unknown>): AuditRecord {
  return {
    id: Number(row.id),
    at: row.at instanceof Date ? row.at : new Date(String(row.at)),
    staffId: row.staff_id === null ? null : String(row.staff_id),
    actor: String(row.actor),
    action: String(row.action),
    ...(row.order_id === null ? {} : { orderId: String(row.order_id) }),
    ...(row.product_id === null ? {} : { productId: String(row.product_id) }),
    summary: String(row.summary),
  };
}

/** What people did to an order, oldest first. */
export async function auditOfOrder(db: Queryable, orderId: string): Promise<AuditRecord[]> {
  const rows = await db.query(`select ${COLUMNS} from audit_log where order_id = $1 order by id`, [orderId]);
  return rows.map(recordFromRow);
}

/** What people did to a product, oldest first. */
export async function auditOfProduct(db: Queryable, productId: string): Promise<AuditRecord[]> {
  if (!/^\d{1,18}$/.test(productId)) return [];
  const rows = await db.query(`select ${COLUMNS} from audit_log where product_id = $1 order by id`, [productId]);
  return rows.map(recordFromRow);
}
