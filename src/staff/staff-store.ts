/** Staff, their passkeys, links, WebAuthn challenges and sessions in PostgreSQL. I/O only; the rules live in staff-service.ts. */
import type { Queryable } from '../db/database.js';
import type { StaffMember, StaffRole } from './staff.js';

const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
const toDateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : toDate(value));
const toBytes = (value: unknown): Uint8Array<ArrayBuffer> =>
  value instanceof Uint8Array ? new Uint8Array(value) : new Uint8Array(Buffer.from(String(value).replace(/^\\x/, ''), 'hex'));

// --- members ---

const MEMBER_COLUMNS = `s.id, s.email, s.role, s.added_at, s.revoked_at, s.last_sign_in_at,
  (select count(*) from staff_passkeys p where p.staff_id = s.id) as passkeys`;

function memberFromRow(row: Record<string, unknown>): StaffMember {
  return {
    id: String(row.id),
    email: String(row.email),
    role: String(row.role) as StaffRole,
    addedAt: toDate(row.added_at),
    revokedAt: toDateOrNull(row.revoked_at),
    passkeys: Number(row.passkeys),
    lastSignInAt: toDateOrNull(row.last_sign_in_at),
  };
}

/** Every member, the active first, then by email. */
export async function allMembers(db: Queryable): Promise<StaffMember[]> {
  const rows = await db.query(`select ${MEMBER_COLUMNS} from staff s order by s.revoked_at is not null, s.email`);
  return rows.map(memberFromRow);
}

export async function memberByEmail(db: Queryable, email: string, options: { lock?: boolean } = {}): Promise<StaffMember | undefined> {
  const rows = await db.query(`select ${MEMBER_COLUMNS} from staff s where s.email = $1${options.lock ? ' for update of s' : ''}`, [email]);
  return rows[0] ? memberFromRow(rows[0]) : undefined;
}

export async function memberById(db: Queryable, id: string): Promise<StaffMember | undefined> {
  const rows = await db.query(`select ${MEMBER_COLUMNS} from staff s where s.id = $1`, [id]);
  return rows[0] ? memberFromRow(rows[0]) : undefined;
}

/** Adds a member; false when the email was added meanwhile (by another request). */
export async function insertMember(db: Queryable, member: { id: string; email: string; role: StaffRole; addedAt: Date; addedBy: string }): Promise<boolean> {
  const rows = await db.query('insert into staff (id, email, role, added_at, added_by) values ($1, $2, $3, $4, $5) on conflict (email) do nothing returning id', [
    member.id,
    member.email,
    member.role,
    member.addedAt.toISOString(),
    member.addedBy,
  ]);
  return rows.length === 1;
}

/** A revoked member added again: active, with the role given now. */
export async function reinstateMember(db: Queryable, id: string, role: StaffRole, addedAt: Date, addedBy: string): Promise<void> {
  await db.query('update staff set role = $2, added_at = $3, added_by = $4, revoked_at = null where id = $1', [id, role, addedAt.toISOString(), addedBy]);
}

export async function setRole(db: Queryable, id: string, role: StaffRole): Promise<void> {
  await db.query('update staff set role = $2 where id = $1', [id, role]);
}

/** Locks the active owners' rows (one revoke at a time decides who is the last) and returns their ids. */
export async function lockActiveOwners(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ id: string }>("select id from staff where role = 'owner' and revoked_at is null order by id for update");
  return rows.map((row) => String(row.id));
}

/** Revokes a member: every session ended, every passkey and unused link removed. */
export async function revokeMember(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query('update staff set revoked_at = $2 where id = $1', [id, now.toISOString()]);
  await db.query('update staff_sessions set ended_at = $2 where staff_id = $1 and ended_at is null', [id, now.toISOString()]);
  await db.query('delete from staff_passkeys where staff_id = $1', [id]);
  await db.query('delete from staff_links where staff_id = $1 and used_at is null', [id]);
}

export async function signedIn(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query('update staff set last_sign_in_at = $2 where id = $1', [id, now.toISOString()]);
}

// --- links ---

