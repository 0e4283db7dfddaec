/**
 * The store's ES256 keys for signing what it sends (order webhooks), shared by every instance: SIGNING_KEY when
 * the operator gives one, else one generated once and kept in the database (`signing_keys`, migration 007), two
 * instances starting at once ending with the same key. The business profile publishes the public halves: the
 * active key and every key retired less than RETIRED_KEY_GRACE_MS ago, so an event signed before a rotation can
 * still be verified while it may be delivered. Every `kid` is the key's RFC 7638 JWK thumbprint.
 * No private key material ever reaches a log or an error message.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { ConfigError } from '../../config.js';
import type { Database, Queryable } from '../../db/database.js';
import type { SignatureKey } from './message-signature.js';

/** A public key as the profile's `signing_keys` lists it (UCP profile schema, `signing_key`). */
export interface PublishedKey {
  kid: string;
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  use: 'sig';
  alg: 'ES256';
}

/** UCP's minimum grace for a retired key (Message Signatures, key rotation); it outlasts the 24 h webhook deadline. */
export const RETIRED_KEY_GRACE_MS = 7 * 24 * 3600 * 1000;

interface KeyRow {
  kid: string;
  private_jwk: JsonWebKey | null;
  public_jwk: PublishedKey;
  retired_at: Date | string | null;
}

interface KnownKey {
  published: PublishedKey;
  /** Unix ms when it stopped signing; null while active. */
  retiredAt: number | null;
}

/** The public half of a P-256 private key as published, with its RFC 7638 thumbprint as `kid`. */
function publicJwk(privateKey: KeyObject): PublishedKey {
  const { x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
  // RFC 7638: the required members of an EC key, in lexicographic order, no whitespace.
  const thumbprint = createHash('sha256').update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y })).digest('base64url');
  return { kid: thumbprint, kty: 'EC', crv: 'P-256', x: x!, y: y!, use: 'sig', alg: 'ES256' };
}

const PROBE = Buffer.from('storefront signing key check');

/** A P-256 private key whose public half is its own: Node accepts a JWK whose `d` does not match its `x` and `y`. */
function isUsableP256(key: KeyObject): boolean {
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return false;
  try {
    return verify('sha256', PROBE, createPublicKey(key), sign('sha256', PROBE, key));
  } catch {
    return false;
  }
}

/** SIGNING_KEY: a private EC P-256 JWK (JSON) or a PKCS#8 PEM (literal `\n` accepted, as env files write it). */
function parseConfiguredKey(raw: string): KeyObject {
  const text = raw.trim();
  let key: KeyObject;
  try {
    key = text.startsWith('{')
      ? createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: 'jwk' })
      : createPrivateKey({ key: text.replace(/\\n/g, '\n'), format: 'pem' });
  } catch {
    // The cause is not passed on: parser messages may quote what they read.
    throw new ConfigError('SIGNING_KEY', 'not a private key: expected an EC P-256 private JWK (JSON with "d") or a PKCS#8 PEM private key');
  }
  if (!isUsableP256(key)) throw new ConfigError('SIGNING_KEY', 'not a usable EC P-256 private key (ES256): wrong curve or type, or its "d" does not match "x" and "y"');
  return key;
}

function generateKey(): { privateJwk: JsonWebKey; published: PublishedKey } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateJwk: privateKey.export({ format: 'jwk' }), published: publicJwk(privateKey) };
}

function activeFrom(row: KeyRow): SignatureKey {
  try {
    const privateKey = createPrivateKey({ key: row.private_jwk as JsonWebKey, format: 'jwk' });
    if (isUsableP256(privateKey) && publicJwk(privateKey).kid === row.kid) return { kid: row.kid, privateKey };
  } catch {
    // reported below, without the parser's words
  }
  throw new Error(`The active signing key ${row.kid} in signing_keys is not a usable P-256 private key.`);
}

const READ_KEYS = `select kid, case when retired_at is null then private_jwk end as private_jwk, public_jwk, retired_at
                     from signing_keys
                    where retired_at is null or retired_at > now() - make_interval(secs => $1)
                    order by created_at desc, kid`;

export class SigningKeys {
  #active: SignatureKey | undefined;
  #known: KnownKey[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #configured: { key: SignatureKey; published: PublishedKey } | undefined;

