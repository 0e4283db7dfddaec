/** The `cart` session cookie: it carries the cart token and nothing else (scope cart:write). */
import { createHash } from 'node:crypto';
import { fastifyCookie, type CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CART_LIFETIME_DAYS } from '../cart/cart.js';
import { isCartToken } from '../cart/cart-token.js';
import type { RateLimitKey } from '../http/rate-limit.js';

export const CART_COOKIE = 'cart';

/** The token the request's cookie carries, or undefined when there is none or it is malformed. */
export function cartFromCookie(request: FastifyRequest): string | undefined {
  const value = request.cookies[CART_COOKIE];
  return isCartToken(value) ? value : undefined;
}

export function cartCookieOptions(baseUrl: string): CookieSerializeOptions {
  return {
    path: '/',
    sameSite: 'lax',
    httpOnly: true,
    maxAge: CART_LIFETIME_DAYS * 24 * 60 * 60,
    secure: baseUrl.startsWith('https:'),
  };
}

export function setCartCookie(reply: FastifyReply, token: string, baseUrl: string): void {
  reply.setCookie(CART_COOKIE, token, cartCookieOptions(baseUrl));
}

/**
 * A cart write also counts against its cart's budget (src/http/rate-limit.ts): /cart/c/{token}'s cart, else the
 * cookie's (read from the header: the limits count a request before its cookies are parsed). Its key is a digest of
 * the token (a token is the cart's only key, and the counters' keys may be listed by whoever reads Redis); a request
 * without a token names none. The cart-write routes declare it: `config: { rateLimit: 'cart-write', rateLimitKeys: PER_CART }`.
 */
export const PER_CART: readonly RateLimitKey[] = [
  {
    budget: 'cart-write-per-cart',
    onArrival(request) {
      const fromPath = (request.params as { token?: unknown } | undefined)?.token;
      const header = request.headers.cookie;
      const token = fromPath ?? (header === undefined ? undefined : fastifyCookie.parse(header)[CART_COOKIE]);
      return isCartToken(token) ? createHash('sha256').update(token).digest('base64url').slice(0, 22) : undefined;
    },
  },
];
