/** Passkeys, mailed codes, WebAuthn challenges and passkey enrollments in PostgreSQL. I/O only; the rules live in buyer-proof.ts. */
import type { Queryable } from '../db/database.js';

const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
const toBytes = (value: unknown): Uint8Array<ArrayBuffer> => (value instanceof Uint8Array ? new Uint8Array(value) : new Uint8Array(Buffer.from(String(value).replace(/^\\x/, ''), 'hex')));

// --- passkeys ---

export interface StoredPasskey {
  id: string;
  email: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const PASSKEY_COLUMNS = 'id, email, public_key, counter, transports, device_type, backed_up, created_at, last_used_at';

function passkeyFromRow(row: Record<string, unknown>): StoredPasskey {
  return {
    id: String(row.id),
    email: String(row.email),
    publicKey: toBytes(row.public_key),
    counter: Number(row.counter),
    transports: Array.isArray(row.transports) ? row.transports.map(String) : [],
    deviceType: String(row.device_type),
    backedUp: row.backed_up === true,
    createdAt: toDate(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : toDate(row.last_used_at),
  };
}

export async function passkeysOf(db: Queryable, email: string): Promise<StoredPasskey[]> {
  const rows = await db.query(`select ${PASSKEY_COLUMNS} from buyer_passkeys where email = $1 order by created_at, id`, [email]);
  return rows.map(passkeyFromRow);
}

export async function lockPasskey(db: Queryable, id: string, email: string): Promise<StoredPasskey | undefined> {
  const rows = await db.query(`select ${PASSKEY_COLUMNS} from buyer_passkeys where id = $1 and email = $2 for update`, [id, email]);
  return rows[0] ? passkeyFromRow(rows[0]) : undefined;
}

export async function passkeyUsed(db: Queryable, id: string, counter: number, now: Date): Promise<void> {
  await db.query('update buyer_passkeys set counter = $2, last_used_at = $3 where id = $1', [id, counter, now.toISOString()]);
}

/** Adds a passkey; false when that credential is already registered. */
export async function insertPasskey(db: Queryable, passkey: Omit<StoredPasskey, 'lastUsedAt'>): Promise<boolean> {
  const rows = await db.query(
    `insert into buyer_passkeys (id, email, public_key, counter, transports, device_type, backed_up, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (id) do nothing returning id`,
    [passkey.id, passkey.email, Buffer.from(passkey.publicKey), passkey.counter, passkey.transports, passkey.deviceType, passkey.backedUp, passkey.createdAt.toISOString()],
  );
  return rows.length === 1;
}

export async function allPasskeys(db: Queryable): Promise<StoredPasskey[]> {
  const rows = await db.query(`select ${PASSKEY_COLUMNS} from buyer_passkeys order by email, created_at, id`);
  return rows.map(passkeyFromRow);
}

/** Removes a buyer's passkeys (or one of them); how many were removed. */
export async function deletePasskeys(db: Queryable, email: string, id?: string): Promise<number> {
  const rows = id === undefined
    ? await db.query('delete from buyer_passkeys where email = $1 returning id', [email])
    : await db.query('delete from buyer_passkeys where email = $1 and id = $2 returning id', [email, id]);
  return rows.length;
}

// --- mailed codes ---

export interface StoredCode {
  id: number;
  approvalToken: string;
  email: string;
  codeHash: Uint8Array;
  createdAt: Date;
  expiresAt: Date;
  attempts: number;
  usedAt: Date | null;
}

const CODE_COLUMNS = 'id, approval_token, email, code_hash, created_at, expires_at, attempts, used_at';

function codeFromRow(row: Record<string, unknown>): StoredCode {
  return {
    id: Number(row.id),
    approvalToken: String(row.approval_token),
    email: String(row.email),
    codeHash: toBytes(row.code_hash),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    attempts: Number(row.attempts),
    usedAt: row.used_at === null ? null : toDate(row.used_at),
  };
}

/** The newest code sent for an approval (the only one that counts). */
export async function latestCode(db: Queryable, approvalToken: string, options: { lock?: boolean } = {}): Promise<StoredCode | undefined> {
  const rows = await db.query(
    `select ${CODE_COLUMNS} from approval_codes where approval_token = $1 order by created_at desc, id desc limit 1${options.lock ? ' for update' : ''}`,
    [approvalToken],
  );
  return rows[0] ? codeFromRow(rows[0]) : undefined;
}

export async function insertCode(
  db: Queryable,
  code: { approvalToken: string; checkoutId: string; email: string; mailbox: string; codeHash: Uint8Array; createdAt: Date; expiresAt: Date },
): Promise<number> {
  const rows = await db.query<{ id: number | string }>(
    `insert into approval_codes (approval_token, checkout_id, email, mailbox, code_hash, created_at, expires_at) values ($1, $2, $3, $4, $5, $6, $7) returning id`,
    [code.approvalToken, code.checkoutId, code.email, code.mailbox, Buffer.from(code.codeHash), code.createdAt.toISOString(), code.expiresAt.toISOString()],
  );
  return Number(rows[0]!.id);
}

/** A code that could not be mailed is taken back: it does not count against the limits. */
export async function deleteCode(db: Queryable, id: number): Promise<void> {
  await db.query('delete from approval_codes where id = $1', [id]);
}

export async function codeMissed(db: Queryable, id: number): Promise<void> {
  await db.query('update approval_codes set attempts = attempts + 1 where id = $1', [id]);
}

/** Marks a code used if it still can be (unused, unexpired, not locked); false otherwise. */
export async function useCode(db: Queryable, id: number, now: Date, maxAttempts: number): Promise<boolean> {
  const rows = await db.query('update approval_codes set used_at = $2 where id = $1 and used_at is null and expires_at > $2 and attempts < $3 returning id', [
    id,
    now.toISOString(),
    maxAttempts,
  ]);
  return rows.length === 1;
}

/** Codes sent since `since` (for one checkout or one mailbox), and the oldest of them (when the window frees up). */
export async function codesSentSince(db: Queryable, column: 'checkout_id' | 'mailbox', value: string, since: Date): Promise<{ count: number; oldest: Date | undefined }> {
  const rows = await db.query<{ count: number | string; oldest: Date | string | null }>(
    `select count(*) as count, min(created_at) as oldest from approval_codes where ${column} = $1 and created_at > $2`,
    [value, since.toISOString()],
  );
  const row = rows[0]!;
  return { count: Number(row.count), oldest: row.oldest === null ? undefined : toDate(row.oldest) };
}

/** Serializes the sending of codes to one mailbox (across instances) until the transaction ends. */
export async function lockMailbox(db: Queryable, mailbox: string): Promise<void> {
  await db.query("select pg_advisory_xact_lock(hashtextextended('approval-code:' || $1, 0))", [mailbox]);
}

// --- WebAuthn challenges ---

export interface StoredChallenge {
  id: string;
  purpose: 'approve' | 'register';
  approvalToken: string | null;
  email: string;
  challenge: string;
  expiresAt: Date;
  usedAt: Date | null;
}

export async function insertChallenge(db: Queryable, challenge: Omit<StoredChallenge, 'usedAt'> & { createdAt: Date }): Promise<void> {
  await db.query('insert into webauthn_challenges (id, purpose, approval_token, email, challenge, created_at, expires_at) values ($1, $2, $3, $4, $5, $6, $7)', [
    challenge.id,
    challenge.purpose,
    challenge.approvalToken,
    challenge.email,
    challenge.challenge,
    challenge.createdAt.toISOString(),
    challenge.expiresAt.toISOString(),
  ]);
}

export async function lockChallenge(db: Queryable, id: string): Promise<StoredChallenge | undefined> {
  const rows = await db.query('select id, purpose, approval_token, email, challenge, expires_at, used_at from webauthn_challenges where id = $1 for update', [id]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: String(row.id),
    purpose: row.purpose === 'register' ? 'register' : 'approve',
    approvalToken: row.approval_token === null ? null : String(row.approval_token),
    email: String(row.email),
    challenge: String(row.challenge),
    expiresAt: toDate(row.expires_at),
    usedAt: row.used_at === null ? null : toDate(row.used_at),
  };
}

export async function challengeUsed(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query('update webauthn_challenges set used_at = $2 where id = $1', [id, now.toISOString()]);
}

// --- passkey enrollments ---

export async function insertEnrollment(db: Queryable, enrollment: { secretHash: Uint8Array; email: string; orderId: string; createdAt: Date; expiresAt: Date }): Promise<void> {
  await db.query('insert into passkey_enrollments (secret_hash, email, order_id, created_at, expires_at) values ($1, $2, $3, $4, $5)', [
    Buffer.from(enrollment.secretHash),
    enrollment.email,
    enrollment.orderId,
    enrollment.createdAt.toISOString(),
    enrollment.expiresAt.toISOString(),
  ]);
}

/** The email an unused, unexpired enrollment of this order grants; undefined otherwise. */
export async function enrollmentEmail(db: Queryable, secretHash: Uint8Array, orderId: string, now: Date, options: { lock?: boolean } = {}): Promise<string | undefined> {
  const rows = await db.query<{ email: string }>(
    `select email from passkey_enrollments where secret_hash = $1 and order_id = $2 and used_at is null and expires_at > $3${options.lock ? ' for update' : ''}`,
    [Buffer.from(secretHash), orderId, now.toISOString()],
  );
  return rows[0]?.email;
}

export async function enrollmentUsed(db: Queryable, secretHash: Uint8Array, now: Date): Promise<void> {
  await db.query('update passkey_enrollments set used_at = $2 where secret_hash = $1', [Buffer.from(secretHash), now.toISOString()]);
}

/** Challenges, enrollments and codes a day past their expiry are of no use (the sending limits look back an hour). */
export async function purgeExpiredProofs(db: Queryable): Promise<void> {
  await db.query("delete from webauthn_challenges where expires_at < now() - interval '1 day'");
  await db.query("delete from passkey_enrollments where expires_at < now() - interval '1 day'");
  await db.query("delete from approval_codes where expires_at < now() - interval '1 day'");
}