export type LinkKind = 'enroll' | 'sign_in';

export interface StoredLink {
  staffId: string;
  email: string;
  kind: LinkKind;
  expiresAt: Date;
}

export async function insertLink(db: Queryable, link: { secretHash: Buffer; staffId: string; kind: LinkKind; createdAt: Date; expiresAt: Date }): Promise<void> {
  await db.query('insert into staff_links (secret_hash, staff_id, kind, created_at, expires_at) values ($1, $2, $3, $4, $5)', [
    link.secretHash,
    link.staffId,
    link.kind,
    link.createdAt.toISOString(),
    link.expiresAt.toISOString(),
  ]);
}

/** Unused links of a kind for a member stop working (a new one replaces them). */
export async function retireLinks(db: Queryable, staffId: string, kind: LinkKind, now: Date): Promise<void> {
  await db.query('update staff_links set used_at = $3 where staff_id = $1 and kind = $2 and used_at is null', [staffId, kind, now.toISOString()]);
}

/** A link that still works: of this kind, unused, unexpired, its member not revoked. */
export async function usableLink(db: Queryable, secretHash: Buffer, kind: LinkKind, now: Date, options: { lock?: boolean } = {}): Promise<StoredLink | undefined> {
  const rows = await db.query(
    `select l.staff_id, l.kind, l.expires_at, s.email from staff_links l join staff s on s.id = l.staff_id
      where l.secret_hash = $1 and l.kind = $2 and l.used_at is null and l.expires_at > $3 and s.revoked_at is null
      ${options.lock ? 'for update of l' : ''}`,
    [secretHash, kind, now.toISOString()],
  );
  const row = rows[0];
  return row ? { staffId: String(row.staff_id), email: String(row.email), kind: String(row.kind) as LinkKind, expiresAt: toDate(row.expires_at) } : undefined;
}

export async function linkUsed(db: Queryable, secretHash: Buffer, now: Date): Promise<void> {
  await db.query('update staff_links set used_at = $2 where secret_hash = $1', [secretHash, now.toISOString()]);
}

// --- WebAuthn challenges ---

export interface StoredChallenge {
  id: string;
  purpose: 'enroll' | 'sign_in';
  linkHash: Buffer | null;
  challenge: string;
  expiresAt: Date;
  usedAt: Date | null;
}

