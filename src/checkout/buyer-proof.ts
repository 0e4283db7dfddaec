/**
 * What the person on the approval page proves before an order is placed: that they hold a passkey registered to
 * the checkout's buyer email (a WebAuthn assertion with user verification, over a challenge derived from the
 * approval's digest and a single-use nonce), or that they read a code mailed to that email (6 digits, 10 minutes,
 * 5 tries, bound to that approval). Neither can be produced by whoever merely holds the approval link, its cookie
 * and its form. `APPROVAL_PROOF=link` asks for nothing (development only).
 *
 * The checks that consume a proof run inside the approval's transaction (so a refused order keeps the proof);
 * a wrong code is counted in a transaction of its own first, so the 5 tries hold whatever runs concurrently.
 */
import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { ApprovalProofMode } from './checkout-options.js';
import type { Database, Queryable } from '../db/database.js';
import {
  challengeUsed,
  codeMissed,
  codesSentSince,
  deleteCode,
  enrollmentEmail,
  enrollmentUsed,
  insertChallenge,
  insertCode,
  insertEnrollment,
  insertPasskey,
  latestCode,
  lockChallenge,
  lockMailbox,
  lockPasskey,
  passkeysOf,
  passkeyUsed,
  useCode,
  type StoredCode,
  type StoredPasskey,
} from './buyer-proof-store.js';
import { readApproval, type ApprovalRecord } from './checkout-store.js';
import { mailboxKey } from '../fields/mailbox.js';

/**
 * WebAuthn's library (and the X.509 and ASN.1 parsers it brings) is loaded when a passkey is first used, not by every
 * process that reads this file: the merchant's CLI commands start without it.
 */
const webauthn = () => import('@simplewebauthn/server');

export const CODE_TTL_SECONDS = 10 * 60;
export const CODE_MAX_ATTEMPTS = 5;
/** Codes mailed per hour: for one checkout, and to one mailbox (mailboxKey: tags and case aside) across checkouts. */
export const CODES_PER_CHECKOUT_PER_HOUR = 5;
export const CODES_PER_EMAIL_PER_HOUR = 10;
const HOUR_MS = 3600_000;
const CHALLENGE_TTL_MS = 5 * 60_000;
const ENROLLMENT_TTL_MS = 15 * 60_000;
/** The longest assertion or registration (JSON) the store reads. */
export const MAX_CREDENTIAL_JSON = 8192;

/** What the person on the page sent as proof. */
export type ApprovalProof = { kind: 'none' } | { kind: 'code'; code: string } | { kind: 'passkey'; challengeId: string; response: string };

/** How an approval was proven (kept with the checkout's transition, told to the page). */
export type ProvenBy = 'passkey' | 'code' | 'link';

/** A proof that was not accepted: words for the person on the page; `failure` is what /metrics counts. */
export class ProofRefused extends Error {
  constructor(
    message: string,
    readonly failure?: { proof: 'code' | 'passkey'; reason: string },
  ) {
    super(message);
  }
}

/**
 * What the approval page offers now. A passkey is offered in passkey-or-code mode to every email alike: whether an
 * email holds a passkey is never said (the browser shows the passkeys it holds for this store).
 */
export interface ProofOffer {
  mode: ApprovalProofMode;
  email: string;
  /** The newest code's state for this approval. */
  code: { state: 'none' } | { state: 'active'; expiresAt: Date; triesLeft: number } | { state: 'expired' | 'used' | 'locked' };
  /** Minutes until another code may be mailed (0: now). */
  nextCodeInMinutes: number;
}

/** The message mailed with a code. */
export interface CodeMail {
  to: string;
  code: string;
  expiresAt: Date;
  /** The order's total and item count, so the buyer knows what the code approves. */
  total: number;
  items: number;
}

export interface BuyerProofOptions {
  mode: ApprovalProofMode;
  /** BASE_URL's origin and host: where assertions must come from and the WebAuthn RP ID. */
  origin: string;
  rpId: string;
  storeName: string;
  /**
   * Whether passkeys can work here at all: WebAuthn takes a domain as RP ID, never an IP address, so a store whose
   * BASE_URL names one asks for the code alone (and says so at start).
   */
  passkeysPossible: boolean;
  /** Mails a code now (the buyer is waiting on the page); throws when it could not be handed to the mail server. */
  mailCode: (mail: CodeMail) => Promise<void>;
  now?: () => Date;
}

export const normalEmail = (email: string) => email.trim().toLowerCase();

const sha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest();

/** A code's hash, keyed by the approval's form secret: a code is only ever compared within its own approval. */
const codeHash = (approval: ApprovalRecord, code: string) => createHmac('sha256', approval.formSecret).update(code).digest();

