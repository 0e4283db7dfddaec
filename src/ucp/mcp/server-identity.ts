/**
 * What the MCP server says of itself and of the store it serves: `serverInfo` and the `instructions` an agent
 * reads first (initialize, server/discover). The words an agent is told about buying here live in this file.
 */
import type { CheckoutConfig, Config, PaymentConfig } from '../../config.js';
import { handlerCapture } from '../../payments/payment-handlers.js';
import { buyerStepsWords, type PayingWay } from '../checkout/ucp-messages.js';

/**
 * What the MCP server says of the store it serves: the merchant's identity from the configuration, and what its
 * buyers do on the approval page (APPROVAL_PROOF) and to pay (PAYMENT_PROVIDER, CAPTURE_ON).
 */
export type StoreIdentity = Pick<Config, 'storeName' | 'storeDescription' | 'storeContactEmail'> & {
  checkout: Pick<CheckoutConfig, 'approvalProof'>;
  payment: Pick<PaymentConfig, 'provider' | 'captureOn'>;
};

/** `serverInfo`: the program's name (stable, for clients that key on it) and the store's as its title. */
export const serverInfo = (store: StoreIdentity) => ({ name: 'storefront', title: `${store.storeName} (UCP 2026-08-25 and 2026-04-08)`, version: '1.0.0' });

/** How the store's buyers pay, as its payment handler says it (src/payments/payment-handlers.ts: the manual provider, or a card hold). */
function payingWay(payment: StoreIdentity['payment']): PayingWay {
  if (payment.provider === 'manual') return { paid_on: 'instructions', capture: 'manual', provider: payment.provider };
  return { paid_on: 'hosted_payment_page', capture: handlerCapture(payment.captureOn), provider: payment.provider };
}

/** The `instructions` of initialize: whose store this is and how an agent buys here. */
export function serverInstructions(store: StoreIdentity): string {
  return (
    `${store.storeName}: ${store.storeDescription} Contact: ${store.storeContactEmail}. The store speaks the Universal Commerce ` +
    'Protocol (UCP 2026-08-25 and 2026-04-08; each call is answered in the release of your agent profile). Pass ' +
    '`meta["ucp-agent"].profile`, your UCP profile URL: the store fetches it and negotiates. Without it you are anonymous and ' +
    'may use the catalog and cart tools only. Find products with search_catalog (or lookup_catalog / get_product); put ' +
    'variant ids (`item.id`) in a cart (create_cart) or a checkout (create_checkout, with a buyer email, a US shipping ' +
    'address and a shipping option). A cart\'s continue_url lets the buyer take the cart over in their browser: from then on ' +
    'the cart is theirs and its id answers not_found to you, so hand it over when you are done with it. complete_checkout never ' +
    "places an order: it answers a continue_url, the store's approval page, for you to give the buyer. " +
    `${buyerStepsWords(store.checkout.approvalProof, payingWay(store.payment))} ` +
    'get_checkout then shows the order, or its first message says why there is none (checkout_declined, checkout_expired, ' +
    'checkout_canceled, sold_out_at_approval). Prices are integer US cents.'
  );
}