  private constructor(configured: KeyObject | undefined) {
    if (configured) {
      const published = publicJwk(configured);
      this.#configured = { key: { kid: published.kid, privateKey: configured }, published };
    }
  }

  /**
   * The store's keys: with `configured` (SIGNING_KEY), that key signs (a bad value throws a ConfigError naming
   * SIGNING_KEY, never quoting it); without, the database's active key does, generated on first use.
   */
  static async open(db: Database, configured: string | undefined): Promise<SigningKeys> {
    const keys = new SigningKeys(configured === undefined ? undefined : parseConfiguredKey(configured));
    await keys.refresh(db);
    return keys;
  }

  /** The key that signs now. */
  current(): SignatureKey {
    const key = this.#configured?.key ?? this.#active;
    if (!key) throw new Error('The signing keys were not read.');
    return key;
  }

  /** What the profile publishes: the signing key first, then keys retired less than the grace ago. */
  published(now = Date.now()): PublishedKey[] {
    const listed = new Map<string, PublishedKey>();
    if (this.#configured) listed.set(this.#configured.published.kid, this.#configured.published);
    for (const { published, retiredAt } of this.#known) {
      // With SIGNING_KEY the database's own key signs nothing (signatures are made when a message is sent): unpublished.
      if (retiredAt === null ? !this.#configured : retiredAt > now - RETIRED_KEY_GRACE_MS) listed.set(published.kid, published);
    }
    return [...listed.values()].map((key) => ({ ...key }));
  }

  /**
   * Re-reads the keys (a rotation by another instance or the CLI is picked up). Without SIGNING_KEY, a database
   * with no active key gets one: instances racing insert at most one (the unique index), and all read that one.
   */
  async refresh(db: Queryable): Promise<void> {
    let rows = await db.query<KeyRow & Record<string, unknown>>(READ_KEYS, [RETIRED_KEY_GRACE_MS / 1000]);
    if (!this.#configured && !rows.some((row) => row.retired_at === null)) {
      const { privateJwk, published } = generateKey();
      await db.query(
        `insert into signing_keys (kid, private_jwk, public_jwk) values ($1, $2::jsonb, $3::jsonb) on conflict do nothing`,
        [published.kid, JSON.stringify(privateJwk), JSON.stringify(published)],
      );
      rows = await db.query<KeyRow & Record<string, unknown>>(READ_KEYS, [RETIRED_KEY_GRACE_MS / 1000]);
    }
    const active = rows.find((row) => row.retired_at === null);
    if (!this.#configured && !active) throw new Error('No active signing key could be read or made.');
    this.#active = active && !this.#configured ? activeFrom(active) : undefined;
    this.#known = rows.map((row) => ({
      published: { ...row.public_jwk, kid: row.kid },
      retiredAt: row.retired_at === null ? null : new Date(row.retired_at).getTime(),
    }));
  }

  /**
   * Retires the active key and makes a new one, in one transaction (concurrent rotations run one after the
   * other); the retired key stays published for the grace. With SIGNING_KEY the operator rotates by changing it.
   */
  async rotate(db: Database): Promise<{ kid: string; retired: string[] }> {
    if (this.#configured) throw new ConfigError('SIGNING_KEY', 'is set, so the store signs with it: rotate by setting a new SIGNING_KEY');
    const { privateJwk, published } = generateKey();
    const retired = await db.transaction(async (tx) => {
      await tx.query('lock table signing_keys in exclusive mode');
      const rows = await tx.query<{ kid: string }>('update signing_keys set retired_at = now() where retired_at is null returning kid');
      await tx.query(`insert into signing_keys (kid, private_jwk, public_jwk) values ($1, $2::jsonb, $3::jsonb)`, [
        published.kid,
        JSON.stringify(privateJwk),
        JSON.stringify(published),
      ]);
      return rows.map((row) => row.kid);
    });
    await this.refresh(db);
    return { kid: published.kid, retired };
  }

  /** Re-reads the keys every `intervalMs` (a rotation elsewhere reaches this instance's signing and profile). */
  watch(db: Queryable, intervalMs: number, onError: (error: unknown) => void): void {
    this.#timer = setInterval(() => this.refresh(db).catch(onError), intervalMs);
    this.#timer.unref();
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}