export async function insertChallenge(
  db: Queryable,
  challenge: { id: string; purpose: 'enroll' | 'sign_in'; linkHash: Buffer | null; challenge: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db.query('insert into staff_challenges (id, purpose, link_hash, challenge, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)', [
    challenge.id,
    challenge.purpose,
    challenge.linkHash,
    challenge.challenge,
    challenge.createdAt.toISOString(),
    challenge.expiresAt.toISOString(),
  ]);
}

export async function lockChallenge(db: Queryable, id: string): Promise<StoredChallenge | undefined> {
  const rows = await db.query('select id, purpose, link_hash, challenge, expires_at, used_at from staff_challenges where id = $1 for update', [id]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: String(row.id),
    purpose: String(row.purpose) as 'enroll' | 'sign_in',
    linkHash: row.link_hash === null ? null : Buffer.from(toBytes(row.link_hash)),
    challenge: String(row.challenge),
    expiresAt: toDate(row.expires_at),
    usedAt: toDateOrNull(row.used_at),
  };
}

export async function challengeUsed(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query('update staff_challenges set used_at = $2 where id = $1', [id, now.toISOString()]);
}

// --- passkeys ---

export interface StoredStaffPasskey {
  id: string;
  staffId: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
}

export async function passkeyIdsOf(db: Queryable, staffId: string): Promise<{ id: string; transports: string[] }[]> {
  const rows = await db.query('select id, transports from staff_passkeys where staff_id = $1 order by created_at, id', [staffId]);
  return rows.map((row) => ({ id: String(row.id), transports: Array.isArray(row.transports) ? row.transports.map(String) : [] }));
}

/** A passkey of an active member, locked (its counter is updated by the sign-in). */
export async function lockActivePasskey(db: Queryable, id: string): Promise<StoredStaffPasskey | undefined> {
  const rows = await db.query(
    `select p.id, p.staff_id, p.public_key, p.counter, p.transports from staff_passkeys p join staff s on s.id = p.staff_id
      where p.id = $1 and s.revoked_at is null for update of p`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: String(row.id),
    staffId: String(row.staff_id),
    publicKey: toBytes(row.public_key),
    counter: Number(row.counter),
    transports: Array.isArray(row.transports) ? row.transports.map(String) : [],
  };
}

export async function insertPasskey(
  db: Queryable,
  passkey: { id: string; staffId: string; publicKey: Uint8Array; counter: number; transports: string[]; deviceType: string; backedUp: boolean; createdAt: Date },
): Promise<boolean> {
  const rows = await db.query(
    `insert into staff_passkeys (id, staff_id, public_key, counter, transports, device_type, backed_up, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (id) do nothing returning id`,
    [passkey.id, passkey.staffId, Buffer.from(passkey.publicKey), passkey.counter, passkey.transports, passkey.deviceType, passkey.backedUp, passkey.createdAt.toISOString()],
  );
  return rows.length === 1;
}

export async function passkeyUsed(db: Queryable, id: string, counter: number, now: Date): Promise<void> {
  await db.query('update staff_passkeys set counter = $2, last_used_at = $3 where id = $1', [id, counter, now.toISOString()]);
}

// --- sessions ---

export interface StoredSession {
  staffId: string;
  email: string;
  role: StaffRole;
  csrfToken: string;
  startedAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

export async function insertSession(
  db: Queryable,
  session: { id: Buffer; staffId: string; csrfToken: string; startedAt: Date; expiresAt: Date },
): Promise<void> {
  await db.query('insert into staff_sessions (id, staff_id, csrf_token, started_at, last_seen_at, expires_at) values ($1, $2, $3, $4, $4, $5)', [
    session.id,
    session.staffId,
    session.csrfToken,
    session.startedAt.toISOString(),
    session.expiresAt.toISOString(),
  ]);
}

/** A session not ended, within its absolute and idle limits, of a member not revoked. */
export async function liveSession(db: Queryable, id: Buffer, now: Date, idleSince: Date): Promise<StoredSession | undefined> {
  const rows = await db.query(
    `select x.staff_id, s.email, s.role, x.csrf_token, x.started_at, x.last_seen_at, x.expires_at
       from staff_sessions x join staff s on s.id = x.staff_id
      where x.id = $1 and x.ended_at is null and x.expires_at > $2 and x.last_seen_at > $3 and s.revoked_at is null`,
    [id, now.toISOString(), idleSince.toISOString()],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    staffId: String(row.staff_id),
    email: String(row.email),
    role: String(row.role) as StaffRole,
    csrfToken: String(row.csrf_token),
    startedAt: toDate(row.started_at),
    lastSeenAt: toDate(row.last_seen_at),
    expiresAt: toDate(row.expires_at),
  };
}

/** Marks the session seen now, unless it was within `since` (one write a minute at most, whoever else is writing). */
export async function sessionSeen(db: Queryable, id: Buffer, now: Date, since: Date): Promise<void> {
  await db.query('update staff_sessions set last_seen_at = $2 where id = $1 and ended_at is null and last_seen_at < $3', [id, now.toISOString(), since.toISOString()]);
}

export async function endSession(db: Queryable, id: Buffer, now: Date): Promise<void> {
  await db.query('update staff_sessions set ended_at = $2 where id = $1 and ended_at is null', [id, now.toISOString()]);
}

/** Removes what can no longer be used: expired challenges and links; sessions a day after they ended. */
export async function purgeStaffLeftovers(db: Queryable, now: Date): Promise<void> {
  const dayAgo = new Date(now.getTime() - 24 * 3600 * 1000).toISOString();
  await db.query('delete from staff_challenges where expires_at < $1', [now.toISOString()]);
  await db.query('delete from staff_links where expires_at < $1', [now.toISOString()]);
  await db.query('delete from staff_sessions where expires_at < $1 or ended_at < $1', [dayAgo]);
}
