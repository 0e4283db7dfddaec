/**
 * The Stripe stand-in (test/helpers/stripe-stand-in.ts) cannot drift from Stripe: it is driven here only through the
 * official `stripe` package (so every request type-checks against the SDK's parameter types), and every object it
 * answers — sessions, payment intents, charges, refunds, disputes, events — is checked against Stripe's published
 * example of that resource (test/fixtures/stripe/fixtures3.json, from stripe/openapi) and, where the example cannot
 * say (a null, an empty list), against the SDK's own TypeScript declarations, read with the TypeScript compiler:
 * the same fields (every field of the example, none it lacks), the same JSON types, null only where the example is
 * null or the SDK's type is nullable, enum values the SDK's type lists, the same `object`.
 * Then Stripe's rules the store relies on: idempotency, the expires_at bounds, one capture, refunds never above what
 * was captured, the hosted page's Pay and Cancel, and webhook events signed as Stripe signs them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import ts from 'typescript';
import { startStripeStandIn, STORE_EVENTS, type StripeStandIn } from '../helpers/stripe-stand-in.js';

// ---------------------------------------------------------------------------------------------------------------
// The two references: Stripe's examples, and the SDK's declarations

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const examples = (JSON.parse(readFileSync(new URL('../fixtures/stripe/fixtures3.json', import.meta.url), 'utf8')) as { resources: Record<string, Json> })
  .resources;

/** Where each resource is declared in the SDK, and the declaration's name. */
const DECLARATIONS: Record<string, [file: string, name: string]> = {
  'checkout.session': ['resources/Checkout/Sessions.d.ts', 'Session'],
  payment_intent: ['resources/PaymentIntents.d.ts', 'PaymentIntent'],
  refund: ['resources/Refunds.d.ts', 'Refund'],
  charge: ['resources/Charges.d.ts', 'Charge'],
  dispute: ['resources/Disputes.d.ts', 'Dispute'],
  event: ['resources/Events.d.ts', 'EventBase'],
};

interface SdkTypes {
  checker: ts.TypeChecker;
  resources: Map<string, ts.Type>;
}

/**
 * The SDK's declarations of the six resources, read with the TypeScript compiler. Only those files (and the SDK's
 * shared.d.ts) are read, not everything they import: a type declared elsewhere (a Customer, an Account) stays
 * unknown, and a value checked against an unknown type with no example is reported, never passed.
 */
