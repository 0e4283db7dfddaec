/**
 * Cart tokens: opaque, 32 URL- and cookie-safe characters, carried by the `cart` cookie and the MCP door.
 * A token the store hands out before its cart exists (an empty cart shown to a new visitor) is signed:
 * 16 random bytes and 8 bytes of an HMAC under the store's key. So the first change keeps that very token,
 * and a client still cannot make up a token of its own to start a cart under.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const CART_TOKEN = /^[A-Za-z0-9_-]{32}$/;
const RANDOM_BYTES = 16;
const SIGNATURE_BYTES = 8;

/** Whether a value has a cart token's form (it may still name no live cart). Checked before any query. */
export function isCartToken(value: unknown): value is string {
  return typeof value === 'string' && CART_TOKEN.test(value);
}

export class CartTokens {
  constructor(private readonly key: Buffer) {}

  /** A new token, signed. */
  issue(): string {
    const random = randomBytes(RANDOM_BYTES);
    return Buffer.concat([random, this.sign(random)]).toString('base64url');
  }

  /** Whether this store issued the token (so a cart may be started under it). */
  issued(token: string): boolean {
    if (!isCartToken(token)) return false;
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length !== RANDOM_BYTES + SIGNATURE_BYTES) return false;
    return timingSafeEqual(bytes.subarray(RANDOM_BYTES), this.sign(bytes.subarray(0, RANDOM_BYTES)));
  }

  private sign(random: Buffer): Buffer {
    return createHmac('sha256', this.key).update(random).digest().subarray(0, SIGNATURE_BYTES);
  }
}

/** A fresh key for signing tokens (stored once per store, shared by every instance). */
export function newCartTokenKey(): string {
  return randomBytes(32).toString('base64url');
}
