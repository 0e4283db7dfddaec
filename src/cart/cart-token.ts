/** Cart tokens: opaque, 192 random bits, URL- and cookie-safe; the cart cookie and the MCP door both carry one. */
import { randomBytes } from 'node:crypto';

const CART_TOKEN = /^[A-Za-z0-9_-]{32}$/;

export function newCartToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Whether a value has a cart token's form (it may still name no live cart). Checked before any query. */
export function isCartToken(value: unknown): value is string {
  return typeof value === 'string' && CART_TOKEN.test(value);
}
