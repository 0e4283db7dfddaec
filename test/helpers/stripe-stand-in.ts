/**
 * A local, stateful stand-in for the part of Stripe's API the store uses, for tests (Stripe cannot be reached from
 * the test machines). The official `stripe` package is pointed at it (`new Stripe(key, standIn.sdkOptions)`, or the
 * store's STRIPE_API_URL = `standIn.apiUrl`), and it answers as Stripe does:
 *
 * - form-encoded requests in Stripe's bracket notation (read with `qs`), a Bearer secret key, `Idempotency-Key`
 *   honoured (the same key and parameters answer the first answer again, with `Idempotent-Replayed: true`; other
 *   parameters or another endpoint answer 400 `idempotency_error`; a refused parameter is not remembered), Stripe's
 *   error JSON (`{ error: { type, code, message, param } }`) with its statuses, `expand[]`;
 * - Checkout Sessions (create, retrieve, expire), PaymentIntents (retrieve, capture, cancel), Refunds (create,
 *   retrieve), Charges and Events (retrieve); a parameter the stand-in does not model is refused as Stripe refuses an
 *   unknown one (400 `parameter_unknown`), so the store cannot come to rely on something untested;
 * - a minimal hosted payment page at each session's `url`, on an origin of its own (another port, as
 *   checkout.stripe.com is not api.stripe.com): the amount, and "Pay" and "Cancel" buttons in a plain form. Pay
 *   authorizes the card (manual capture: the session becomes `complete` with payment_status `unpaid`, the
 *   PaymentIntent `requires_capture`) and answers 303 to success_url with `{CHECKOUT_SESSION_ID}` replaced;
 *   Cancel answers 303 to cancel_url and leaves the session open;
 * - the events Stripe would send, as Event objects, delivered to webhook endpoints signed with the SDK's own
 *   `Stripe.webhooks.generateTestHeaderString`, when the test says (at once, held until delivered, twice, forged).
 *
 * Every object it answers has exactly the fields of Stripe's published example of that resource
 * (test/fixtures/stripe/, from stripe/openapi) and the types of the `stripe` package's TypeScript types; the builders
 * below are typed with the SDK's types, and test/payments/stripe-stand-in.test.ts checks every answer against both.
 *
 * What Stripe does that a store must be ready for, and the stand-in does too: a PaymentIntent exists only once the
 * buyer pays (session.payment_intent is null before); capturing less than the authorized amount refunds the rest
 * (charge.amount_refunded counts it, and `charge.refunded` is sent), and canceling an authorized PaymentIntent
 * refunds its whole charge the same way, so a store tells a refund of captured money from a release by comparing
 * charge.amount_refunded with charge.amount - charge.amount_captured; an authorization not captured within seven days
 * is canceled (`advanceClock`).
 *
 *   const standIn = await startStripeStandIn();
 *   const stripe = new Stripe(standIn.secretKey, standIn.sdkOptions);
 *   const endpoint = standIn.webhookEndpoint({ url: `${store}/payments/stripe/webhook` }); // endpoint.secret
 *   …the buyer presses Pay on session.url…
 *   await standIn.idle();                       // every delivery made so far has been answered
 *   standIn.declineCards(); standIn.holdRedirects();
 *   standIn.refundFromDashboard(paymentIntentId, 500); standIn.openDispute(paymentIntentId);
 *   await standIn.close();
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import qs from 'qs';
import Stripe from 'stripe';

// The stand-in answers the field set of the vendored examples (stripe/openapi, 2026-08-21); the SDK's types are a
// later API version that adds these required fields, which the examples do not have.
export type StandInSession = Omit<Stripe.Checkout.Session, 'allowed_payment_method_types'>;
export type StandInPaymentIntent = Omit<Stripe.PaymentIntent, 'allowed_payment_method_types' | 'payment_record'>;
export type StandInCharge = Stripe.Charge;
export type StandInRefund = Stripe.Refund;
export type StandInDispute = Omit<Stripe.Dispute, 'intended_submission_method'>;
// Nested objects where the SDK's later version requires a field the examples lack: built without it, then typed as
// the SDK's (the test checks the field set against the examples).
type StandInCard = Omit<Stripe.Charge.PaymentMethodDetails.Card, 'electronic_commerce_indicator'>;
type StandInEvidenceDetails = Omit<Stripe.Dispute.EvidenceDetails, 'submission_method'>;
export type StandInObject = StandInSession | StandInPaymentIntent | StandInCharge | StandInRefund | StandInDispute;

export type StandInEventType =
  | 'checkout.session.completed'
  | 'checkout.session.expired'
  | 'payment_intent.created'
  | 'payment_intent.amount_capturable_updated'
  | 'payment_intent.succeeded'
  | 'payment_intent.canceled'
  | 'payment_intent.payment_failed'
  | 'charge.succeeded'
  | 'charge.failed'
  | 'charge.captured'
  | 'charge.expired'
  | 'charge.refunded'
  | 'charge.dispute.created'
  | 'refund.created';

export interface StandInEvent extends Omit<Stripe.EventBase, 'type' | 'data'> {
  type: StandInEventType;
  data: { object: StandInObject };
}

/** The events the store's endpoint subscribes to (what docs/payments.md tells a merchant to select). */
export const STORE_EVENTS: readonly StandInEventType[] = [
  'checkout.session.completed',
  'checkout.session.expired',
  'payment_intent.canceled',
  'payment_intent.payment_failed',
  'charge.refunded',
  'charge.dispute.created',
];

export interface WebhookEndpointOptions {
  url: string;
  /** whsec_…; a new one by default. */
  secret?: string;
  /** The event types sent there (STORE_EVENTS by default), or '*' for every event the stand-in records. */
  enabledEvents?: readonly StandInEventType[] | '*';
  /** Hold the events until deliverHeld() or deliver() (by default each is delivered as it happens). */
  hold?: boolean;
}

export interface StandInWebhookEndpoint {
  url: string;
  secret: string;
  /** The events waiting (hold: true), oldest first. */
  held: StandInEvent[];
}

/** How one delivery is made: the signature's secret and time, and the payload as sent (to forge or tamper). */
export interface DeliveryOptions {
  endpoint?: StandInWebhookEndpoint;
  /** Seconds since the epoch for the signature (now by default): an old one makes a stale delivery. */
  timestamp?: number;
  /** Sign with this secret instead of the endpoint's (a forged delivery). */
  secret?: string;
  /** Change the payload after signing (a tampered delivery). */
  tamper?: (payload: string) => string;
}

export interface Delivery {
  eventId: string;
  type: StandInEventType;
  url: string;
  /** The endpoint's answer, or 0 when it could not be reached. */
  status: number;
  body: string;
}

export interface StripeStandIn {
  /** http://127.0.0.1:PORT: the API's origin (what STRIPE_API_URL names). */
  apiUrl: string;
  /** http://127.0.0.1:PORT: the hosted payment pages' origin (another port than the API's). */
  checkoutOrigin: string;
  /** The secret key the stand-in accepts (any other answers 401). */
  secretKey: string;
  /** The SDK's options that point it here: new Stripe(standIn.secretKey, standIn.sdkOptions). */
  sdkOptions: { host: string; port: number; protocol: 'http' };

