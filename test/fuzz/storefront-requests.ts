/**
 * Generators of storefront requests for the fuzz suite: query strings and path segments (with bad percent-encoding,
 * NUL as %00, a lone surrogate as %ED%A0%80), and the cart endpoints' bodies as JSON (arbitrary, or a valid body
 * with one field mutated), urlencoded and multipart forms, and other types.
 */
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { hostileJson, hostileString, mutate, mutation, toJson } from './fuzz-harness.js';
import { CHECKOUT_FORM } from '../helpers/orders.js';

/** `text` with each lone surrogate replaced by U+FFFD (encodeURIComponent throws on them). */
export const wellFormed = (text: string) => text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** Percent-encoding as a client may send it, broken included. */
export const RAW_URL_PIECES = ['%', '%z', '%zz', '%00', '%ED%A0%80', '%ED%BF%BF', '%C0%AF', '%C3', '%FF', '%FE%FF', '%2', '%25', '%F0%9F%98%80', '+', '[]', '[', ']', '&', '=', ';', '..', '%2e%2e', '%2F', '~', '!', "'", '*', '(', ')'];

/** One query value or path segment: encoded text and raw pieces. */
export const urlText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: hostileString.map((text) => encodeURIComponent(wellFormed(text)).slice(0, 20_000)) },
      { weight: 2, arbitrary: fc.constantFrom(...RAW_URL_PIECES) },
      { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9-]{0,12}$/) },
      { weight: 1, arbitrary: fc.constantFrom('1', '0', '-1', '250', '251', '10', '11', '0x5', '1e1', '+3', ' 3', '3.0', '99999999999999999999', 'related', 'complementary', 'product,collection,query', 'all', 'espresso') },
    ),
    { maxLength: 4 },
  )
  .map((parts) => parts.join(''));

export const QUERY_KEYS = ['limit', 'page', 'q', 'resources[type]', 'resources[limit]', 'resources[options][fields]', 'product_id', 'intent', 'view', 'section_id'];

export const queryString: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...QUERY_KEYS) }, { weight: 1, arbitrary: urlText }), fc.option(urlText, { nil: undefined })),
    { maxLength: 5 },
  )
  .map((pairs) => pairs.map(([key, value]) => (value === undefined ? key : `${key}=${value}`)).join('&'));

/** GET routes, with the path segment they take (if any) as a function. */
export const GET_ROUTES: ((segment: string) => string)[] = [
  () => '/products.json',
  (handle) => `/collections/${handle}/products.json`,
  () => '/collections/all/products.json',
  (handle) => `/products/${handle}.js`,
  () => '/products/decaf-capsules.js',
  () => '/search/suggest.json',
  () => '/recommendations/products.json',
  () => '/cart.js',
  () => '/cart.json',
  (token) => `/cart/c/${token}`,
];

export const CART_WRITES = ['/cart/add.js', '/cart/change.js', '/cart/update.js', '/cart/clear.js'] as const;
export type CartWrite = (typeof CART_WRITES)[number];

export interface CartBody {
  contentType: string | undefined;
  payload: string | undefined;
  /** How the body was made, for a failure message. */
  kind: string;
}

/** Valid bodies of each cart write, from which mutations start. */
export function validCartBodies(variantIds: number[], lineKey: string): Record<CartWrite, Record<string, unknown>> {
  return {
    '/cart/add.js': { items: [{ id: variantIds[0], quantity: 1, properties: { Engraving: 'Hi', _hidden: 'x' } }, { id: String(variantIds[1]), quantity: 2 }] },
    '/cart/change.js': { id: lineKey, quantity: 2, properties: { Engraving: 'Yo' } },
    '/cart/update.js': { updates: { [String(variantIds[0])]: 3, [lineKey]: 1 }, note: 'Leave at the door', attributes: { gift: 'yes' } },
    '/cart/clear.js': {},
  };
}

const FORM_KEYS = [
  'id',
  'quantity',
  'line',
  'note',
  'selling_plan',
  'items[0][id]',
  'items[0][quantity]',
  'items[0][properties][Name]',
  'items[1][id]',
  'items[][id]',
  'properties[Engraving]',
  'properties[__proto__]',
  'updates[]',
  'attributes[gift]',
  'attributes[__proto__][x]',
  '__proto__[x]',
  'constructor[prototype][x]',
];

