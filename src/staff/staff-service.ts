/**
 * Who may use the admin, and how they prove it. Staff are added by the terminal or an owner with a single-use
 * enrollment link (30 minutes) on which they create a passkey (WebAuthn, user verification required, discoverable,
 * BASE_URL's host as RP ID); they sign in with it, no email asked. Where no passkey can exist (BASE_URL names an IP
 * address) the terminal prints single-use sign-in links (5 minutes). Sessions live in the database: the cookie's
 * secret is 32 random bytes, only its sha256 is kept; idle 12 h, absolute 7 days, and a revoked person has none.
 *
 * Secrets (links, sessions) are kept only as hashes and never logged; refusals throw StaffRefused.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Database, Queryable } from '../db/database.js';
import { parseMailbox } from '../fields/mailbox.js';
import type { MerchantIdentity } from '../mail/mail-parts.js';
import { addToOutbox } from '../outbox/outbox.js';
import { recordAudit, type Actor } from '../audit/audit-log.js';
import { enrollmentMail } from './enrollment-mail.js';
import {
  ENROLLMENT_LINK_MS,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SIGN_IN_LINK_MS,
  STAFF_ROLES,
  StaffRefused,
  type SessionStart,
  type StaffMember,
  type StaffRole,
  type StaffSession,
} from './staff.js';
import {
  allMembers,
  challengeUsed,
  endSession,
  insertChallenge,
  insertLink,
  insertMember,
  insertPasskey,
  insertSession,
  linkUsed,
  liveSession,
  lockActiveOwners,
  lockActivePasskey,
  lockChallenge,
  memberByEmail,
  passkeyIdsOf,
  passkeyUsed,
  purgeStaffLeftovers,
  reinstateMember,
  retireLinks,
  revokeMember,
  sessionSeen,
  setRole,
  signedIn,
  usableLink,
  type LinkKind,
} from './staff-store.js';

/** WebAuthn's library is loaded when a passkey is first used: the CLI's commands start without it. */
/** A challenge's id as newChallenge makes it (16 random bytes, base64url), and a WebAuthn credential id (base64url). */
const CHALLENGE_ID = /^[A-Za-z0-9_-]{1,100}$/;
const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,1400}$/;
const webauthn = () => import('@simplewebauthn/server');

const CHALLENGE_TTL_MS = 5 * 60_000;
/** A session's last_seen_at is written at most this often. */
const SEEN_EVERY_MS = 60_000;
/** Longer than any secret the store makes: a longer one is refused unread. */
const MAX_SECRET_LENGTH = 100;
/** The longest registration or assertion (JSON) read. */
export const MAX_CREDENTIAL_JSON = 16_384;

export const ENROLL_PATH = '/admin/enroll/';
export const SIGN_IN_LINK_PATH = '/admin/sign-in/link/';

export interface StaffServiceOptions {
  /** BASE_URL: its origin is where passkeys are used, its host the RP ID; links start with it. */
  baseUrl: string;
  storeName: string;
  /** Who the enrollment mail is from, as its signature says. */
  merchant: MerchantIdentity;
  /** STORE_TIMEZONE: the enrollment mail says until when its link works. */
  timeZone: string;
  /** Whether enrollment links are mailed (through the outbox) as well as printed; and how long a mail may wait. */
  mail: { deadlineSeconds: number } | undefined;
  passkeysPossible: boolean;
  now?: () => Date;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const newSecret = () => randomBytes(32).toString('base64url');
const wellFormedSecret = (secret: string) => secret.length > 0 && secret.length <= MAX_SECRET_LENGTH && /^[A-Za-z0-9_-]+$/.test(secret);
const newStaffId = () => `staff_${randomUUID().replace(/-/g, '')}`;

export class StaffService {
  readonly passkeysPossible: boolean;
  private readonly origin: string;
  private readonly rpId: string;
  private readonly baseUrl: string;