/** A WebAuthn challenge for an approval: the digest of exactly what the page shows, and a nonce used once. */
export const approvalChallenge = (digest: string, nonce: string) => sha256(`storefront-approval:${digest}:${nonce}`).toString('base64url');

export class BuyerProof {
  /** What this store asks: APPROVAL_PROOF, except that passkey-or-code is code where no passkey can work. */
  readonly mode: ApprovalProofMode;
  /** Failed proofs by kind and reason, and codes mailed, since start (read by /metrics). */
  readonly failures = new Map<string, number>();
  codesSent = 0;

  constructor(private readonly options: BuyerProofOptions) {
    this.mode = options.mode === 'passkey-or-code' && !options.passkeysPossible ? 'code' : options.mode;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private get passkeysAllowed(): boolean {
    return this.mode === 'passkey-or-code';
  }

  private fail(proof: 'code' | 'passkey', reason: string, message: string): ProofRefused {
    const key = `${proof}:${reason}`;
    this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    return new ProofRefused(message, { proof, reason });
  }

  /** What the page can offer the person for this approval. */
  async offer(db: Queryable, approval: ApprovalRecord, buyerEmail: string): Promise<ProofOffer> {
    const email = normalEmail(buyerEmail);
    const now = this.now();
    const latest = this.mode === 'link' ? undefined : await latestCode(db, approval.token);
    return { mode: this.mode, email, code: codeState(latest, now), nextCodeInMinutes: this.mode === 'link' ? 0 : await this.minutesUntilNextCode(db, approval.checkoutId, email, now) };
  }

  private async minutesUntilNextCode(db: Queryable, checkoutId: string, email: string, now: Date): Promise<number> {
    const since = new Date(now.getTime() - HOUR_MS);
    const waits = [];
    // An address's tags and case reach one inbox: the email's limit is its mailbox's.
    for (const [column, value, limit] of [['checkout_id', checkoutId, CODES_PER_CHECKOUT_PER_HOUR], ['mailbox', mailboxKey(email), CODES_PER_EMAIL_PER_HOUR]] as const) {
      const sent = await codesSentSince(db, column, value, since);
      if (sent.count >= limit && sent.oldest) waits.push(sent.oldest.getTime() + HOUR_MS - now.getTime());
    }
    return waits.length === 0 ? 0 : Math.max(1, Math.ceil(Math.max(...waits) / 60_000));
  }

  /**
   * Mails a new code for this approval to the checkout's buyer email (the only address a code ever goes to),
   * within the hourly limits. The code is kept only as a hash; an older code of the approval stops counting.
   */
  async sendCode(db: Database, approval: ApprovalRecord, buyerEmail: string, order: { total: number; items: number }): Promise<{ kind: 'sent'; expiresAt: Date } | { kind: 'limited'; minutes: number }> {
    if (this.mode === 'link') throw new ProofRefused('This store does not ask for a code.');
    const email = normalEmail(buyerEmail);
    const now = this.now();
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const expiresAt = new Date(now.getTime() + CODE_TTL_SECONDS * 1000);
    const sent = await db.transaction(async (tx) => {
      // One sender at a time per checkout (the approval row) and per mailbox, so the limits hold across instances.
      await readApproval(tx, approval.token, { lock: true });
      await lockMailbox(tx, mailboxKey(email));
      const minutes = await this.minutesUntilNextCode(tx, approval.checkoutId, email, now);
      if (minutes > 0) return { kind: 'limited' as const, minutes };
      const id = await insertCode(tx, { approvalToken: approval.token, checkoutId: approval.checkoutId, email, mailbox: mailboxKey(email), codeHash: codeHash(approval, code), createdAt: now, expiresAt });
      return { kind: 'sent' as const, id };
    });
    if (sent.kind === 'limited') return sent;
    try {
      await this.options.mailCode({ to: email, code, expiresAt, total: order.total, items: order.items });
    } catch (error) {
      await deleteCode(db, sent.id).catch(() => undefined);
      throw error;
    }
    this.codesSent += 1;
    return { kind: 'sent', expiresAt };
  }

  /**
   * Checks a typed code against the approval's newest code, in a transaction of its own: a wrong one is counted
   * (5 at most), and the 5th wrong one locks the code. A right one is consumed later, by the approval.
   */
  async checkCode(db: Database, approval: ApprovalRecord, code: string): Promise<number> {
    const typed = code.replace(/[\s-]/g, '');
    // The outcome leaves the transaction as a value: a wrong code's count must commit before the refusal is thrown.
    const checked = await db.transaction(async (tx): Promise<{ id: number } | { reason: string; message: string }> => {
      const latest = await latestCode(tx, approval.token, { lock: true });
      const now = this.now();
      if (!latest) return { reason: 'none_sent', message: 'No code was sent for this page yet. Ask for a code first.' };
      if (latest.usedAt) return { reason: 'used', message: 'This code was already used. Ask for a new code.' };
      if (latest.attempts >= CODE_MAX_ATTEMPTS) return { reason: 'locked', message: 'Too many wrong codes were tried. Ask for a new code.' };
      if (latest.expiresAt <= now) return { reason: 'expired', message: 'This code has expired. Ask for a new code.' };
      const expected = Buffer.from(latest.codeHash);
      const wellFormed = /^\d{6}$/.test(typed);
      const given = wellFormed ? codeHash(approval, typed) : Buffer.alloc(expected.length);
      if (timingSafeEqual(expected, given) && wellFormed) return { id: latest.id };
      await codeMissed(tx, latest.id);
      const left = CODE_MAX_ATTEMPTS - latest.attempts - 1;
      return {
        reason: 'wrong',
        message: left > 0 ? `That code is not right. ${left} ${left === 1 ? 'try is' : 'tries are'} left.` : 'That code is not right, and it is now locked. Ask for a new code.',
      };
    });
    if ('id' in checked) return checked.id;
    throw this.fail('code', checked.reason, checked.message);
  }

  /**
   * Challenge options for approving with a passkey (undefined where passkeys are not asked for). The same for every
   * email: they list no credentials (discoverable credentials, the browser offers what it holds for this store) and
   * read none, so they never say whether the email holds a passkey; the assertion must then come from a passkey
   * registered to the checkout's email (verifyAssertion).
   */
  async approvalOptions(db: Queryable, approval: ApprovalRecord, buyerEmail: string): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON } | undefined> {
    if (!this.passkeysAllowed) return undefined;
    const email = normalEmail(buyerEmail);
    const nonce = randomBytes(16).toString('base64url');
    const challenge = approvalChallenge(approval.digest, nonce);
    const now = this.now();
    const challengeId = randomBytes(16).toString('base64url');
    await insertChallenge(db, { id: challengeId, purpose: 'approve', approvalToken: approval.token, email, challenge, createdAt: now, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS) });
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: this.options.rpId,
      challenge: Buffer.from(challenge, 'base64url'),
      userVerification: 'required',
      timeout: CHALLENGE_TTL_MS,
    });
    return { challengeId, options };
  }

  /**
   * Consumes the proof inside the approval's transaction (the approval and checkout rows locked): the right code
   * checked by checkCode, or a passkey assertion over this approval's challenge. Throws ProofRefused.
   */
  async consume(tx: Queryable, approval: ApprovalRecord, buyerEmail: string, proof: ApprovalProof, checkedCodeId?: number): Promise<ProvenBy> {
    const now = this.now();
    if (this.mode === 'link') return 'link';
    if (proof.kind === 'code' && checkedCodeId !== undefined) {
      if (!(await useCode(tx, checkedCodeId, now, CODE_MAX_ATTEMPTS))) throw this.fail('code', 'used', 'This code can no longer be used. Ask for a new code.');
      return 'code';
    }
    if (proof.kind === 'passkey' && this.passkeysAllowed) {
      await this.verifyAssertion(tx, approval, normalEmail(buyerEmail), proof, now);
      return 'passkey';
    }
    throw new ProofRefused(this.passkeysAllowed ? 'Confirm it is you first: use your passkey, or the code we email you.' : 'Confirm it is you first: enter the code we email you.');
  }

  private async verifyAssertion(tx: Queryable, approval: ApprovalRecord, email: string, proof: { challengeId: string; response: string }, now: Date): Promise<void> {
    const refused = (reason: string) => this.fail('passkey', reason, 'Your passkey could not confirm this order. Try again, or use the code we email you.');
    const challenge = await lockChallenge(tx, proof.challengeId);
    if (!challenge || challenge.purpose !== 'approve' || challenge.approvalToken !== approval.token || challenge.email !== email) throw refused('unknown_challenge');
    if (challenge.usedAt) throw refused('replayed');
    if (challenge.expiresAt <= now) throw refused('expired');
    let response: AuthenticationResponseJSON;
    try {
      response = JSON.parse(proof.response) as AuthenticationResponseJSON;
    } catch {
      throw refused('malformed');
    }
    if (typeof response !== 'object' || response === null || typeof response.id !== 'string') throw refused('malformed');
    const passkey = await lockPasskey(tx, response.id, email);
    if (!passkey) throw refused('unknown_passkey');
    let verified;
    try {
      verified = await (await webauthn()).verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge.challenge,
        expectedOrigin: this.options.origin,
        expectedRPID: this.options.rpId,
        credential: { id: passkey.id, publicKey: passkey.publicKey, counter: passkey.counter, transports: passkey.transports },
        requireUserVerification: true,
      });
    } catch {
      throw refused('invalid');
    }
    if (!verified.verified || !verified.authenticationInfo.userVerified) throw refused('invalid');
    await passkeyUsed(tx, passkey.id, verified.authenticationInfo.newCounter, now);
    await challengeUsed(tx, challenge.id, now);
  }

  // --- a passkey for next time, after a code proved the email ---

  /** In the approval's transaction, once a code placed the order: the right to register a passkey for that email (a cookie's secret). */
  async grantEnrollment(tx: Queryable, buyerEmail: string, orderId: string): Promise<string | undefined> {
    if (!this.passkeysAllowed) return undefined;
    const secret = randomBytes(32).toString('base64url');
    const now = this.now();
    await insertEnrollment(tx, { secretHash: sha256(secret), email: normalEmail(buyerEmail), orderId, createdAt: now, expiresAt: new Date(now.getTime() + ENROLLMENT_TTL_MS) });
    return secret;
  }

  /** The email an enrollment secret may register a passkey for, on that order's page. */
  async enrollment(db: Queryable, secret: string | undefined, orderId: string): Promise<string | undefined> {
    if (!this.passkeysAllowed || secret === undefined || secret.length > 100) return undefined;
    return enrollmentEmail(db, sha256(secret), orderId, this.now());
  }

  async registrationOptions(db: Queryable, secret: string, orderId: string): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON } | undefined> {
    const email = await this.enrollment(db, secret, orderId);
    if (!email) return undefined;
    const existing = await passkeysOf(db, email);
    const options = await (await webauthn()).generateRegistrationOptions({
      rpName: this.options.storeName,
      rpID: this.options.rpId,
      userName: email,
      userDisplayName: email,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
      // Discoverable: the approval's options list no credentials, so only a passkey the device can find by itself is offered.
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      timeout: CHALLENGE_TTL_MS,
    });
    const now = this.now();
    const challengeId = randomBytes(16).toString('base64url');
    await insertChallenge(db, { id: challengeId, purpose: 'register', approvalToken: null, email, challenge: options.challenge, createdAt: now, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS) });
    return { challengeId, options };
  }

  /** Registers the passkey the browser made; the enrollment is used once. Throws ProofRefused. */
  async register(db: Database, secret: string, orderId: string, challengeId: string, responseJson: string): Promise<StoredPasskey> {
    return db.transaction(async (tx) => {
      const now = this.now();
      const hash = sha256(secret);
      const email = await enrollmentEmail(tx, hash, orderId, now, { lock: true });
      if (!email) throw new ProofRefused('This offer to create a passkey has ended. You can create one after your next order confirmed with a code.');
      const challenge = await lockChallenge(tx, challengeId);
      if (!challenge || challenge.purpose !== 'register' || challenge.email !== email || challenge.usedAt || challenge.expiresAt <= now) {
        throw new ProofRefused('This passkey request has expired. Try again.');
      }
      let response: RegistrationResponseJSON;
      let verified;
      try {
        response = JSON.parse(responseJson) as RegistrationResponseJSON;
        verified = await (await webauthn()).verifyRegistrationResponse({
          response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: this.options.origin,
          expectedRPID: this.options.rpId,
          requireUserVerification: true,
        });
      } catch {
        throw new ProofRefused('The passkey could not be created. Try again.');
      }
      if (!verified.verified) throw new ProofRefused('The passkey could not be created. Try again.');
      const { credential, credentialDeviceType, credentialBackedUp } = verified.registrationInfo;
      const passkey = {
        id: credential.id,
        email,
        publicKey: credential.publicKey,
        counter: credential.counter,
        transports: (credential.transports ?? []).map(String),
        deviceType: credentialDeviceType,
        backedUp: credentialBackedUp,
        createdAt: now,
      };
      if (!(await insertPasskey(tx, passkey))) throw new ProofRefused('This passkey is already registered.');
      await challengeUsed(tx, challenge.id, now);
      await enrollmentUsed(tx, hash, now);
      return { ...passkey, lastUsedAt: null };
    });
  }
}

function codeState(latest: StoredCode | undefined, now: Date): ProofOffer['code'] {
  if (!latest) return { state: 'none' };
  if (latest.usedAt) return { state: 'used' };
  if (latest.attempts >= CODE_MAX_ATTEMPTS) return { state: 'locked' };
  if (latest.expiresAt <= now) return { state: 'expired' };
  return { state: 'active', expiresAt: latest.expiresAt, triesLeft: CODE_MAX_ATTEMPTS - latest.attempts };
}
