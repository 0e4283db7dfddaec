/**
 * A browser session against the app, for cart tests: it keeps the `cart` cookie the way a browser would
 * (sends it, replaces it when the store sets a new one) and drives the cart endpoints through app.inject.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { CartSchema } from '../../src/storefront/cart-schemas.js';
import type { TestStore } from '../helpers/store.js';

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  raw: string;
  /** The Set-Cookie header for `cart`, if the answer set one. */
  setCookie: string | undefined;
}

export class Shopper {
  /** The `cart` cookie's value, as the browser holds it. */
  token: string | undefined;

  constructor(private readonly app: FastifyInstance) {}

  /** A shopper on `app` whose browser already holds the cart `token` (the same cart seen through another instance). */
  static holding(app: FastifyInstance, token: string): Shopper {
    const shopper = new Shopper(app);
    shopper.token = token;
    return shopper;
  }

  async send(
    method: 'GET' | 'POST',
    url: string,
    options: { json?: unknown; form?: string; payload?: string | Buffer; headers?: Record<string, string>; cookie?: string | null } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    const cookie = options.cookie === undefined ? (this.token ? `cart=${this.token}` : undefined) : options.cookie;
    if (cookie) headers.cookie = cookie;
    let payload: string | Buffer | undefined = options.payload;
    if (options.json !== undefined) {
      payload = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    if (options.form !== undefined) {
      payload = options.form;
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    const response = await this.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    const setCookies = ([] as string[]).concat((response.headers['set-cookie'] as string | string[] | undefined) ?? []);
    const setCookie = setCookies.find((c) => c.startsWith('cart='));
    if (setCookie) this.token = setCookie.slice('cart='.length).split(';')[0];
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      body = undefined;
    }
    return { status: response.statusCode, headers: response.headers, body, raw: response.body, setCookie };
  }

  cart(): Promise<Answer> {
    return this.send('GET', '/cart.js');
  }

  add(items: unknown[]): Promise<Answer> {
    return this.send('POST', '/cart/add.js', { json: { items } });
  }

  change(body: unknown): Promise<Answer> {
    return this.send('POST', '/cart/change.js', { json: body });
  }

  update(body: unknown): Promise<Answer> {
    return this.send('POST', '/cart/update.js', { json: body });
  }

  clear(): Promise<Answer> {
    return this.send('POST', '/cart/clear.js');
  }
}

/** A published variant's id by SKU, from the store's catalog snapshot. */
export function variantId(t: TestStore, sku: string): number {
  const variant = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  if (!variant) throw new Error(`no published variant ${sku}`);
  return variant.id;
}

/** Any variant's id by SKU, published or not, from the database. */
export async function storedVariantId(t: TestStore, sku: string): Promise<number> {
  const [row] = await t.store.db.query<{ id: number }>('select id from variants where sku = $1', [sku]);
  if (!row) throw new Error(`no variant ${sku}`);
  return row.id;
}

export async function countRows(t: TestStore, table: 'carts' | 'cart_lines'): Promise<number> {
  const [row] = await t.store.db.query<{ count: number }>(`select count(*)::int as count from ${table}`);
  return row!.count;
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateCart = ajv.compile(CartSchema);

/** Where a body breaks the published Cart schema (empty when it conforms). */
export function cartSchemaErrors(body: unknown): string[] {
  return validateCart(body) ? [] : (validateCart.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** A 422 Cart Error whose description matches. */
export function assertCartError(answer: Answer, description: RegExp): void {
  if (answer.status !== 422 || answer.body?.message !== 'Cart Error' || answer.body?.status !== 422 || !description.test(answer.body?.description)) {
    throw new Error(`expected 422 Cart Error matching ${description}, got ${answer.status} ${answer.raw}`);
  }
}