function readSdkTypes(): SdkTypes {
  const root = path.join(path.dirname(createRequire(import.meta.url).resolve('stripe')), '..', 'esm');
  const files = Object.fromEntries(Object.entries(DECLARATIONS).map(([object, [file]]) => [object, path.join(root, file)]));
  const program = ts.createProgram([...Object.values(files), path.join(root, 'shared.d.ts')], {
    noResolve: true,
    noEmit: true,
    strict: true,
    lib: ['lib.es5.d.ts'],
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const resources = new Map<string, ts.Type>();
  for (const [object, [, name]] of Object.entries(DECLARATIONS)) {
    const source = program.getSourceFile(files[object]!);
    const symbol = source && checker.getSymbolAtLocation(source)?.exports?.get(ts.escapeLeadingUnderscores(name));
    assert.ok(symbol, `the stripe package declares ${name} in ${DECLARATIONS[object]![0]}`);
    resources.set(object, checker.getDeclaredTypeOfSymbol(symbol));
  }
  return { checker, resources };
}

type Kind = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

function kindOf(value: unknown): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const kind = typeof value;
  if (kind === 'boolean' || kind === 'number' || kind === 'string' || kind === 'object') return kind;
  throw new Error(`not JSON: ${kind}`);
}

/** One member of a field's type union, with the declaration's own text where there is one. */
interface Part {
  type: ts.Type;
  node?: ts.TypeNode;
}

/**
 * What the SDK's type says of one field. A field's declaration is read as written (`string | Customer | null`), so a
 * type from a file not read (Customer) still counts as an object, and `| null` is seen whatever the rest resolves to.
 */
class SdkType {
  private readonly parts: Part[];

  constructor(
    private readonly sdk: SdkTypes,
    readonly type: ts.Type | undefined,
    node?: ts.TypeNode,
  ) {
    const checker = sdk.checker;
    const top: Part[] = node
      ? (ts.isUnionTypeNode(node) ? node.types : [node]).map((member) => ({ type: checker.getTypeFromTypeNode(member), node: member }))
      : type
        ? [{ type }]
        : [];
    // An alias of a union ('open' | 'complete' | 'expired') is read member by member.
    this.parts = top.flatMap((part) => (part.type.isUnion() ? part.type.types.map((member) => ({ type: member })) : [part]));
  }

  private kindOf(part: Part): Kind | 'unknown' | 'undefined' {
    const { flags } = part.type;
    if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return part.node && ts.isTypeReferenceNode(part.node) ? 'object' : 'unknown';
    if (flags & ts.TypeFlags.Null) return 'null';
    if (flags & ts.TypeFlags.Undefined) return 'undefined';
    if (flags & ts.TypeFlags.StringLike) return 'string';
    if (flags & ts.TypeFlags.NumberLike) return 'number';
    if (flags & ts.TypeFlags.BooleanLike) return 'boolean';
    if (part.type.isIntersection()) return part.type.types.some((member) => member.flags & ts.TypeFlags.StringLike) ? 'string' : 'object';
    if (this.sdk.checker.isArrayType(part.type) || this.sdk.checker.isTupleType(part.type)) return 'array';
    if (flags & ts.TypeFlags.Object) return 'object';
    return 'unknown';
  }

  /** The JSON kinds the type allows, and whether part of it could not be read; undefined when there is no type. */
  kinds(): { known: Set<Kind>; unknownPart: boolean } | undefined {
    if (this.parts.length === 0) return undefined;
    const known = new Set<Kind>();
    let unknownPart = false;
    for (const part of this.parts) {
      const kind = this.kindOf(part);
      if (kind === 'unknown') unknownPart = true;
      else if (kind !== 'undefined') known.add(kind);
    }
    return { known, unknownPart };
  }

  nullable(): boolean {
    return this.parts.some((part) => part.type.flags & ts.TypeFlags.Null);
  }

  /**
   * The values a string enum lists ('open' | 'complete' | 'expired'), or undefined for a plain string. The SDK joins
   * every enum with `OtherString` so that clients take values added later; a stand-in must answer a listed one.
   */
  literals(): Set<string> | undefined {
    const listed = this.parts.map((part) => part.type).filter((member) => member.isStringLiteral());
    if (listed.length === 0) return undefined;
    return new Set(listed.map((member) => member.value));
  }

  /** The object members that could be read. */
  private objects(): ts.Type[] {
    return this.parts.filter((part) => this.kindOf(part) === 'object' && part.type.flags & ts.TypeFlags.Object).map((part) => part.type);
  }

  /** A field of the object member(s), or the value type of a dictionary (metadata). */
  field(name: string): SdkType {
    for (const member of this.objects()) {
      const property = this.sdk.checker.getPropertyOfType(member, name);
      if (property) {
        const declaration = property.valueDeclaration;
        const node = declaration && ts.isPropertySignature(declaration) ? declaration.type : undefined;
        return new SdkType(this.sdk, this.sdk.checker.getTypeOfSymbol(property), node);
      }
      const index = this.sdk.checker.getIndexInfosOfType(member)[0];
      if (index) return new SdkType(this.sdk, index.type);
    }
    return new SdkType(this.sdk, undefined);
  }

  isDictionary(): boolean {
    return this.objects().some((member) => this.sdk.checker.getIndexInfosOfType(member).length > 0);
  }

  /** The fields the type declares, and which of them are required. */
  fields(): { names: Set<string>; required: Set<string> } | undefined {
    const [member] = this.objects();
    if (!member) return undefined;
    const properties = this.sdk.checker.getPropertiesOfType(member);
    return {
      names: new Set(properties.map((property) => property.name)),
      required: new Set(properties.filter((property) => !(property.flags & ts.SymbolFlags.Optional)).map((property) => property.name)),
    };
  }

  element(): SdkType {
    for (const part of this.parts) {
      if (this.kindOf(part) !== 'array') continue;
      const node = part.node;
      const elementNode = node && ts.isArrayTypeNode(node) ? node.elementType : node && ts.isTypeReferenceNode(node) ? node.typeArguments?.[0] : undefined;
      if (elementNode) return new SdkType(this.sdk, this.sdk.checker.getTypeFromTypeNode(elementNode), elementNode);
      return new SdkType(this.sdk, this.sdk.checker.getTypeArguments(part.type as ts.TypeReference)[0]);
    }
    return new SdkType(this.sdk, undefined);
  }
}

/**
 * Every way `value` differs from Stripe: checked against `example` where Stripe's example says something, against
 * the SDK's type where it does not (a null example, an empty list). An object naming a resource in its `object` field
 * (an expanded payment_intent, the object in an event, a refund in a charge's list) is checked against that
 * resource's example and declaration.
 */
function differences(sdk: SdkTypes, value: unknown, example: Json | undefined, type: SdkType, where: string, found: string[]): string[] {
  const kind = kindOf(value);
  if (kind === 'object') {
    const object = (value as Record<string, unknown>).object;
    if (typeof object === 'string' && sdk.resources.has(object) && !(example && kindOf(example) === 'object' && (example as Record<string, Json>).object === object)) {
      const allowed = type.kinds();
      if (allowed && !allowed.known.has('object') && !allowed.unknownPart) found.push(`${where}: an object (${object}) where the SDK's type has none`);
      return differences(sdk, value, examples[object], new SdkType(sdk, sdk.resources.get(object)), where, found);
    }
  }
  if (kind === 'null') {
    if (example !== null && !type.nullable()) found.push(`${where}: null, but the example is not and the SDK's type is not nullable`);
    return found;
  }
  const known = example !== null && example !== undefined;
  if (known && kindOf(example) !== kind) {
    found.push(`${where}: ${kind}, the example has ${kindOf(example)}`);
    return found;
  }
  const kinds = type.kinds();
  if (!kinds || !kinds.known.has(kind)) {
    if (!known && (!kinds || kinds.unknownPart)) {
      found.push(`${where}: ${kind} with neither an example nor an SDK type to check it against`);
      return found;
    }
    if (kinds && !kinds.unknownPart) found.push(`${where}: ${kind}, the SDK's type allows ${[...kinds.known].sort().join(' | ')}`);
  }
  if (kind === 'string') {
    const literals = type.literals();
    if (literals && !literals.has(value as string)) found.push(`${where}: "${String(value)}" is none of the SDK's values (${[...literals].join(', ')})`);
  }
  if (kind === 'array') {
    const items = value as unknown[];
    const first = known ? (example as Json[])[0] : undefined;
    items.forEach((item, index) => differences(sdk, item, first, type.element(), `${where}[${index}]`, found));
  }
  if (kind === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (known) {
      const exampleRecord = example as Record<string, Json>;
      const exampleKeys = Object.keys(exampleRecord);
      if (exampleKeys.length === 0 && type.isDictionary()) {
        // A dictionary (metadata): its values against the SDK's value type.
        for (const key of keys) differences(sdk, record[key], undefined, type.field(key), `${where}.${key}`, found);
        return found;
      }
      for (const key of exampleKeys) if (!(key in record)) found.push(`${where}.${key}: missing (the example has it)`);
      for (const key of keys) {
        if (!(key in exampleRecord)) {
          found.push(`${where}.${key}: a field the example does not have`);
          continue;
        }
        if (key === 'object' && typeof exampleRecord.object === 'string' && record.object !== exampleRecord.object)
          found.push(`${where}.object: "${String(record.object)}", the example's is "${exampleRecord.object}"`);
        differences(sdk, record[key], exampleRecord[key], type.field(key), `${where}.${key}`, found);
      }
      return found;
    }
    if (type.isDictionary()) {
      for (const key of keys) differences(sdk, record[key], undefined, type.field(key), `${where}.${key}`, found);
      return found;
    }
    const fields = type.fields();
    if (!fields) {
      found.push(`${where}: an object where the SDK's type has none`);
      return found;
    }
    for (const key of fields.required) if (!(key in record)) found.push(`${where}.${key}: missing (the SDK's type requires it)`);
    for (const key of keys) {
      if (!fields.names.has(key)) found.push(`${where}.${key}: a field the SDK's type does not have`);
      else differences(sdk, record[key], undefined, type.field(key), `${where}.${key}`, found);
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// A webhook endpoint that checks what arrives as a store does: stripe.webhooks.constructEvent on the raw body

interface Received {
  event: Stripe.Event | null;
  status: number;
  error: string | null;
}

async function startWebhookEndpoint(secret: () => string) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const event = Stripe.webhooks.constructEvent(Buffer.concat(chunks), String(request.headers['stripe-signature'] ?? ''), secret());
        received.push({ event, status: 200, error: null });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      } catch (error) {
        received.push({ event: null, status: 400, error: (error as Error).message });
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad signature"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments/stripe/webhook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------------------------

const STORE = 'http://store.test';

/** The stand-in's clock (tests move it on), in seconds. */
let clock = () => Math.floor(Date.now() / 1000);

function sessionParams(overrides: Partial<Stripe.Checkout.SessionCreateParams> = {}): Stripe.Checkout.SessionCreateParams {
  return {
    mode: 'payment',
    line_items: [
      { quantity: 2, price_data: { currency: 'eur', unit_amount: 1250, product_data: { name: 'Enamel mug' } } },
      { quantity: 1, price_data: { currency: 'eur', unit_amount: 240, product_data: { name: 'Tax' } } },
    ],
    shipping_options: [{ shipping_rate_data: { type: 'fixed_amount', display_name: 'Standard', fixed_amount: { amount: 495, currency: 'eur' } } }],
    customer_email: 'buyer@example.com',
    metadata: { checkout_id: 'chk_1', digest: 'd1' },
    payment_intent_data: { capture_method: 'manual', metadata: { checkout_id: 'chk_1' } },
    expires_at: clock() + 31 * 60,
    success_url: `${STORE}/checkout/paid?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${STORE}/checkout/approve?canceled=1`,
    ...overrides,
  };
}

/** An SDK error's fields, for assert.rejects. */
function stripeError(expected: { type: string; status: number; code?: string; param?: string; message?: RegExp }) {
  return (error: unknown) => {
    assert.ok(error instanceof Stripe.errors.StripeError, `a Stripe error, not ${String(error)}`);
    assert.equal(error.type, expected.type);
    assert.equal(error.statusCode, expected.status);
    if (expected.code) assert.equal(error.code, expected.code);
    if (expected.param) assert.equal(error.param, expected.param);
    if (expected.message) assert.match(error.message, expected.message);
    return true;
  };
}

describe('Stripe stand-in', () => {
  let sdk: SdkTypes;
  let standIn: StripeStandIn;
  let stripe: Stripe;
  let endpoint: Awaited<ReturnType<typeof startWebhookEndpoint>>;
  let secret = '';
  let answers = 0;

  /** Every object the stand-in answers goes through here: it must match Stripe's example and the SDK's type. */
  function conforms<T>(value: T): T {
    const object = (value as { object?: string }).object ?? '';
    assert.ok(sdk.resources.has(object), `an object the check knows: ${object}`);
    const found = differences(sdk, JSON.parse(JSON.stringify(value)), examples[object], new SdkType(sdk, sdk.resources.get(object)), object, []);
    assert.deepEqual(found, [], `${object} differs from Stripe's example or the SDK's type`);
    answers += 1;
    return value;
  }

  async function paidSession(overrides: Partial<Stripe.Checkout.SessionCreateParams> = {}) {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams(overrides)));
    assert.equal(standIn.pay(session.id).status, 'authorized');
    const paid = conforms(await stripe.checkout.sessions.retrieve(session.id, { expand: ['payment_intent'] }));
    const intent = paid.payment_intent as Stripe.PaymentIntent;
    return { session: paid, intent };
  }

  before(async () => {
    sdk = readSdkTypes();
    standIn = await startStripeStandIn();
    clock = () => standIn.now();
    stripe = new Stripe(standIn.secretKey, { ...standIn.sdkOptions, telemetry: false });
    endpoint = await startWebhookEndpoint(() => secret);
    secret = standIn.webhookEndpoint({ url: endpoint.url }).secret;
  });

  after(async () => {
    await standIn.close();
    await endpoint.close();
  });

  it('finds a field too many, a field missing, a wrong type, a wrong enum value and a wrong object', async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const check = (mutate: (copy: Record<string, unknown>) => void) => {
      const copy = JSON.parse(JSON.stringify(session)) as Record<string, unknown>;
      mutate(copy);
      return differences(sdk, copy, examples['checkout.session'], new SdkType(sdk, sdk.resources.get('checkout.session')), 'session', []);
    };
    assert.deepEqual(check(() => {}), []);
    assert.deepEqual(check((copy) => (copy.line_items = [])), ['session.line_items: a field the example does not have']);
    assert.deepEqual(check((copy) => delete copy.livemode), ['session.livemode: missing (the example has it)']);
    assert.deepEqual(check((copy) => (copy.amount_total = '3235')), ['session.amount_total: string, the SDK\'s type allows null | number']);
    assert.deepEqual(check((copy) => (copy.created = null)), ["session.created: null, but the example is not and the SDK's type is not nullable"]);
    assert.deepEqual(check((copy) => (copy.mode = 'pay')), ['session.mode: "pay" is none of the SDK\'s values (payment, setup, subscription)']);
    assert.deepEqual(check((copy) => (copy.automatic_tax = { enabled: false, liability: null, status: null })), ['session.automatic_tax.provider: missing (the example has it)']);
    assert.deepEqual(check((copy) => (copy.payment_intent = { ...(examples.payment_intent as object), surprise: 1 })), [
      'session.payment_intent.surprise: a field the example does not have',
    ]);
    assert.ok(check((copy) => (copy.object = 'checkout_session')).includes('session.object: "checkout_session", the example\'s is "checkout.session"'));
  });

  it('creates a Checkout Session as Stripe does: the amounts, an open session with its own page and no PaymentIntent yet', async () => {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams()));
    assert.equal(session.status, 'open');
    assert.equal(session.payment_status, 'unpaid');
    assert.equal(session.amount_subtotal, 2 * 1250 + 240);
    assert.equal(session.amount_total, 2 * 1250 + 240 + 495);
    assert.equal(session.currency, 'eur');
    assert.equal(session.customer_email, 'buyer@example.com');
    assert.deepEqual(session.metadata, { checkout_id: 'chk_1', digest: 'd1' });
    assert.equal(session.payment_intent, null);
    assert.equal(session.shipping_cost?.amount_total, 495);
    assert.equal(new URL(session.url ?? '').origin, standIn.checkoutOrigin);
    assert.notEqual(standIn.checkoutOrigin, standIn.apiUrl);
    assert.deepEqual(conforms(await stripe.checkout.sessions.retrieve(session.id)), session);
  });

  it('refuses an expires_at under 30 minutes or from 24 hours ahead, as Stripe does, and takes one between', async () => {
    const now = clock();
    await assert.rejects(
      stripe.checkout.sessions.create(sessionParams({ expires_at: now + 29 * 60 })),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, param: 'expires_at', message: /at least 30 minutes/ }),
    );
    await assert.rejects(
      stripe.checkout.sessions.create(sessionParams({ expires_at: now + 24 * 60 * 60 + 5 })),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, param: 'expires_at', message: /less than 24 hours/ }),
    );
    const later = conforms(await stripe.checkout.sessions.create(sessionParams({ expires_at: now + 23 * 60 * 60 })));
    assert.equal(later.expires_at, now + 23 * 60 * 60);
  });

  it('answers the same session to the same Idempotency-Key and parameters, and idempotency_error to other parameters', async () => {
    const before = standIn.sessions().length;
    const params = sessionParams();
    const first = conforms(await stripe.checkout.sessions.create(params, { idempotencyKey: 'approval-1' }));
    const again = conforms(await stripe.checkout.sessions.create(params, { idempotencyKey: 'approval-1' }));
    assert.equal(again.id, first.id);
    assert.equal(again.lastResponse.headers['idempotent-replayed'], 'true');
    await assert.rejects(
      stripe.checkout.sessions.create({ ...params, customer_email: 'other@example.com' }, { idempotencyKey: 'approval-1' }),
      stripeError({ type: 'StripeIdempotencyError', status: 400, message: /same parameters/ }),
    );
    await assert.rejects(
      stripe.refunds.create({ payment_intent: 'pi_x' }, { idempotencyKey: 'approval-1' }),
      stripeError({ type: 'StripeIdempotencyError', status: 400, message: /same endpoint/ }),
    );
    assert.equal(standIn.sessions().length, before + 1);
    // A request refused for its parameters is not remembered: the key can be used again, as on Stripe.
    await assert.rejects(stripe.checkout.sessions.create({ ...params, expires_at: 1 }, { idempotencyKey: 'approval-2' }), stripeError({ type: 'StripeInvalidRequestError', status: 400 }));
    conforms(await stripe.checkout.sessions.create(params, { idempotencyKey: 'approval-2' }));
  });

  it('serves the payment page: Pay authorizes and sends the buyer to success_url with the session id; the session is complete and unpaid, the PaymentIntent requires_capture', async () => {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams()));
    const page = await fetch(session.url!);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /€32\.35/);
    assert.match(html, /Enamel mug/);
    const paid = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ action: 'pay' }), redirect: 'manual' });
    assert.equal(paid.status, 303);
    assert.equal(paid.headers.get('location'), `${STORE}/checkout/paid?session_id=${session.id}`);

    const complete = conforms(await stripe.checkout.sessions.retrieve(session.id, { expand: ['payment_intent'] }));
    assert.equal(complete.status, 'complete');
    assert.equal(complete.payment_status, 'unpaid');
    assert.equal(complete.url, null);
    assert.equal(complete.customer_details?.email, 'buyer@example.com');
    const intent = complete.payment_intent as Stripe.PaymentIntent;
    assert.equal(intent.object, 'payment_intent');
    assert.equal(intent.status, 'requires_capture');
    assert.equal(intent.capture_method, 'manual');
    assert.equal(intent.amount, 3235);
    assert.equal(intent.amount_capturable, 3235);
    assert.equal(intent.currency, 'eur');
    assert.deepEqual(intent.metadata, { checkout_id: 'chk_1' });
    const retrieved = conforms(await stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] }));
    const charge = retrieved.latest_charge as Stripe.Charge;
    assert.equal(charge.captured, false);
    assert.equal(charge.amount, 3235);
    conforms(await stripe.charges.retrieve(charge.id));
    // The page of a complete session does not take a second payment.
    const second = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ action: 'pay' }), redirect: 'manual' });
    assert.equal(second.status, 200);
    assert.equal(standIn.paymentIntent(intent.id).amount_capturable, 3235);
  });

  it('Cancel on the page sends the buyer to cancel_url and leaves the session open and payable', async () => {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams()));
    const canceled = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ action: 'cancel' }), redirect: 'manual' });
    assert.equal(canceled.status, 303);
    assert.equal(canceled.headers.get('location'), `${STORE}/checkout/approve?canceled=1`);
    const still = conforms(await stripe.checkout.sessions.retrieve(session.id));
    assert.equal(still.status, 'open');
    assert.equal(still.payment_intent, null);
    assert.equal((await fetch(session.url!)).status, 200);
  });

  it('a declined card leaves the session open with a failed PaymentIntent (payment_intent.payment_failed); paying again authorizes', async () => {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams()));
    standIn.declineCards();
    const declined = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ action: 'pay' }), redirect: 'manual' });
    standIn.declineCards(false);
    assert.equal(declined.status, 402);
    assert.match(await declined.text(), /declined/);
    const open = conforms(await stripe.checkout.sessions.retrieve(session.id, { expand: ['payment_intent.latest_charge'] }));
    assert.equal(open.status, 'open');
    const intent = open.payment_intent as Stripe.PaymentIntent;
    assert.equal(intent.status, 'requires_payment_method');
    assert.equal(intent.last_payment_error?.type, 'card_error');
    assert.equal((intent.latest_charge as Stripe.Charge).status, 'failed');
    assert.ok(standIn.events('payment_intent.payment_failed').some((event) => (event.data.object as Stripe.PaymentIntent).id === intent.id));
    const paid = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ action: 'pay' }), redirect: 'manual' });
    assert.equal(paid.status, 303);
    assert.equal(conforms(await stripe.paymentIntents.retrieve(intent.id)).status, 'requires_capture');
  });

  it('with redirects held, Pay completes the session but the buyer is not sent back', async () => {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams()));
    standIn.holdRedirects();
    const paid = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ action: 'pay' }), redirect: 'manual' });
    standIn.holdRedirects(false);
    assert.equal(paid.status, 200);
    assert.equal(paid.headers.get('location'), null);
    assert.equal(conforms(await stripe.checkout.sessions.retrieve(session.id)).status, 'complete');
    assert.ok(standIn.events('checkout.session.completed').some((event) => (event.data.object as Stripe.Checkout.Session).id === session.id));
  });

  it('captures once, at most the amount capturable; a partial capture refunds the rest, as Stripe does', async () => {
    const { intent } = await paidSession();
    await assert.rejects(
      stripe.paymentIntents.capture(intent.id, { amount_to_capture: intent.amount + 1 }),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'amount_too_large', param: 'amount_to_capture' }),
    );
    const captured = conforms(await stripe.paymentIntents.capture(intent.id, { amount_to_capture: 3000 }, { idempotencyKey: `capture-${intent.id}` }));
    assert.equal(captured.status, 'succeeded');
    assert.equal(captured.amount_received, 3000);
    assert.equal(captured.amount_capturable, 0);
    const charge = conforms(await stripe.charges.retrieve(String(captured.latest_charge)));
    assert.equal(charge.amount_captured, 3000);
    assert.equal(charge.amount_refunded, 235);
    // The same request again (a retry) answers the same; a second capture is refused.
    assert.equal(conforms(await stripe.paymentIntents.capture(intent.id, { amount_to_capture: 3000 }, { idempotencyKey: `capture-${intent.id}` })).id, intent.id);
    await assert.rejects(
      stripe.paymentIntents.capture(intent.id),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'payment_intent_unexpected_state', message: /status of succeeded/ }),
    );
    await assert.rejects(stripe.paymentIntents.cancel(intent.id), stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'payment_intent_unexpected_state' }));
  });

  it('refunds never more than was captured: partial, the rest, then charge_already_refunded; two racing refunds cannot both pass', async () => {
    const { intent } = await paidSession();
    await assert.rejects(
      stripe.refunds.create({ payment_intent: intent.id, amount: 100 }),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'payment_intent_unexpected_state' }),
    );
    conforms(await stripe.paymentIntents.capture(intent.id));
    const part = conforms(await stripe.refunds.create({ payment_intent: intent.id, amount: 1000, reason: 'requested_by_customer', metadata: { order: '1001' } }));
    assert.equal(part.amount, 1000);
    assert.equal(part.status, 'succeeded');
    assert.equal(part.payment_intent, intent.id);
    await assert.rejects(
      stripe.refunds.create({ payment_intent: intent.id, amount: 2236 }),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'amount_too_large', param: 'amount', message: /Refund amount \(€22\.36\) is greater than unrefunded amount on charge \(€22\.35\)/ }),
    );
    const racing = await Promise.allSettled([
      stripe.refunds.create({ payment_intent: intent.id, amount: 1500 }),
      stripe.refunds.create({ payment_intent: intent.id, amount: 1500 }),
    ]);
    assert.deepEqual(racing.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
    const rest = conforms(await stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `refund-rest-${intent.id}` }));
    assert.equal(rest.amount, 3235 - 1000 - 1500);
    await assert.rejects(stripe.refunds.create({ payment_intent: intent.id, amount: 1 }), stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'charge_already_refunded' }));
    const charge = conforms(await stripe.charges.retrieve(String(standIn.paymentIntent(intent.id).latest_charge), { expand: ['payment_intent'] }));
    assert.equal(charge.amount_refunded, 3235);
    assert.equal(charge.refunded, true);
    assert.equal(charge.refunds?.data.length, 3);
    conforms(await stripe.refunds.retrieve(part.id, { expand: ['charge'] }));
  });

  it('cancel releases an authorization: the PaymentIntent canceled, its charge refunded in full, payment_intent.canceled sent', async () => {
    const { intent } = await paidSession();
    const canceled = conforms(await stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'requested_by_customer' }));
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.cancellation_reason, 'requested_by_customer');
    assert.equal(canceled.amount_capturable, 0);
    const charge = conforms(await stripe.charges.retrieve(String(canceled.latest_charge)));
    assert.equal(charge.captured, false);
    assert.equal(charge.amount_refunded, charge.amount);
    assert.ok(standIn.events('payment_intent.canceled').some((event) => (event.data.object as Stripe.PaymentIntent).id === intent.id));
    await assert.rejects(stripe.paymentIntents.capture(intent.id), stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'payment_intent_unexpected_state' }));
  });

  it('expires a session on request (once) and by its time; its page then says so', async () => {
    const session = conforms(await stripe.checkout.sessions.create(sessionParams()));
    const expired = conforms(await stripe.checkout.sessions.expire(session.id));
    assert.equal(expired.status, 'expired');
    assert.equal(expired.url, null);
    await assert.rejects(stripe.checkout.sessions.expire(session.id), stripeError({ type: 'StripeInvalidRequestError', status: 400, message: /status of "expired"/ }));
    assert.equal((await fetch(session.url!)).status, 410);
    const byTime = conforms(await stripe.checkout.sessions.create(sessionParams()));
    standIn.advanceClock(32 * 60);
    assert.equal(conforms(await stripe.checkout.sessions.retrieve(byTime.id)).status, 'expired');
    assert.ok(standIn.events('checkout.session.expired').some((event) => (event.data.object as Stripe.Checkout.Session).id === byTime.id));
  });

  it('an authorization not captured within seven days is canceled (charge.expired, payment_intent.canceled)', async () => {
    const { intent } = await paidSession();
    standIn.advanceClock(7 * 24 * 60 * 60);
    const lapsed = conforms(await stripe.paymentIntents.retrieve(intent.id));
    assert.equal(lapsed.status, 'canceled');
    assert.equal(lapsed.cancellation_reason, 'automatic');
    assert.ok(standIn.events('charge.expired').some((event) => (event.data.object as Stripe.Charge).payment_intent === intent.id));
  });

  it('answers as Stripe does: 401 to a wrong key, 404 resource_missing, parameter_unknown, 500 api_error while down', async () => {
    const wrong = new Stripe('sk_test_wrong', { ...standIn.sdkOptions, telemetry: false });
    await assert.rejects(wrong.checkout.sessions.retrieve('cs_test_x'), stripeError({ type: 'StripeAuthenticationError', status: 401 }));
    await assert.rejects(stripe.checkout.sessions.retrieve('cs_test_missing'), stripeError({ type: 'StripeInvalidRequestError', status: 404, code: 'resource_missing' }));
    await assert.rejects(stripe.paymentIntents.retrieve('pi_missing'), stripeError({ type: 'StripeInvalidRequestError', status: 404, code: 'resource_missing' }));
    await assert.rejects(
      stripe.checkout.sessions.create(sessionParams({ allow_promotion_codes: true })),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'parameter_unknown', param: 'allow_promotion_codes' }),
    );
    await assert.rejects(
      stripe.checkout.sessions.create(sessionParams({ line_items: [{ quantity: 1, price_data: { currency: 'eur', product_data: { name: 'x' } } }] })),
      stripeError({ type: 'StripeInvalidRequestError', status: 400, code: 'parameter_missing', param: 'line_items[0][price_data][unit_amount]' }),
    );
    const once = new Stripe(standIn.secretKey, { ...standIn.sdkOptions, telemetry: false, maxNetworkRetries: 0 });
    standIn.down();
    try {
      await assert.rejects(once.checkout.sessions.create(sessionParams()), stripeError({ type: 'StripeAPIError', status: 500 }));
    } finally {
      standIn.down(false);
    }
  });

  it('sends events signed as Stripe signs them: constructEvent takes them; a forged, tampered or stale one is refused; one event can arrive twice', async () => {
    await standIn.idle();
    const { session } = await paidSession();
    await standIn.idle();
    const completed = standIn.events('checkout.session.completed').find((event) => (event.data.object as Stripe.Checkout.Session).id === session.id);
    assert.ok(completed);
    const arrived = endpoint.received.filter((entry) => entry.event?.id === completed.id);
    assert.equal(arrived.length, 1);
    assert.equal(arrived[0]!.event!.type, 'checkout.session.completed');
    assert.equal((arrived[0]!.event!.data.object as Stripe.Checkout.Session).id, session.id);
    // Only the events the endpoint subscribes to are sent.
    assert.ok(endpoint.received.every((entry) => entry.event === null || (STORE_EVENTS as readonly string[]).includes(entry.event.type)));

    assert.equal((await standIn.deliver(completed.id)).status, 200);
    assert.equal(endpoint.received.filter((entry) => entry.event?.id === completed.id).length, 2);
    assert.equal((await standIn.deliver(completed.id, { secret: 'whsec_forged' })).status, 400);
    assert.equal((await standIn.deliver(completed.id, { tamper: (payload) => payload.replace('"complete"', '"open"') })).status, 400);
    assert.equal((await standIn.deliver(completed.id, { timestamp: Math.floor(Date.now() / 1000) - 3600 })).status, 400);
    assert.match(endpoint.received.at(-1)!.error ?? '', /tolerance/);
    const { payload, signature } = standIn.signedPayload(completed.id);
    assert.equal(Stripe.webhooks.constructEvent(payload, signature, secret).id, completed.id);
  });

  it('holds events until the test delivers them (the webhook that comes later)', async () => {
    const late = await startWebhookEndpoint(() => lateSecret);
    const held = standIn.webhookEndpoint({ url: late.url, hold: true });
    const lateSecret = held.secret;
    try {
      const { session } = await paidSession();
      await standIn.idle();
      assert.equal(late.received.length, 0);
      assert.deepEqual(
        held.held.map((event) => event.type),
        ['checkout.session.completed'],
      );
      const delivered = await standIn.deliverHeld(held);
      assert.deepEqual(
        delivered.map((delivery) => delivery.status),
        [200],
      );
      assert.equal((late.received[0]!.event!.data.object as Stripe.Checkout.Session).id, session.id);
    } finally {
      await late.close();
    }
  });

  it('a refund made in the dashboard and a dispute arrive as charge.refunded and charge.dispute.created', async () => {
    const { intent } = await paidSession();
    conforms(await stripe.paymentIntents.capture(intent.id));
    const refund = standIn.refundFromDashboard(intent.id, 500);
    const dispute = standIn.openDispute(intent.id);
    await standIn.idle();
    const refunded = endpoint.received.find((entry) => entry.event?.type === 'charge.refunded' && (entry.event.data.object as Stripe.Charge).payment_intent === intent.id);
    assert.ok(refunded, 'charge.refunded arrived');
    const charge = refunded.event!.data.object as Stripe.Charge;
    assert.equal(charge.amount_refunded, 500);
    assert.equal(charge.refunds?.data[0]?.id, refund.id);
    assert.equal(refunded.event!.request?.id, null);
    const disputed = endpoint.received.find((entry) => entry.event?.type === 'charge.dispute.created');
    assert.equal((disputed?.event?.data.object as Stripe.Dispute | undefined)?.id, dispute.id);
    assert.equal(standIn.charge(charge.id).disputed, true);
    conforms(refund);
    conforms(dispute);
    conforms(await stripe.charges.retrieve(charge.id));
  });

  it('every event recorded matches the example of an event, its object the example of its resource; the store’s six kinds all occurred', async () => {
    await standIn.idle();
    const events = standIn.events();
    for (const event of events) conforms(event);
    for (const type of STORE_EVENTS) assert.ok(events.some((event) => event.type === type), `a ${type} event was made`);
    // An event read back through the API is the same event.
    const [first] = events;
    assert.deepEqual(JSON.parse(JSON.stringify(conforms(await stripe.events.retrieve(first!.id)))), first);
    assert.ok(answers > 50);
  });
});
