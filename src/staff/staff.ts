/**
 * The merchant's staff: who may sign in to the admin, with which role, and what each role may do. Staff sign in with
 * a passkey only (WebAuthn, the store's host as RP ID); where no passkey can exist (a BASE_URL that is an IP
 * address) with a single-use sign-in link the owner prints. Sessions live in the database, so every instance honours
 * them and a revoked person's end at once.
 */

export type StaffRole = 'owner' | 'staff';
export const STAFF_ROLES: readonly StaffRole[] = ['owner', 'staff'];

/** What an admin action needs. `staff` may run orders (capture, fulfil, cancel) and stock; refunds, staff, the
 *  catalog's prices and text, imports and buyers' passkeys are the owner's. */
export type StaffPermission = 'orders' | 'stock' | 'deliveries' | 'catalog' | 'import' | 'refund' | 'staff' | 'buyers';

const STAFF_MAY: ReadonlySet<StaffPermission> = new Set(['orders', 'stock', 'deliveries']);

export function staffMay(role: StaffRole, permission: StaffPermission): boolean {
  return role === 'owner' || STAFF_MAY.has(permission);
}

export interface StaffMember {
  id: string;
  email: string;
  role: StaffRole;
  addedAt: Date;
  revokedAt: Date | null;
  /** Passkeys registered. */
  passkeys: number;
  lastSignInAt: Date | null;
}

/** A signed-in person, as a request sees them. The session's secret (the cookie) is never part of it. */
export interface StaffSession {
  staffId: string;
  email: string;
  role: StaffRole;
  /** Every state-changing admin request carries it (a hidden form field): a cross-site form cannot know it. */
  csrfToken: string;
  startedAt: Date;
  /** When the session ends at the latest (absolute 7 days; idle 12 h ends it sooner). */
  expiresAt: Date;
}

/** A session begun: its secret goes in the cookie, nowhere else (not the log, not the database: only its hash). */
export interface SessionStart {
  secret: string;
  session: StaffSession;
}

export const SESSION_IDLE_MS = 12 * 3600 * 1000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3600 * 1000;
export const ENROLLMENT_LINK_MS = 30 * 60 * 1000;
export const SIGN_IN_LINK_MS = 5 * 60 * 1000;

/** Why a staff operation was refused, with a code the admin and the CLI tell apart and a sentence for a person. */
export class StaffRefused extends Error {
  constructor(
    readonly code: 'not_found' | 'already_staff' | 'last_owner' | 'link_invalid' | 'passkey_refused' | 'passkeys_impossible' | 'invalid_email',
    message: string,
  ) {
    super(message);
    this.name = 'StaffRefused';
  }
}