  /** State, as Stripe would answer it now (copies). */
  sessions(): StandInSession[];
  session(id: string): StandInSession;
  paymentIntent(id: string): StandInPaymentIntent;
  charge(id: string): StandInCharge;
  refunds(): StandInRefund[];
  disputes(): StandInDispute[];
  events(type?: StandInEventType): StandInEvent[];
  /** How many API requests of this method and path (a pattern like /v1/checkout/sessions/:id) were answered. */
  requests(method: string, pattern: string): number;

  /** The Pay button, without a browser: authorizes (or declines, see declineCards) and says where the buyer goes. */
  pay(sessionId: string): { status: 'authorized' | 'declined'; redirect: string | null };
  /** Cards are declined (payment_intent.payment_failed) until declineCards(false). */
  declineCards(on?: boolean): void;
  /** After Pay, the page does not send the buyer back (the browser that never comes back) until holdRedirects(false). */
  holdRedirects(on?: boolean): void;
  /** A refund made in Stripe's dashboard (no API request): charge.refunded; the whole refundable amount by default. */
  refundFromDashboard(paymentIntentId: string, amount?: number): StandInRefund;
  /** The buyer's bank disputes the payment: charge.dispute.created. */
  openDispute(paymentIntentId: string, reason?: string): StandInDispute;
  /** The stand-in's clock, in seconds since the epoch (Stripe's `created`, `expires_at`): now, unless moved on. */
  now(): number;
  /** Moves the stand-in's clock on: sessions past expires_at expire, authorizations older than seven days are canceled. */
  advanceClock(seconds: number): void;
  /** Every API request answers 500 api_error (Stripe down) until down(false). */
  down(on?: boolean): void;

  webhookEndpoint(options: WebhookEndpointOptions): StandInWebhookEndpoint;
  /** Delivers one event (again, or for the first time) to an endpoint (the first by default). */
  deliver(eventId: string, options?: DeliveryOptions): Promise<Delivery>;
  /** Delivers the held events of an endpoint (the first by default), oldest first. */
  deliverHeld(endpoint?: StandInWebhookEndpoint): Promise<Delivery[]>;
  /** The delivery request itself (payload and Stripe-Signature), for a test that posts it. */
  signedPayload(eventId: string, options?: DeliveryOptions): { payload: string; signature: string };
  /** Every delivery made, in order. */
  deliveries: Delivery[];
  /** Resolves when every delivery started so far has been answered. */
  idle(): Promise<void>;

  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors, as Stripe answers them

class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: 'invalid_request_error' | 'idempotency_error' | 'api_error' | 'card_error',
    message: string,
    readonly code?: string,
    readonly param?: string,
    /** A refusal of the request's parameters is not remembered under its idempotency key (Stripe's rule). */
    readonly remembered = true,
  ) {
    super(message);
  }

  get body() {
    return { error: { type: this.type, ...(this.code ? { code: this.code } : {}), message: this.message, ...(this.param ? { param: this.param } : {}) } };
  }
}

const invalid = (message: string, param?: string, code?: string) => new StripeApiError(400, 'invalid_request_error', message, code, param, false);
const unexpectedState = (message: string) => new StripeApiError(400, 'invalid_request_error', message, 'payment_intent_unexpected_state');
const missing = (kind: string, id: string, param: string) =>
  new StripeApiError(404, 'invalid_request_error', `No such ${kind}: '${id}'`, 'resource_missing', param);

// ---------------------------------------------------------------------------------------------------------------
// Parameters: each endpoint's parameters are described; anything else is refused as Stripe refuses an unknown one.

type Shape = 'string' | 'integer' | 'metadata' | { [key: string]: Shape } | [Shape];

const METADATA_SHAPE: Shape = 'metadata';
const EXPAND: Shape = ['string'];

const SESSION_CREATE: Shape = {
  mode: 'string',
  success_url: 'string',
  cancel_url: 'string',
  customer_email: 'string',
  client_reference_id: 'string',
  expires_at: 'integer',
  locale: 'string',
  metadata: METADATA_SHAPE,
  payment_method_types: ['string'],
  line_items: [
    {
      quantity: 'integer',
      price_data: {
        currency: 'string',
        unit_amount: 'integer',
        tax_behavior: 'string',
        product_data: { name: 'string', description: 'string', metadata: METADATA_SHAPE },
      },
    },
  ],
  shipping_options: [
    {
      shipping_rate_data: {
        type: 'string',
        display_name: 'string',
        tax_behavior: 'string',
        metadata: METADATA_SHAPE,
        fixed_amount: { amount: 'integer', currency: 'string' },
      },
    },
  ],
  payment_intent_data: { capture_method: 'string', description: 'string', metadata: METADATA_SHAPE },
  expand: EXPAND,
};
const RETRIEVE: Shape = { expand: EXPAND };
const CAPTURE: Shape = { amount_to_capture: 'integer', metadata: METADATA_SHAPE, expand: EXPAND };
const CANCEL: Shape = { cancellation_reason: 'string', expand: EXPAND };
const REFUND_CREATE: Shape = { payment_intent: 'string', charge: 'string', amount: 'integer', reason: 'string', metadata: METADATA_SHAPE, expand: EXPAND };

type Value = string | number | Record<string, string> | Value[] | { [key: string]: Value };

