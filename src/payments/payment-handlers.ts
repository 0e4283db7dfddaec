/**
 * Payment handlers: how an approved order is paid. Each is advertised in the UCP profile's `payment_handlers`
 * and in every checkout's `ucp` block, and is asked to authorize an order's payment inside the transaction
 * that places the order. The built-in handler is manual capture: the order is placed and the merchant collects
 * payment afterwards, so the order says "payment pending". No card data is ever stored or echoed.
 */
import type { Queryable } from '../db/database.js';

/** An order's payment: pending until the merchant captures it; refunds move it to partially_refunded or refunded. */
export type PaymentState = 'pending' | 'authorized' | 'captured' | 'partially_refunded' | 'refunded' | 'voided' | 'failed';

export interface PaymentRequest {
  orderId: string;
  amount: number;
  currency: string;
}

export interface PaymentResult {
  state: PaymentState;
  /** What the buyer and merchant read about the payment. */
  summary: string;
}

/** A payment handler failed to authorize: the order is not placed, and the buyer reads `buyerMessage`. */
export class PaymentDeclined extends Error {
  constructor(readonly buyerMessage: string) {
    super(buyerMessage);
    this.name = 'PaymentDeclined';
  }
}

export interface PaymentHandler {
  /** Reverse-domain name of the handler's specification (the key in `payment_handlers`). */
  name: string;
  /** This store's instance of it (`handler_id` in payment instruments). */
  id: string;
  version: string;
  title: string;
  /** What the buyer is told on the approval page about paying. */
  buyerNotice: string;
  /** Authorizes the payment inside the order's transaction; throws PaymentDeclined to refuse. */
  authorize(tx: Queryable, request: PaymentRequest): Promise<PaymentResult>;
}

/** The handler namespace: this store's own domain, reversed (payments.example.com -> com.example.payments). */
export function handlerNamespace(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.toLowerCase();
  const labels = host.split('.').filter(Boolean).reverse().map((label) => label.replace(/[^a-z0-9_]/g, '_'));
  const isName = labels.length >= 2 && labels.every((label) => /^[a-z]/.test(label));
  return isName ? labels.join('.') : 'local.storefront';
}

export function manualCapture(baseUrl: string, version: string): PaymentHandler {
  return {
    name: `${handlerNamespace(baseUrl)}.manual_capture`,
    id: 'manual_capture',
    version,
    title: 'Pay the store after ordering',
    buyerNotice: 'Nothing is charged now; the store collects payment after the order is placed.',
    async authorize() {
      return { state: 'pending', summary: 'Payment pending: the store collects payment after the order is placed.' };
    },
  };
}