/** A urlencoded form: known and random keys, the variant ids among the values. */
function formBody(variantIds: number[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...FORM_KEYS, `updates[${variantIds[0]}]`) },
    { weight: 1, arbitrary: urlText },
  );
  const value = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...variantIds.map(String)) }, { weight: 3, arbitrary: urlText });
  return fc.array(fc.tuple(key, value), { maxLength: 8 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
}

/** A multipart body with the given text fields (and now and then a file part). */
function multipartBody(fields: [string, string][], file: boolean): { contentType: string; payload: string } {
  const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
  const parts = fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name.replace(/["\r\n]/g, '')}"\r\n\r\n${value}\r\n`);
  if (file) parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload: `${parts.join('')}--${boundary}--\r\n` };
}

/** A body for `route`: JSON (arbitrary or a mutated valid body), a form, multipart, another type, or none. */
export function cartBody(route: CartWrite, valid: Record<string, unknown>, variantIds: number[]): fc.Arbitrary<CartBody> {
  const json = (contentType = 'application/json') => (value: unknown, kind: string): CartBody => ({ contentType, payload: toJson(value), kind });
  return fc.oneof(
    { weight: 4, arbitrary: mutation.map((change) => { const { value, path } = mutate(valid, change); return json()(value, `JSON, valid with ${path}`); }) },
    { weight: 3, arbitrary: hostileJson.map((value) => json()(value, 'JSON, arbitrary')) },
    { weight: 3, arbitrary: formBody(variantIds).map((payload): CartBody => ({ contentType: 'application/x-www-form-urlencoded', payload, kind: 'urlencoded form' })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(fc.tuple(fc.constantFrom(...FORM_KEYS), fc.oneof(hostileString, fc.constantFrom(...variantIds.map(String)))), { maxLength: 6 }), fc.boolean())
        .map(([fields, file]): CartBody => ({ ...multipartBody(fields.map(([k, v]) => [k, wellFormed(v)]), file), kind: 'multipart form' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(undefined, 'text/plain', 'application/xml', 'application/json; charset=latin1', 'application/x-www-form-urlencoded; charset=utf-16', 'multipart/form-data'), fc.oneof(fc.constant(''), fc.string({ maxLength: 30 }), hostileJson.map(toJson)))
        .map(([contentType, payload]): CartBody => ({ contentType, payload, kind: `other type ${contentType}` })),
    },
    { weight: 1, arbitrary: fc.constant<CartBody>({ contentType: undefined, payload: undefined, kind: 'no body' }) },
  );
}

export async function send(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  options: { cookie?: string; body?: CartBody; accept?: string } = {},
): Promise<{ status: number; raw: string; contentType: string; setCookie: string | undefined }> {
  const headers: Record<string, string> = { host: 'store.test' };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.body?.contentType !== undefined) headers['content-type'] = options.body.contentType;
  if (options.accept) headers.accept = options.accept;
  const response = await app.inject({ method, url, headers, ...(options.body?.payload === undefined ? {} : { payload: options.body.payload }) });
  const cookies = ([] as string[]).concat((response.headers['set-cookie'] as string | string[] | undefined) ?? []);
  const cart = cookies.find((c) => c.startsWith('cart='));
  return {
    status: response.statusCode,
    raw: response.body,
    contentType: String(response.headers['content-type'] ?? ''),
    setCookie: cart ? cart.slice('cart='.length).split(';')[0] : undefined,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The shop's HTML pages (issue [pages])

/** The HTML pages, with the path segment they take (if any). */
export const PAGE_ROUTES: ((segment: string) => string)[] = [
  () => '/',
  (handle) => `/collections/${handle}`,
  () => '/collections/all',
  (handle) => `/products/${handle}`,
  () => '/products/decaf-capsules',
  () => '/search',
  () => '/cart',
  (token) => `/cart/c/${token}`,
  () => '/checkout',
];

/** The query keys the pages read, some others, and the ids a product page's `?variant=` and `?selling_plan=` may name. */
export function pageQueryString(ids: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('page', 'q', 'variant', 'selling_plan', 'variant[]', 'q[]') }, { weight: 1, arbitrary: urlText });
  const value = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...ids) }, { weight: 3, arbitrary: urlText });
  return fc
    .array(fc.tuple(key, fc.option(value, { nil: undefined })), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&'));
}

/** What a browser sends opening a page, what a script or a crawler sends, and nothing at all. */
export const PAGE_HEADERS: Record<string, string>[] = [
  { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' },
  { accept: 'text/html' },
  { accept: 'application/json' },
  { 'x-requested-with': 'XMLHttpRequest', 'sec-fetch-mode': 'cors' },
  {},
];

/** Where a form post says it comes from: this store, another site, a page with no referrer, or nothing said. */
export const FORM_ORIGINS: Record<string, string>[] = [
  { origin: 'http://store.test', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' },
  { origin: 'null', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' },
  {},
  { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
  { origin: 'null', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
  { origin: 'http://store.test.evil.example' },
  { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' },
];

/** A form post that says it comes from another site (the same-origin check refuses it before reading anything). */
export const isForeign = (headers: Record<string, string>) =>
  (headers.origin !== undefined && headers.origin !== 'null' && headers.origin !== 'http://store.test') ||
  (headers['sec-fetch-site'] !== undefined && headers['sec-fetch-site'] !== 'same-origin');

/** A body for POST /checkout: the form with each field kept, changed, left out or doubled (and other keys), or another body. */
export const checkoutBody: fc.Arbitrary<CartBody> = (() => {
  const names = Object.keys(CHECKOUT_FORM);
  const field = (name: string) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant([[name, encodeURIComponent(CHECKOUT_FORM[name]!)]]) },
      { weight: 2, arbitrary: urlText.map((value) => [[name, value]]) },
      { weight: 1, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.tuple(urlText, urlText).map(([a, b]) => [[name, a], [`${name}[]`, b]]) },
    );
  const form = fc
    .tuple(fc.tuple(...names.map(field)), fc.array(fc.tuple(urlText, urlText), { maxLength: 2 }))
    .map(([fields, extra]): CartBody => ({
      contentType: 'application/x-www-form-urlencoded',
      payload: [...fields.flat(), ...extra].map(([k, v]) => `${k}=${v}`).join('&'),
      kind: 'urlencoded form',
    }));
  return fc.oneof(
    { weight: 6, arbitrary: form },
    { weight: 1, arbitrary: hostileJson.map((value): CartBody => ({ contentType: 'application/json', payload: toJson(value), kind: 'JSON, arbitrary' })) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(fc.constantFrom(...names), hostileString), { maxLength: 6 })
        .map((fields): CartBody => ({ ...multipartBody(fields.map(([k, v]) => [k, wellFormed(v)]), false), kind: 'multipart form' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(undefined, 'text/plain', 'application/xml', 'application/x-www-form-urlencoded; charset=utf-16'), fc.oneof(fc.constant(''), fc.string({ maxLength: 30 })))
        .map(([contentType, payload]): CartBody => ({ contentType, payload, kind: `other type ${contentType}` })),
    },
    { weight: 1, arbitrary: fc.constant<CartBody>({ contentType: undefined, payload: undefined, kind: 'no body' }) },
  );
})();

/** The scripts a page may load or carry: the shop's script, the passkey scripts, JSON-LD data. Nothing else is a script. */
const PAGE_SCRIPT = /^<script (?:src="\/assets\/storefront\.js" defer|src="\/checkout\/(?:webauthn|passkey)\.js" defer|type="application\/ld\+json")>$/;

/** An HTML answer's script elements, each one the page's own (nothing a request sent became one). */
export function assertOwnScripts(html: string, what: string): void {
  for (const tag of html.match(/<script\b[^>]*>/gi) ?? []) {
    if (!PAGE_SCRIPT.test(tag)) throw new Error(`${what}: a script element the page does not have: ${tag.slice(0, 200)}`);
  }
}

export async function sendPage(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  options: { cookie?: string; body?: CartBody; headers?: Record<string, string> } = {},
): Promise<{ status: number; raw: string; contentType: string; location: string | undefined; cookies: string[] }> {
  const headers: Record<string, string> = { host: 'store.test', ...options.headers };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.body?.contentType !== undefined) headers['content-type'] = options.body.contentType;
  const response = await app.inject({ method, url, headers, ...(options.body?.payload === undefined ? {} : { payload: options.body.payload }) });
  return {
    status: response.statusCode,
    raw: response.body,
    contentType: String(response.headers['content-type'] ?? ''),
    location: response.headers.location === undefined ? undefined : String(response.headers.location),
    cookies: ([] as string[]).concat((response.headers['set-cookie'] as string | string[] | undefined) ?? []),
  };
}