  constructor(private readonly options: StaffServiceOptions) {
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    this.rpId = base.hostname;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.passkeysPossible = options.passkeysPossible;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Adds a member (or a revoked one again, or a new link for one who has no passkey yet) and their enrollment link. */
  async add(db: Database, actor: Actor, email: string, role: StaffRole): Promise<{ member: StaffMember; link: string; expiresAt: Date; mailed: boolean }> {
    const address = staffEmail(email);
    if (!STAFF_ROLES.includes(role)) throw new StaffRefused('invalid_email', 'The role is owner or staff.');
    const now = this.now();
    const secret = newSecret();
    const expiresAt = new Date(now.getTime() + ENROLLMENT_LINK_MS);
    const link = `${this.baseUrl}${ENROLL_PATH}${secret}`;
    const member = await db.transaction(async (tx) => {
      const existing = await memberByEmail(tx, address, { lock: true });
      let staffId: string;
      if (!existing) {
        staffId = newStaffId();
        if (!(await insertMember(tx, { id: staffId, email: address, role, addedAt: now, addedBy: actor.label }))) {
          throw new StaffRefused('already_staff', `${address} was just added by someone else.`);
        }
      } else if (existing.revokedAt) {
        staffId = existing.id;
        await reinstateMember(tx, staffId, role, now, actor.label);
      } else if (existing.passkeys === 0) {
        // Added before and never enrolled (the link expired, or was lost): a new link replaces the old one.
        staffId = existing.id;
        if (existing.role !== role) await this.changeRoleOfUnenrolled(tx, existing, role);
        await retireLinks(tx, staffId, 'enroll', now);
      } else {
        throw new StaffRefused('already_staff', `${address} is already staff, with a passkey.`);
      }
      await insertLink(tx, { secretHash: sha256(secret), staffId, kind: 'enroll', createdAt: now, expiresAt });
      await recordAudit(tx, actor, { action: 'staff.add', summary: `added ${address} as ${role}` });
      if (this.options.mail) {
        const message = enrollmentMail({ to: address, role, link, expiresAt, addedBy: actor.label, timeZone: this.options.timeZone }, this.options.merchant);
        // The link is worthless after 30 minutes: so is the mail.
        await addToOutbox(tx, { kind: 'mail', topic: 'staff.enrollment', message }, Math.min(this.options.mail.deadlineSeconds, ENROLLMENT_LINK_MS / 1000));
      }
      return (await memberByEmail(tx, address))!;
    });
    return { member, link, expiresAt, mailed: this.options.mail !== undefined };
  }

  /** An unenrolled owner made staff again must not be the last owner. */
  private async changeRoleOfUnenrolled(tx: Queryable, member: StaffMember, role: StaffRole): Promise<void> {
    if (member.role === 'owner' && role !== 'owner') {
      const owners = await lockActiveOwners(tx);
      if (owners.length === 1 && owners[0] === member.id) throw new StaffRefused('last_owner', `${member.email} is the last owner: add another owner first.`);
    }
    await setRole(tx, member.id, role);
  }

  list(db: Queryable): Promise<StaffMember[]> {
    return allMembers(db);
  }

  /** Revokes a member: their sessions end, their passkeys and links stop working, in one transaction. The last owner stays. */
  async revoke(db: Database, actor: Actor, email: string): Promise<StaffMember> {
    const address = staffEmail(email);
    const now = this.now();
    return db.transaction(async (tx) => {
      // The owners first, then the member: concurrent revokes of two owners see each other.
      const owners = await lockActiveOwners(tx);
      const member = await memberByEmail(tx, address, { lock: true });
      if (!member || member.revokedAt) throw new StaffRefused('not_found', `${address} is not staff.`);
      if (member.role === 'owner' && owners.length === 1 && owners[0] === member.id) {
        throw new StaffRefused('last_owner', `${address} is the last owner: add another owner first.`);
      }
      await revokeMember(tx, member.id, now);
      await recordAudit(tx, actor, { action: 'staff.revoke', summary: `revoked ${address}` });
      return { ...member, revokedAt: now, passkeys: 0 };
    });
  }

  /** A single-use sign-in link (5 minutes) for an active member; an older unused one stops working. */
  async signInLink(db: Database, actor: Actor, email: string): Promise<{ link: string; expiresAt: Date }> {
    const address = staffEmail(email);
    const now = this.now();
    const secret = newSecret();
    const expiresAt = new Date(now.getTime() + SIGN_IN_LINK_MS);
    await db.transaction(async (tx) => {
      const member = await memberByEmail(tx, address, { lock: true });
      if (!member || member.revokedAt) throw new StaffRefused('not_found', `${address} is not staff.`);
      await retireLinks(tx, member.id, 'sign_in', now);
      await insertLink(tx, { secretHash: sha256(secret), staffId: member.id, kind: 'sign_in', createdAt: now, expiresAt });
      await recordAudit(tx, actor, { action: 'staff.sign_in_link', summary: `made a sign-in link for ${address}` });
    });
    return { link: `${this.baseUrl}${SIGN_IN_LINK_PATH}${secret}`, expiresAt };
  }

  private link(db: Queryable, secret: string, kind: LinkKind, options: { lock?: boolean } = {}) {
    if (!wellFormedSecret(secret)) return Promise.resolve(undefined);
    return usableLink(db, sha256(secret), kind, this.now(), options);
  }

  /** Whose enrollment link this is, while it works. */
  async enrollment(db: Queryable, secret: string): Promise<{ email: string; expiresAt: Date } | undefined> {
    const link = await this.link(db, secret, 'enroll');
    return link && { email: link.email, expiresAt: link.expiresAt };
  }

  async enrollmentOptions(db: Database, secret: string): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
    this.refuseWithoutPasskeys();
    const link = await this.link(db, secret, 'enroll');
    if (!link) throw linkInvalid();
    const existing = await passkeyIdsOf(db, link.staffId);
    const options = await (await webauthn()).generateRegistrationOptions({
      rpName: this.options.storeName,
      rpID: this.rpId,
      userID: new TextEncoder().encode(link.staffId),
      userName: link.email,
      userDisplayName: link.email,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports as AuthenticatorTransportName[] })),
      // Discoverable: sign-in asks for no email, the device offers the passkeys it holds for this store.
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      timeout: CHALLENGE_TTL_MS,
    });
    const challengeId = await this.newChallenge(db, 'enroll', sha256(secret), options.challenge);
    return { challengeId, options };
  }

  /** Registers the passkey made on the enrollment page; the link is used, and the person is signed in. */
  async enroll(db: Database, secret: string, challengeId: string, responseJson: string): Promise<SessionStart> {
    this.refuseWithoutPasskeys();
    return db.transaction(async (tx) => {
      const now = this.now();
      const link = await this.link(tx, secret, 'enroll', { lock: true });
      if (!link) throw linkInvalid();
      const challenge = await this.usableChallenge(tx, challengeId, 'enroll', now);
      if (!challenge.linkHash?.equals(sha256(secret))) throw passkeyRefused();
      let verified;
      try {
        if (responseJson.length > MAX_CREDENTIAL_JSON) throw new Error('too long');
        const response = JSON.parse(responseJson) as RegistrationResponseJSON;
        verified = await (await webauthn()).verifyRegistrationResponse({
          response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: this.origin,
          expectedRPID: this.rpId,
          requireUserVerification: true,
        });
      } catch {
        throw passkeyRefused();
      }
      if (!verified.verified) throw passkeyRefused();
      const { credential, credentialDeviceType, credentialBackedUp } = verified.registrationInfo;
      const added = await insertPasskey(tx, {
        id: credential.id,
        staffId: link.staffId,
        publicKey: credential.publicKey,
        counter: credential.counter,
        transports: (credential.transports ?? []).map(String),
        deviceType: credentialDeviceType,
        backedUp: credentialBackedUp,
        createdAt: now,
      });
      if (!added) throw new StaffRefused('passkey_refused', 'This passkey is already registered.');
      await challengeUsed(tx, challenge.id, now);
      await linkUsed(tx, sha256(secret), now);
      return this.startSession(tx, link.staffId, now);
    });
  }

  /** Options to sign in with a passkey: no credentials listed (discoverable), so nothing is said about who is staff. */
  async signInOptions(db: Database): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
    this.refuseWithoutPasskeys();
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: this.rpId,
      userVerification: 'required',
      timeout: CHALLENGE_TTL_MS,
    });
    const challengeId = await this.newChallenge(db, 'sign_in', null, options.challenge);
    return { challengeId, options };
  }

  /** Signs in with the assertion the browser made over the challenge: a passkey of an active member. */
  async signIn(db: Database, challengeId: string, responseJson: string): Promise<SessionStart> {
    this.refuseWithoutPasskeys();
    return db.transaction(async (tx) => {
      const now = this.now();
      const challenge = await this.usableChallenge(tx, challengeId, 'sign_in', now);
      let response: AuthenticationResponseJSON;
      try {
        if (responseJson.length > MAX_CREDENTIAL_JSON) throw new Error('too long');
        response = JSON.parse(responseJson) as AuthenticationResponseJSON;
      } catch {
        throw passkeyRefused();
      }
      // A credential id is base64url (WebAuthn): anything else names no passkey, and is not looked up.
      if (typeof response !== 'object' || response === null || typeof response.id !== 'string' || !CREDENTIAL_ID.test(response.id)) throw passkeyRefused();
      const passkey = await lockActivePasskey(tx, response.id);
      if (!passkey) throw passkeyRefused();
      let verified;
      try {
        verified = await (await webauthn()).verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: this.origin,
          expectedRPID: this.rpId,
          credential: { id: passkey.id, publicKey: passkey.publicKey, counter: passkey.counter, transports: passkey.transports as AuthenticatorTransportName[] },
          requireUserVerification: true,
        });
      } catch {
        throw passkeyRefused();
      }
      if (!verified.verified || !verified.authenticationInfo.userVerified) throw passkeyRefused();
      await passkeyUsed(tx, passkey.id, verified.authenticationInfo.newCounter, now);
      await challengeUsed(tx, challenge.id, now);
      return this.startSession(tx, passkey.staffId, now);
    });
  }

  /** Whether a sign-in link still works (its page shows a button; only the POST uses it). */
  async signInLinkValid(db: Queryable, secret: string): Promise<boolean> {
    return (await this.link(db, secret, 'sign_in')) !== undefined;
  }

  async useSignInLink(db: Database, secret: string): Promise<SessionStart> {
    return db.transaction(async (tx) => {
      const now = this.now();
      const link = await this.link(tx, secret, 'sign_in', { lock: true });
      if (!link) throw linkInvalid();
      await linkUsed(tx, sha256(secret), now);
      return this.startSession(tx, link.staffId, now);
    });
  }

  /** The session a cookie's secret names, while it lasts: not ended, within 7 days and 12 idle hours, its person not revoked. */
  async session(db: Database, secret: string): Promise<StaffSession | undefined> {
    if (!wellFormedSecret(secret)) return undefined;
    const now = this.now();
    const id = sha256(secret);
    const found = await liveSession(db, id, now, new Date(now.getTime() - SESSION_IDLE_MS));
    if (!found) return undefined;
    if (now.getTime() - found.lastSeenAt.getTime() >= SEEN_EVERY_MS) await sessionSeen(db, id, now, new Date(now.getTime() - SEEN_EVERY_MS));
    return { staffId: found.staffId, email: found.email, role: found.role, csrfToken: found.csrfToken, startedAt: found.startedAt, expiresAt: found.expiresAt };
  }

  /** Ends the session (sign-out, or the old one when a new one starts): its cookie no longer works anywhere. */
  async signOut(db: Database, secret: string): Promise<void> {
    if (!wellFormedSecret(secret)) return;
    await endSession(db, sha256(secret), this.now());
  }

  /** Removes expired challenges, links and sessions (the store's hourly purge). */
  purgeExpired(db: Queryable): Promise<void> {
    return purgeStaffLeftovers(db, this.now());
  }

  private refuseWithoutPasskeys(): void {
    if (!this.passkeysPossible) {
      throw new StaffRefused('passkeys_impossible', 'Passkeys cannot work at this address (an IP address): sign in with a link from `storefront staff sign-in-link EMAIL`.');
    }
  }

  private async newChallenge(db: Queryable, purpose: 'enroll' | 'sign_in', linkHash: Buffer | null, challenge: string): Promise<string> {
    const now = this.now();
    const id = randomBytes(16).toString('base64url');
    await insertChallenge(db, { id, purpose, linkHash, challenge, createdAt: now, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS) });
    return id;
  }

  private async usableChallenge(tx: Queryable, challengeId: string, purpose: 'enroll' | 'sign_in', now: Date) {
    const challenge = typeof challengeId === 'string' && CHALLENGE_ID.test(challengeId) ? await lockChallenge(tx, challengeId) : undefined;
    if (!challenge || challenge.purpose !== purpose || challenge.usedAt || challenge.expiresAt <= now) {
      throw new StaffRefused('passkey_refused', 'This passkey request has expired. Try again.');
    }
    return challenge;
  }

  private async startSession(tx: Queryable, staffId: string, now: Date): Promise<SessionStart> {
    const secret = newSecret();
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
    await insertSession(tx, { id: sha256(secret), staffId, csrfToken, startedAt: now, expiresAt });
    await signedIn(tx, staffId, now);
    const found = await liveSession(tx, sha256(secret), now, new Date(now.getTime() - SESSION_IDLE_MS));
    if (!found) throw linkInvalid();
    return { secret, session: { staffId, email: found.email, role: found.role, csrfToken, startedAt: now, expiresAt } };
  }
}

type AuthenticatorTransportName = 'ble' | 'cable' | 'hybrid' | 'internal' | 'nfc' | 'smart-card' | 'usb';

/** A staff email: one plain address, lowercased (the admin is for the mailbox, whatever its case). */
export function staffEmail(email: string): string {
  const address = parseMailbox(email);
  if (!address) throw new StaffRefused('invalid_email', 'That is not an email address (name@example.com).');
  return address.toLowerCase();
}

const linkInvalid = () => new StaffRefused('link_invalid', 'This link no longer works: it was used, it expired, or the person was revoked. Ask for a new one.');
const passkeyRefused = () => new StaffRefused('passkey_refused', 'That passkey could not sign you in. Try again, or ask an owner for a new link.');
