/** The `cart` session cookie: it carries the cart token and nothing else (scope cart:write). */
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CART_LIFETIME_DAYS } from '../cart/cart.js';
import { isCartToken } from '../cart/cart-token.js';

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