/** Checks `input` (qs's reading of the form) against `shape` and converts integers; throws Stripe's refusals. */
function read(shape: Shape, input: unknown, path: string): Value {
  if (shape === 'string') {
    if (typeof input !== 'string') throw invalid(`Invalid string: ${shown(input)}`, path, 'parameter_invalid_string');
    return input;
  }
  if (shape === 'integer') {
    if (typeof input !== 'string' || !/^-?\d{1,15}$/.test(input)) throw invalid(`Invalid integer: ${shown(input)}`, path, 'parameter_invalid_integer');
    return Number(input);
  }
  if (shape === 'metadata') {
    if (!isRecord(input)) throw invalid(`Invalid object`, path, 'parameter_invalid_string');
    const entries = Object.entries(input);
    if (entries.length > 50) throw invalid('You can specify up to 50 keys in metadata.', path);
    for (const [key, value] of entries) {
      if (typeof value !== 'string') throw invalid(`Invalid string: ${shown(value)}`, `${path}[${key}]`, 'parameter_invalid_string');
      if (key.length > 40) throw invalid(`Metadata keys can have up to 40 characters, but you passed in a key that is ${key.length} characters.`, `${path}[${key}]`);
      if (value.length > 500)
        throw invalid(`Metadata values can have up to 500 characters, but you passed in a value that is ${value.length} characters.`, `${path}[${key}]`);
    }
    return Object.fromEntries(entries) as Record<string, string>;
  }
  if (Array.isArray(shape)) {
    const items = Array.isArray(input) ? input : isRecord(input) && Object.keys(input).every((key) => /^\d+$/.test(key)) ? Object.values(input) : null;
    if (!items) throw invalid(`Invalid array`, path, 'parameter_invalid_array');
    return items.map((item, index) => read(shape[0], item, `${path}[${index}]`));
  }
  if (!isRecord(input)) throw invalid(`Invalid object`, path, 'parameter_invalid_object');
  const out: { [key: string]: Value } = {};
  for (const [key, value] of Object.entries(input)) {
    const inner = shape[key];
    const where = path ? `${path}[${key}]` : key;
    // Stripe's own wording for an unknown parameter; the stand-in also refuses the real ones it does not model.
    if (!inner) throw invalid(`Received unknown parameter: ${where} (or one the Stripe stand-in does not model)`, where, 'parameter_unknown');
    if (value === '') continue; // an empty value leaves a parameter unset, as Stripe reads it
    out[key] = read(inner, value, where);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
}

/** The parameters after read(): typed access for the handlers. */
interface SessionParams {
  mode?: string;
  success_url?: string;
  cancel_url?: string;
  customer_email?: string;
  client_reference_id?: string;
  expires_at?: number;
  locale?: string;
  metadata?: Record<string, string>;
  payment_method_types?: string[];
  line_items?: { quantity?: number; price_data?: { currency?: string; unit_amount?: number; product_data?: { name?: string; description?: string } } }[];
  shipping_options?: { shipping_rate_data?: { type?: string; display_name?: string; metadata?: Record<string, string>; fixed_amount?: { amount?: number; currency?: string } } }[];
  payment_intent_data?: { capture_method?: string; description?: string; metadata?: Record<string, string> };
  expand?: string[];
}

function required<T>(value: T | undefined, param: string): T {
  if (value === undefined) throw invalid(`Missing required param: ${param}.`, param, 'parameter_missing');
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Ids, clock and money

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function token(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

/** An id as Stripe writes them: a prefix (pi_3, ch_3…) and random letters and digits. */
const newId = (prefix: string, length = 24) => `${prefix}${token(length)}`;

const SEVEN_DAYS = 7 * 24 * 60 * 60;
const MIN_SESSION_LIFETIME = 30 * 60;
const MAX_SESSION_LIFETIME = 24 * 60 * 60;

function fractionDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** An amount in the currency's smallest unit, as Stripe's messages and pages write it ($21.45, €12.50). */
export function formatAmount(amount: number, currency: string): string {
  const digits = fractionDigits(currency);
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount / 10 ** digits);
  } catch {
    return `${(amount / 10 ** digits).toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// ---------------------------------------------------------------------------------------------------------------
// The stand-in

interface SessionLine {
  name: string;
  quantity: number;
  unitAmount: number;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const secretKey = `sk_test_${token(99)}`;
  let clockOffset = 0;
  const now = () => Math.floor(Date.now() / 1000) + clockOffset;

  const sessions = new Map<string, StandInSession>();
  const sessionLines = new Map<string, SessionLine[]>();
  const intents = new Map<string, StandInPaymentIntent>();
  const charges = new Map<string, StandInCharge>();
  const refunds = new Map<string, StandInRefund>();
  const disputes = new Map<string, StandInDispute>();
  const events: StandInEvent[] = [];
  const idempotency = new Map<string, { endpoint: string; params: string; status: number; body: string }>();
  const requestCounts = new Map<string, number>();
  let cardsDecline = false;
  let redirectsHeld = false;
  let isDown = false;

  const endpoints: (StandInWebhookEndpoint & { enabled: readonly StandInEventType[] | '*'; hold: boolean })[] = [];
  const deliveries: Delivery[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let deliveryChain: Promise<unknown> = Promise.resolve();

  /** The API request being answered: the event's `request` field. */
  let currentRequest: { id: string | null; idempotency_key: string | null } = { id: null, idempotency_key: null };

  const copy = <T>(value: T): T => structuredClone(value);

  // --- objects, typed with the SDK's types and holding exactly the vendored example's fields

  function newSession(params: SessionParams, lines: SessionLine[], currency: string, shipping: { id: string; amount: number } | null, expiresAt: number): StandInSession {
    const id = `cs_test_a1${token(56)}`;
    const subtotal = lines.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0);
    return {
      id,
      object: 'checkout.session',
      after_expiration: null,
      allow_promotion_codes: null,
      amount_subtotal: subtotal,
      amount_total: subtotal + (shipping?.amount ?? 0),
      automatic_tax: { enabled: false, liability: null, status: null, provider: null },
      billing_address_collection: null,
      cancel_url: params.cancel_url ?? null,
      client_reference_id: params.client_reference_id ?? null,
      client_secret: null,
      consent: null,
      consent_collection: null,
      created: now(),
      currency,
      custom_fields: [],
      custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
      customer: null,
      customer_creation: 'if_required',
      customer_details: null,
      customer_email: params.customer_email ?? null,
      expires_at: expiresAt,
      invoice: null,
      invoice_creation: {
        enabled: false,
        invoice_data: {
          account_tax_ids: null,
          custom_fields: null,
          description: null,
          footer: null,
          issuer: null,
          metadata: {},
          rendering_options: null,
        },
      },
      livemode: false,
      locale: null,
      metadata: params.metadata ?? {},
      mode: 'payment',
      payment_intent: null,
      payment_link: null,
      payment_method_collection: 'if_required',
      payment_method_configuration_details: null,
      payment_method_options: {},
      payment_method_types: ['card'],
      payment_status: 'unpaid',
      phone_number_collection: { enabled: false },
      recovered_from: null,
      saved_payment_method_options: null,
      setup_intent: null,
      shipping_address_collection: null,
      shipping_cost: shipping ? { amount_subtotal: shipping.amount, amount_tax: 0, amount_total: shipping.amount, shipping_rate: shipping.id } : null,
      shipping_options: shipping ? [{ shipping_amount: shipping.amount, shipping_rate: shipping.id }] : [],
      status: 'open',
      submit_type: null,
      subscription: null,
      success_url: params.success_url ?? null,
      total_details: { amount_discount: 0, amount_shipping: shipping?.amount ?? 0, amount_tax: 0 },
      ui_mode: 'hosted_page',
      url: `${checkoutOrigin}/c/pay/${id}`,
      adaptive_pricing: { enabled: false },
      discounts: [],
      collected_information: null,
      permissions: null,
      wallet_options: null,
      origin_context: null,
      currency_conversion: null,
      customer_account: null,
      integration_identifier: null,
      managed_payments: null,
    };
  }

  function newPaymentIntent(session: StandInSession, data: SessionParams['payment_intent_data']): StandInPaymentIntent {
    const id = newId('pi_3');
    return {
      id,
      object: 'payment_intent',
      amount: session.amount_total ?? 0,
      amount_capturable: 0,
      amount_details: { tip: {} },
      amount_received: 0,
      application: null,
      application_fee_amount: null,
      automatic_payment_methods: null,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: (data?.capture_method ?? 'automatic') as Stripe.PaymentIntent.CaptureMethod,
      client_secret: `${id}_secret_${token(25)}`,
      confirmation_method: 'automatic',
      created: now(),
      currency: session.currency ?? 'usd',
      customer: null,
      description: data?.description ?? null,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: data?.metadata ?? {},
      next_action: null,
      on_behalf_of: null,
      payment_method: null,
      payment_method_configuration_details: null,
      payment_method_options: {},
      payment_method_types: ['card'],
      processing: null,
      receipt_email: null,
      review: null,
      setup_future_usage: null,
      shipping: null,
      statement_descriptor: null,
      statement_descriptor_suffix: null,
      status: 'requires_payment_method',
      transfer_data: null,
      transfer_group: null,
      source: null,
      excluded_payment_method_types: null,
      customer_account: null,
      managed_payments: null,
    };
  }

  function newCharge(intent: StandInPaymentIntent, paymentMethod: string, email: string, declined: boolean): StandInCharge {
    const id = newId('ch_3');
    const card: StandInCard = {
      amount_authorized: declined ? null : intent.amount,
      brand: 'visa',
      checks: { address_line1_check: null, address_postal_code_check: 'pass', cvc_check: 'pass' },
      country: 'US',
      exp_month: 12,
      exp_year: new Date().getUTCFullYear() + 3,
      extended_authorization: { status: 'disabled' },
      fingerprint: token(16),
      funding: 'credit',
      incremental_authorization: { status: 'unavailable' },
      installments: null,
      last4: declined ? '0002' : '4242',
      mandate: null,
      multicapture: { status: 'unavailable' },
      network: 'visa',
      network_token: { used: false },
      overcapture: { maximum_amount_capturable: intent.amount, status: 'unavailable' },
      three_d_secure: null,
      wallet: null,
      authorization_code: declined ? null : String(100000 + (randomBytes(2).readUInt16BE() % 900000)),
      regulated_status: 'unregulated',
      network_transaction_id: declined ? null : token(15),
      transaction_link_id: null,
    };
    return {
      id,
      object: 'charge',
      amount: intent.amount,
      amount_captured: 0,
      amount_refunded: 0,
      application: null,
      application_fee: null,
      application_fee_amount: null,
      balance_transaction: null,
      billing_details: {
        address: { city: null, country: 'US', line1: null, line2: null, postal_code: '42424', state: null },
        email,
        name: 'Test Buyer',
        phone: null,
        tax_id: null,
      },
      calculated_statement_descriptor: declined ? null : 'STOREFRONT',
      captured: false,
      created: now(),
      currency: intent.currency,
      customer: null,
      description: intent.description,
      disputed: false,
      failure_balance_transaction: null,
      failure_code: declined ? 'card_declined' : null,
      failure_message: declined ? 'Your card was declined.' : null,
      fraud_details: {},
      livemode: false,
      metadata: {},
      on_behalf_of: null,
      outcome: declined
        ? { advice_code: null, network_advice_code: null, network_decline_code: null, network_status: 'declined_by_network', reason: 'generic_decline', seller_message: 'The bank did not return any further details with this decline.', type: 'issuer_declined' }
        : { advice_code: null, network_advice_code: null, network_decline_code: null, network_status: 'approved_by_network', reason: null, seller_message: 'Payment complete.', type: 'authorized' },
      paid: !declined,
      payment_intent: intent.id,
      payment_method: paymentMethod,
      payment_method_details: {
        card: card as Stripe.Charge.PaymentMethodDetails.Card,
        type: 'card',
      },
      receipt_email: null,
      receipt_number: null,
      receipt_url: null,
      refunded: false,
      refunds: { object: 'list', data: [], has_more: false, url: `/v1/charges/${id}/refunds` },
      review: null,
      shipping: null,
      source_transfer: null,
      statement_descriptor: null,
      statement_descriptor_suffix: null,
      status: declined ? 'failed' : 'succeeded',
      transfer_data: null,
      transfer_group: null,
      source: null,
    };
  }

  function newRefund(charge: StandInCharge, amount: number, reason: Stripe.Refund.Reason | null, metadata: Record<string, string>): StandInRefund {
    return {
      id: newId('re_3'),
      object: 'refund',
      amount,
      balance_transaction: newId('txn_3'),
      charge: charge.id,
      created: now(),
      currency: charge.currency,
      destination_details: { card: { type: 'refund' }, type: 'card' },
      metadata,
      payment_intent: typeof charge.payment_intent === 'string' ? charge.payment_intent : null,
      reason,
      receipt_number: null,
      source_transfer_reversal: null,
      status: 'succeeded',
      transfer_reversal: null,
      customer: null,
      customer_account: null,
      payment_method: typeof charge.payment_method === 'string' ? charge.payment_method : null,
    };
  }

  function newDispute(charge: StandInCharge, reason: string): StandInDispute {
    const nullEvidence = {
      access_activity_log: null,
      billing_address: null,
      cancellation_policy: null,
      cancellation_policy_disclosure: null,
      cancellation_rebuttal: null,
      customer_communication: null,
      customer_email_address: null,
      customer_name: null,
      customer_purchase_ip: null,
      customer_signature: null,
      duplicate_charge_documentation: null,
      duplicate_charge_explanation: null,
      duplicate_charge_id: null,
      product_description: null,
      receipt: null,
      refund_policy: null,
      refund_policy_disclosure: null,
      refund_refusal_explanation: null,
      service_date: null,
      service_documentation: null,
      shipping_address: null,
      shipping_carrier: null,
      shipping_date: null,
      shipping_documentation: null,
      shipping_tracking_number: null,
      uncategorized_file: null,
      uncategorized_text: null,
      enhanced_evidence: {},
    };
    const evidenceDetails: StandInEvidenceDetails = { due_by: now() + 21 * 24 * 60 * 60, has_evidence: false, past_due: false, submission_count: 0, enhanced_eligibility: {} };
    return {
      id: newId('dp_1'),
      object: 'dispute',
      amount: charge.amount_captured - Math.max(0, charge.amount_refunded - (charge.amount - charge.amount_captured)),
      balance_transactions: [],
      charge: charge.id,
      created: now(),
      currency: charge.currency,
      evidence: nullEvidence,
      evidence_details: evidenceDetails as Stripe.Dispute.EvidenceDetails,
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      payment_intent: typeof charge.payment_intent === 'string' ? charge.payment_intent : null,
      payment_method_details: { card: { brand: 'visa', case_type: 'chargeback', network_reason_code: '10.4', network: 'visa' }, type: 'card' },
      reason,
      status: 'needs_response',
      enhanced_eligibility_types: [],
    };
  }

  // --- events and their delivery

  function record(type: StandInEventType, object: StandInObject): void {
    const receivers = endpoints.filter((endpoint) => endpoint.enabled === '*' || endpoint.enabled.includes(type));
    const event: StandInEvent = {
      id: newId('evt_3'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: now(),
      data: { object: copy(object) },
      livemode: false,
      pending_webhooks: receivers.length,
      request: { ...currentRequest },
      type,
    };
    events.push(event);
    for (const endpoint of receivers) {
      if (endpoint.hold) endpoint.held.push(event);
      else void track(send(event, { endpoint }));
    }
  }

  function signedPayload(event: StandInEvent, options: DeliveryOptions): { payload: string; signature: string } {
    const endpoint = options.endpoint ?? endpoints[0];
    const payload = JSON.stringify(event, null, 2);
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: options.secret ?? endpoint?.secret ?? 'whsec_none',
      timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    });
    return { payload: options.tamper ? options.tamper(payload) : payload, signature };
  }

  /** Deliveries to one endpoint are made one after another, in the order they were asked for. */
  function send(event: StandInEvent, options: DeliveryOptions): Promise<Delivery> {
    const endpoint = options.endpoint ?? endpoints[0];
    if (!endpoint) return Promise.reject(new Error('the Stripe stand-in has no webhook endpoint'));
    const next = deliveryChain.then(async () => {
      const { payload, signature } = signedPayload(event, { ...options, endpoint });
      let status = 0;
      let body = '';
      try {
        const response = await fetch(endpoint.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
          body: payload,
          redirect: 'manual',
        });
        status = response.status;
        body = await response.text();
      } catch {
        status = 0;
      }
      const delivery: Delivery = { eventId: event.id, type: event.type, url: endpoint.url, status, body };
      deliveries.push(delivery);
      return delivery;
    });
    deliveryChain = next.catch(() => undefined);
    return next;
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  function eventById(id: string): StandInEvent {
    const event = events.find((candidate) => candidate.id === id);
    if (!event) throw new Error(`the Stripe stand-in has no event ${id}`);
    return event;
  }

  // --- lookups

  function getSession(id: string, param = 'session'): StandInSession {
    const session = sessions.get(id);
    if (!session) throw missing('checkout.session', id, param);
    return session;
  }
  function getIntent(id: string, param = 'intent'): StandInPaymentIntent {
    const intent = intents.get(id);
    if (!intent) throw missing('payment_intent', id, param);
    return intent;
  }
  function getCharge(id: string, param = 'charge'): StandInCharge {
    const charge = charges.get(id);
    if (!charge) throw missing('charge', id, param);
    return charge;
  }
  function chargeOf(intent: StandInPaymentIntent): StandInCharge | null {
    return typeof intent.latest_charge === 'string' ? (charges.get(intent.latest_charge) ?? null) : null;
  }

  // --- what happens

  function addRefund(charge: StandInCharge, amount: number, reason: Stripe.Refund.Reason | null, metadata: Record<string, string> = {}): StandInRefund {
    const refund = newRefund(charge, amount, reason, metadata);
    refunds.set(refund.id, refund);
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded >= charge.amount;
    charge.refunds?.data.unshift(refund);
    return refund;
  }

  /** What the Pay button does. */
  function pay(sessionId: string): { status: 'authorized' | 'declined'; redirect: string | null } {
    sweep();
    const session = getSession(sessionId);
    if (session.status !== 'open') throw new Error(`the Checkout Session is ${session.status}`);
    const params = sessionIntentData.get(session.id);
    let intent = typeof session.payment_intent === 'string' ? getIntent(session.payment_intent) : null;
    if (!intent) {
      intent = newPaymentIntent(session, params);
      intents.set(intent.id, intent);
      session.payment_intent = intent.id;
      record('payment_intent.created', intent);
    }
    const email = session.customer_email ?? 'buyer@example.com';
    const paymentMethod = newId('pm_1');
    const declined = cardsDecline;
    const charge = newCharge(intent, paymentMethod, email, declined);
    charges.set(charge.id, charge);
    intent.latest_charge = charge.id;
    intent.payment_method = paymentMethod;
    if (declined) {
      intent.last_payment_error = { type: 'card_error' };
      intent.payment_method = null;
      intent.status = 'requires_payment_method';
      record('charge.failed', charge);
      record('payment_intent.payment_failed', intent);
      return { status: 'declined', redirect: null };
    }
    intent.last_payment_error = null;
    session.status = 'complete';
    session.url = null;
    session.customer_details = {
      address: { city: null, country: 'US', line1: null, line2: null, postal_code: '42424', state: null },
      email,
      name: 'Test Buyer',
      phone: null,
      tax_exempt: 'none',
      tax_ids: [],
      business_name: null,
      individual_name: null,
    };
    record('charge.succeeded', charge);
    if (intent.capture_method === 'manual') {
      intent.status = 'requires_capture';
      intent.amount_capturable = intent.amount;
      record('payment_intent.amount_capturable_updated', intent);
    } else {
      captureCharge(intent, charge, intent.amount);
      session.payment_status = 'paid';
    }
    record('checkout.session.completed', session);
    const redirect = session.success_url ? session.success_url.replaceAll('{CHECKOUT_SESSION_ID}', session.id) : null;
    return { status: 'authorized', redirect };
  }
  /** payment_intent_data of each session, kept for the PaymentIntent made when the buyer pays. */
  const sessionIntentData = new Map<string, SessionParams['payment_intent_data']>();

  function captureCharge(intent: StandInPaymentIntent, charge: StandInCharge, amount: number): void {
    charge.captured = true;
    charge.amount_captured = amount;
    charge.balance_transaction = newId('txn_3');
    intent.amount_received = amount;
    intent.amount_capturable = 0;
    intent.status = 'succeeded';
    record('charge.captured', charge);
    if (amount < charge.amount) {
      // Stripe: "Any additional amount is automatically refunded."
      addRefund(charge, charge.amount - amount, null);
      record('charge.refunded', charge);
    }
    record('payment_intent.succeeded', intent);
    for (const session of sessions.values()) if (session.payment_intent === intent.id) session.payment_status = 'paid';
  }

  function cancelIntent(intent: StandInPaymentIntent, reason: Stripe.PaymentIntent.CancellationReason): void {
    const charge = chargeOf(intent);
    const authorized = intent.status === 'requires_capture';
    intent.status = 'canceled';
    intent.canceled_at = now();
    intent.cancellation_reason = reason;
    intent.amount_capturable = 0;
    if (authorized && charge) {
      // Stripe: "the remaining amount_capturable will automatically be refunded".
      addRefund(charge, charge.amount - charge.amount_refunded, null);
      if (reason === 'automatic') record('charge.expired', charge);
      else record('charge.refunded', charge);
    }
    record('payment_intent.canceled', intent);
  }

  function expireSession(session: StandInSession): void {
    session.status = 'expired';
    session.url = null;
    const intent = typeof session.payment_intent === 'string' ? intents.get(session.payment_intent) : undefined;
    if (intent && intent.status === 'requires_payment_method') cancelIntent(intent, 'abandoned');
    record('checkout.session.expired', session);
  }

  /** Time-based transitions: sessions past expires_at expire; authorizations older than seven days are canceled. */
  function sweep(): void {
    const at = now();
    const previous = currentRequest;
    currentRequest = { id: null, idempotency_key: null };
    try {
      for (const session of sessions.values()) if (session.status === 'open' && session.expires_at <= at) expireSession(session);
      for (const intent of intents.values()) if (intent.status === 'requires_capture' && intent.created + SEVEN_DAYS <= at) cancelIntent(intent, 'automatic');
    } finally {
      currentRequest = previous;
    }
  }

  function refundable(charge: StandInCharge): number {
    return charge.amount - charge.amount_refunded;
  }

  function createRefund(intent: StandInPaymentIntent, amount: number | undefined, reason: Stripe.Refund.Reason | null, metadata: Record<string, string>): StandInRefund {
    const charge = chargeOf(intent);
    if (intent.status === 'requires_capture')
      throw unexpectedState(`This PaymentIntent (${intent.id}) has not been captured: cancel it to release the authorization (the Stripe stand-in's wording).`);
    if (!charge || !charge.captured) throw invalid(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, 'payment_intent', 'charge_not_refundable');
    const left = refundable(charge);
    if (left <= 0) throw new StripeApiError(400, 'invalid_request_error', `Charge ${charge.id} has already been refunded.`, 'charge_already_refunded');
    const value = amount ?? left;
    if (value > left)
      throw new StripeApiError(
        400,
        'invalid_request_error',
        `Refund amount (${formatAmount(value, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(left, charge.currency)})`,
        'amount_too_large',
        'amount',
      );
    const refund = addRefund(charge, value, reason, metadata);
    record('refund.created', refund);
    record('charge.refunded', charge);
    return refund;
  }

  // --- API handlers

  function createSession(input: unknown): StandInSession {
    const params = read(SESSION_CREATE, input, '') as SessionParams;
    const mode = required(params.mode, 'mode');
    if (mode !== 'payment') throw invalid(`The Stripe stand-in models mode=payment only, not ${mode}.`, 'mode');
    for (const [param, url] of [
      ['success_url', params.success_url],
      ['cancel_url', params.cancel_url],
    ] as const) {
      if (url !== undefined && !/^https?:\/\/[^\s/]+/.test(url)) throw invalid('Not a valid URL', param, 'url_invalid');
    }
    if (params.customer_email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(params.customer_email))
      throw invalid(`Invalid email address: ${params.customer_email}`, 'customer_email', 'email_invalid');
    if (params.payment_method_types && params.payment_method_types.some((type) => type !== 'card'))
      throw invalid('The Stripe stand-in takes cards only.', 'payment_method_types');
    const items = required(params.line_items, 'line_items');
    if (items.length === 0) throw invalid('Missing required param: line_items.', 'line_items', 'parameter_missing');
    // Stripe's documented limit for a session in payment mode.
    if (items.length > 100) throw invalid('A Checkout Session in payment mode takes at most 100 line items.', 'line_items');
    let currency: string | undefined;
    const lines = items.map((item, index): SessionLine => {
      const where = `line_items[${index}]`;
      const quantity = required(item.quantity, `${where}[quantity]`);
      if (quantity < 1) throw invalid('This value must be greater than or equal to 1.', `${where}[quantity]`);
      const price = required(item.price_data, `${where}[price_data]`);
      const lineCurrency = required(price.currency, `${where}[price_data][currency]`).toLowerCase();
      const unitAmount = required(price.unit_amount, `${where}[price_data][unit_amount]`);
      if (unitAmount < 0) throw invalid('This value must be greater than or equal to 0.', `${where}[price_data][unit_amount]`);
      const name = required(price.product_data?.name, `${where}[price_data][product_data][name]`);
      if (currency !== undefined && currency !== lineCurrency)
        throw invalid('Checkout does not support multiple currencies in one Session: every line item must have the same currency.', `${where}[price_data][currency]`);
      currency = lineCurrency;
      return { name, quantity, unitAmount };
    });
    if (currency === undefined) throw invalid('Missing required param: line_items.', 'line_items', 'parameter_missing');
    const options = params.shipping_options ?? [];
    if (options.length > 5) throw invalid('You may only specify up to 5 shipping options.', 'shipping_options');
    let shipping: { id: string; amount: number } | null = null;
    options.forEach((option, index) => {
      const where = `shipping_options[${index}][shipping_rate_data]`;
      const data = required(option.shipping_rate_data, where);
      if ((data.type ?? 'fixed_amount') !== 'fixed_amount') throw invalid('Invalid type: must be fixed_amount.', `${where}[type]`);
      required(data.display_name, `${where}[display_name]`);
      const fixed = required(data.fixed_amount, `${where}[fixed_amount]`);
      const amount = required(fixed.amount, `${where}[fixed_amount][amount]`);
      const shippingCurrency = required(fixed.currency, `${where}[fixed_amount][currency]`).toLowerCase();
      if (shippingCurrency !== currency) throw invalid('The shipping rate must be in the currency of the line items.', `${where}[fixed_amount][currency]`);
      if (amount < 0) throw invalid('This value must be greater than or equal to 0.', `${where}[fixed_amount][amount]`);
      // The first option is the one selected when the page opens.
      if (index === 0) shipping = { id: newId('shr_1'), amount };
    });
    const captureMethod = params.payment_intent_data?.capture_method;
    if (captureMethod !== undefined && !['automatic', 'automatic_async', 'manual'].includes(captureMethod))
      throw invalid(`Invalid payment_intent_data[capture_method]: must be one of automatic, automatic_async, or manual`, 'payment_intent_data[capture_method]');
    const created = now();
    const expiresAt = params.expires_at ?? created + MAX_SESSION_LIFETIME;
    if (expiresAt - created < MIN_SESSION_LIFETIME) throw invalid('The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.', 'expires_at');
    if (expiresAt - created >= MAX_SESSION_LIFETIME) throw invalid('The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.', 'expires_at');
    const session = newSession(params, lines, currency, shipping, expiresAt);
    sessions.set(session.id, session);
    sessionLines.set(session.id, lines);
    sessionIntentData.set(session.id, params.payment_intent_data);
    return session;
  }

  function expandInto(object: Record<string, unknown>, paths: string[]): Record<string, unknown> {
    for (const path of paths) {
      let target: Record<string, unknown> = object;
      for (const field of path.split('.')) {
        const value = target[field];
        if (value === null) break;
        const found = typeof value === 'string' ? byId(value) : isRecord(value) && typeof value.id === 'string' ? value : undefined;
        if (!found) throw invalid(`This property cannot be expanded (${field}).`, 'expand');
        target[field] = found === value ? value : copy(found);
        target = target[field] as Record<string, unknown>;
      }
    }
    return object;
  }

  function byId(id: string): Record<string, unknown> | undefined {
    const maps: Map<string, StandInObject>[] = [sessions, intents, charges, refunds, disputes];
    for (const map of maps) {
      const found = map.get(id);
      if (found) return found as unknown as Record<string, unknown>;
    }
    return undefined;
  }

  function answer(object: StandInObject | StandInEvent, expand: string[] | undefined): Record<string, unknown> {
    return expandInto(copy(object) as unknown as Record<string, unknown>, expand ?? []);
  }

  interface Route {
    method: 'GET' | 'POST';
    pattern: string;
    handle: (id: string, params: unknown) => Record<string, unknown>;
  }

  /** A GET of one object by its id, with expand[]. */
  function retrieve(pattern: string, get: (id: string) => StandInObject | StandInEvent): Route {
    return {
      method: 'GET',
      pattern,
      handle: (id, input) => {
        const { expand } = read(RETRIEVE, input, '') as { expand?: string[] };
        return answer(get(id), expand);
      },
    };
  }

  function missingObject(kind: string, id: string): never {
    throw missing(kind, id, 'id');
  }

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: '/v1/checkout/sessions',
      handle: (_id, input) => {
        const session = createSession(input);
        return answer(session, (input as SessionParams).expand);
      },
    },
    retrieve('/v1/checkout/sessions/:id', (id) => getSession(id)),
    {
      method: 'POST',
      pattern: '/v1/checkout/sessions/:id/expire',
      handle: (id, input) => {
        const { expand } = read(RETRIEVE, input, '') as { expand?: string[] };
        const session = getSession(id);
        if (session.status !== 'open')
          throw new StripeApiError(400, 'invalid_request_error', `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`);
        expireSession(session);
        return answer(session, expand);
      },
    },
    retrieve('/v1/payment_intents/:id', (id) => getIntent(id)),
    {
      method: 'POST',
      pattern: '/v1/payment_intents/:id/capture',
      handle: (id, input) => {
        const params = read(CAPTURE, input, '') as { amount_to_capture?: number; metadata?: Record<string, string>; expand?: string[] };
        const intent = getIntent(id);
        if (intent.status !== 'requires_capture')
          throw unexpectedState(
            `This PaymentIntent could not be captured because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
          );
        const amount = params.amount_to_capture ?? intent.amount_capturable;
        if (amount > intent.amount_capturable)
          throw new StripeApiError(
            400,
            'invalid_request_error',
            `The amount to capture (${amount}) must be less than or equal to the PaymentIntent's amount_capturable (${intent.amount_capturable}).`,
            'amount_too_large',
            'amount_to_capture',
          );
        if (amount < 1) throw invalid('This value must be greater than or equal to 1.', 'amount_to_capture');
        if (params.metadata) intent.metadata = { ...intent.metadata, ...params.metadata };
        const charge = chargeOf(intent);
        if (!charge) throw unexpectedState('This PaymentIntent has no charge to capture.');
        captureCharge(intent, charge, amount);
        return answer(intent, params.expand);
      },
    },
    {
      method: 'POST',
      pattern: '/v1/payment_intents/:id/cancel',
      handle: (id, input) => {
        const params = read(CANCEL, input, '') as { cancellation_reason?: string; expand?: string[] };
        const reasons = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'];
        if (params.cancellation_reason !== undefined && !reasons.includes(params.cancellation_reason))
          throw invalid(`Invalid cancellation_reason: must be one of ${reasons.join(', ')}`, 'cancellation_reason');
        const intent = getIntent(id);
        const cancelable = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
        if (!cancelable.includes(intent.status))
          throw unexpectedState(
            `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${cancelable.join(', ')}.`,
          );
        cancelIntent(intent, (params.cancellation_reason ?? null) as Stripe.PaymentIntent.CancellationReason);
        return answer(intent, params.expand);
      },
    },
    {
      method: 'POST',
      pattern: '/v1/refunds',
      handle: (_id, input) => {
        const params = read(REFUND_CREATE, input, '') as {
          payment_intent?: string;
          charge?: string;
          amount?: number;
          reason?: string;
          metadata?: Record<string, string>;
          expand?: string[];
        };
        if (params.amount !== undefined && params.amount < 1) throw invalid('This value must be greater than or equal to 1.', 'amount');
        const reasons = ['duplicate', 'fraudulent', 'requested_by_customer'];
        if (params.reason !== undefined && !reasons.includes(params.reason)) throw invalid(`Invalid reason: must be one of ${reasons.join(', ')}`, 'reason');
        let intent: StandInPaymentIntent;
        if (params.payment_intent !== undefined) intent = getIntent(params.payment_intent, 'payment_intent');
        else if (params.charge !== undefined) {
          const charge = getCharge(params.charge);
          intent = getIntent(String(charge.payment_intent), 'charge');
        } else throw invalid('One of the following params should be provided for this request: payment_intent or charge.', undefined, 'parameter_missing');
        const refund = createRefund(intent, params.amount, (params.reason ?? null) as Stripe.Refund.Reason | null, params.metadata ?? {});
        return answer(refund, params.expand);
      },
    },
    retrieve('/v1/refunds/:id', (id) => refunds.get(id) ?? missingObject('refund', id)),
    retrieve('/v1/charges/:id', (id) => getCharge(id)),
    retrieve('/v1/events/:id', (id) => events.find((candidate) => candidate.id === id) ?? missingObject('event', id)),
  ];

  function match(method: string, path: string): { route: Route; id: string } | null {
    for (const route of routes) {
      if (route.method !== method) continue;
      const pattern = route.pattern.split('/');
      const parts = path.split('/');
      if (pattern.length !== parts.length) continue;
      let id = '';
      const same = pattern.every((segment, index) => {
        if (segment === ':id') {
          id = decodeURIComponent(parts[index] ?? '');
          return id.length > 0;
        }
        return segment === parts[index];
      });
      if (same) return { route, id };
    }
    return null;
  }

  function respond(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-cache, no-store', ...headers });
    response.end(text);
  }

  function handleApi(request: http.IncomingMessage, body: string, response: http.ServerResponse): void {
    const requestId = `req_${token(14)}`;
    const headers: Record<string, string> = { 'request-id': requestId, 'stripe-version': String(request.headers['stripe-version'] ?? Stripe.API_VERSION) };
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const method = request.method ?? 'GET';
    if (isDown) return respond(response, 500, new StripeApiError(500, 'api_error', 'An unknown error occurred (the Stripe stand-in is down).').body, headers);
    const authorization = String(request.headers.authorization ?? '');
    if (!authorization.startsWith('Bearer '))
      return respond(
        response,
        401,
        {
          error: {
            type: 'invalid_request_error',
            message:
              "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
          },
        },
        headers,
      );
    const key = authorization.slice('Bearer '.length);
    if (key !== secretKey)
      return respond(response, 401, { error: { type: 'invalid_request_error', code: 'api_key_expired', message: `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}` } }, headers);
    const found = match(method, url.pathname);
    if (!found)
      return respond(
        response,
        404,
        { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${url.pathname}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.` } },
        headers,
      );
    const countKey = `${method} ${found.route.pattern}`;
    requestCounts.set(countKey, (requestCounts.get(countKey) ?? 0) + 1);
    const parseOptions = { depth: 10, arrayLimit: 1000, parameterLimit: 10000, allowPrototypes: false, plainObjects: true };
    const input = method === 'POST' ? qs.parse(body, parseOptions) : qs.parse(url.search.slice(1), parseOptions);
    const idempotencyKey = method === 'POST' && typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : null;
    const endpoint = `${method} ${url.pathname}`;
    const params = JSON.stringify(input);
    if (idempotencyKey) {
      headers['idempotency-key'] = idempotencyKey;
      const earlier = idempotency.get(idempotencyKey);
      if (earlier) {
        const misuse =
          earlier.endpoint !== endpoint
            ? `can only be used for the same endpoint they were first used for ('${earlier.endpoint}' vs '${endpoint}')`
            : earlier.params !== params
              ? 'can only be used with the same parameters they were first used with'
              : null;
        if (misuse) {
          const message = `Keys for idempotent requests ${misuse}. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`;
          return respond(response, 400, new StripeApiError(400, 'idempotency_error', message).body, headers);
        }
        return respond(response, earlier.status, earlier.body, { ...headers, 'idempotent-replayed': 'true', 'original-request': requestId });
      }
    }
    sweep();
    currentRequest = { id: requestId, idempotency_key: idempotencyKey };
    let status = 200;
    let text: string;
    let remember = true;
    try {
      text = JSON.stringify(found.route.handle(found.id, input), null, 2);
    } catch (error) {
      if (!(error instanceof StripeApiError)) throw error;
      status = error.status;
      text = JSON.stringify(error.body, null, 2);
      remember = error.remembered;
    } finally {
      currentRequest = { id: null, idempotency_key: null };
    }
    if (idempotencyKey && remember) idempotency.set(idempotencyKey, { endpoint, params, status, body: text });
    respond(response, status, text, headers);
  }

  // --- the hosted payment page

  function page(response: http.ServerResponse, status: number, title: string, content: string): void {
    response.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
    response.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${content}</main></body></html>`,
    );
  }

  function paymentForm(session: StandInSession, notice: string): string {
    const lines = sessionLines.get(session.id) ?? [];
    const currency = session.currency ?? 'usd';
    const items = lines.map((line) => `<li>${escapeHtml(line.name)} × ${line.quantity}: ${escapeHtml(formatAmount(line.unitAmount * line.quantity, currency))}</li>`).join('');
    const shipping = session.shipping_cost ? `<li>Shipping: ${escapeHtml(formatAmount(session.shipping_cost.amount_total, currency))}</li>` : '';
    return (
      `${notice ? `<p role="alert">${escapeHtml(notice)}</p>` : ''}` +
      `<ul>${items}${shipping}</ul>` +
      `<p>Total: <strong id="amount">${escapeHtml(formatAmount(session.amount_total ?? 0, currency))}</strong></p>` +
      (session.customer_email ? `<p>Email: ${escapeHtml(session.customer_email)}</p>` : '') +
      `<p>Card: Visa •••• 4242 (test)</p>` +
      `<form method="post" action="/c/pay/${encodeURIComponent(session.id)}">` +
      `<button type="submit" name="action" value="pay">Pay</button> ` +
      `<button type="submit" name="action" value="cancel">Cancel</button></form>`
    );
  }

  function handlePage(request: http.IncomingMessage, body: string, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const found = /^\/c\/pay\/([A-Za-z0-9_]+)$/.exec(url.pathname);
    const session = found ? sessions.get(found[1] ?? '') : undefined;
    if (!session) return page(response, 404, 'Something went wrong', '<p>The page you were looking for could not be found.</p>');
    sweep();
    if (session.status === 'expired') return page(response, 410, 'This Checkout Session is no longer active', '<p>The session has expired.</p>');
    if (session.status === 'complete') return page(response, 200, 'Payment complete', '<p>This Checkout Session is already complete.</p>');
    if (request.method === 'GET') return page(response, 200, 'Pay', paymentForm(session, ''));
    if (request.method !== 'POST') return page(response, 405, 'Something went wrong', '');
    const action = new URLSearchParams(body).get('action');
    if (action === 'cancel') {
      if (!session.cancel_url) return page(response, 200, 'Pay', paymentForm(session, ''));
      response.writeHead(303, { location: session.cancel_url, 'cache-control': 'no-store' });
      return void response.end();
    }
    if (action !== 'pay') return page(response, 400, 'Pay', paymentForm(session, 'Choose Pay or Cancel.'));
    const outcome = pay(session.id);
    if (outcome.status === 'declined') return page(response, 402, 'Pay', paymentForm(session, 'Your card was declined.'));
    if (redirectsHeld || !outcome.redirect) return page(response, 200, 'Payment complete', '<p>Your payment is authorized.</p>');
    response.writeHead(303, { location: outcome.redirect, 'cache-control': 'no-store' });
    response.end();
  }

  // --- servers

  function serve(handler: (request: http.IncomingMessage, body: string, response: http.ServerResponse) => void) {
    const sockets = new Set<Socket>();
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      request.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 1_000_000) chunks.push(chunk);
      });
      request.on('end', () => {
        try {
          if (size > 1_000_000) return respond(response, 413, { error: { type: 'invalid_request_error', message: 'Request body too large.' } });
          handler(request, Buffer.concat(chunks).toString('utf8'), response);
        } catch (error) {
          respond(response, 500, { error: { type: 'api_error', message: `The Stripe stand-in failed: ${(error as Error).message}` } });
        }
      });
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    return { server, sockets };
  }

  const api = serve(handleApi);
  const checkout = serve(handlePage);
  await Promise.all([api, checkout].map(({ server }) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
  const apiPort = (api.server.address() as AddressInfo).port;
  const checkoutPort = (checkout.server.address() as AddressInfo).port;
  const checkoutOrigin = `http://127.0.0.1:${checkoutPort}`;

  function intentOfDashboard(paymentIntentId: string): { intent: StandInPaymentIntent; charge: StandInCharge } {
    const intent = intents.get(paymentIntentId);
    if (!intent) throw new Error(`the Stripe stand-in has no PaymentIntent ${paymentIntentId}`);
    const charge = chargeOf(intent);
    if (!charge || !charge.captured) throw new Error(`PaymentIntent ${paymentIntentId} has no captured charge`);
    return { intent, charge };
  }

  return {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    checkoutOrigin,
    secretKey,
    sdkOptions: { host: '127.0.0.1', port: apiPort, protocol: 'http' },
    sessions: () => [...sessions.values()].map(copy),
    session: (id) => copy(getSession(id)),
    paymentIntent: (id) => copy(getIntent(id)),
    charge: (id) => copy(getCharge(id)),
    refunds: () => [...refunds.values()].map(copy),
    disputes: () => [...disputes.values()].map(copy),
    events: (type) => events.filter((event) => !type || event.type === type).map(copy),
    requests: (method, pattern) => requestCounts.get(`${method} ${pattern}`) ?? 0,
    pay,
    declineCards: (on = true) => void (cardsDecline = on),
    holdRedirects: (on = true) => void (redirectsHeld = on),
    refundFromDashboard(paymentIntentId, amount) {
      const { charge } = intentOfDashboard(paymentIntentId);
      const left = refundable(charge);
      const value = amount ?? left;
      if (value < 1 || value > left) throw new Error(`a refund of ${value} is more than the ${left} left to refund`);
      const refund = addRefund(charge, value, 'requested_by_customer');
      record('refund.created', refund);
      record('charge.refunded', charge);
      return copy(refund);
    },
    openDispute(paymentIntentId, reason = 'fraudulent') {
      const { charge } = intentOfDashboard(paymentIntentId);
      const dispute = newDispute(charge, reason);
      disputes.set(dispute.id, dispute);
      charge.disputed = true;
      record('charge.dispute.created', dispute);
      return copy(dispute);
    },
    now,
    advanceClock(seconds) {
      clockOffset += seconds;
      sweep();
    },
    down: (on = true) => void (isDown = on),
    webhookEndpoint(options) {
      const endpoint = {
        url: options.url,
        secret: options.secret ?? `whsec_${token(32)}`,
        held: [] as StandInEvent[],
        enabled: options.enabledEvents ?? STORE_EVENTS,
        hold: options.hold ?? false,
      };
      endpoints.push(endpoint);
      return endpoint;
    },
    deliver: (eventId, options = {}) => track(send(eventById(eventId), options)),
    async deliverHeld(endpoint) {
      const target = endpoints.find((candidate) => candidate === endpoint) ?? endpoints[0];
      if (!target) throw new Error('the Stripe stand-in has no webhook endpoint');
      const waiting = target.held.splice(0);
      const done: Delivery[] = [];
      for (const event of waiting) done.push(await track(send(event, { endpoint: target })));
      return done;
    },
    signedPayload: (eventId, options = {}) => signedPayload(eventById(eventId), options),
    deliveries,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    async close() {
      await Promise.allSettled([...inFlight]);
      await Promise.all(
        [api, checkout].map(
          ({ server, sockets }) =>
            new Promise<void>((resolve) => {
              for (const socket of sockets) socket.destroy();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
