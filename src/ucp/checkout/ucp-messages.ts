/**
 * The checkout's facts (messages and refusals: a code, a field in the domain's names, params) as UCP messages of a
 * release: the field as the JSONPath of its UCP member, the words an agent needs (UCP member and tool names), and
 * what the agent is told the buyer will be asked on the approval page. The one place where releases may differ.
 */
import { formatMoney } from '../../catalog/types.js';
import type { CheckoutMessage } from '../../checkout/checkout.js';
import type { CheckoutTextPath, FactParams, FieldPath } from '../../checkout/fields.js';
import type { Refusal } from '../../checkout/machine.js';
import type { ShippingOption } from '../../checkout/shipping.js';
import type { ApprovalProofMode } from '../../config.js';
import type { PaymentHandler } from '../../payments/payment-handlers.js';
import type { UcpRelease } from '../protocol.js';
import type { UcpMessage } from '../tools/tool.js';
import { POSTAL_ADDRESS_MEMBERS } from './ucp-checkout.js';

/** The buyer member of each buyer field. */
const BUYER_MEMBERS = { email: 'email', firstName: 'first_name', lastName: 'last_name', phoneNumber: 'phone_number' } as const;

/** The checkout's one shipping method: its one destination and its one group. */
const SHIPPING = '$.fulfillment.methods[0]';

/** RFC 9535 paths into the checkout as 2026-04-08 names its members. */
function checkoutJsonPath(field: FieldPath): string {
  switch (field[0]) {
    case 'lines': {
      if (field.length === 1) return '$.line_items';
      const line = `$.line_items[${field[1]}]`;
      if (field.length === 2) return line;
      return field[2] === 'variant' ? `${line}.item.id` : `${line}.quantity`;
    }
    case 'buyer':
      return `$.buyer.${BUYER_MEMBERS[field[1]]}`;
    case 'destination':
      return field.length === 1 ? `${SHIPPING}.destinations[0]` : `${SHIPPING}.destinations[0].${POSTAL_ADDRESS_MEMBERS[field[1]]}`;
    case 'shippingOption':
      return `${SHIPPING}.groups[0].selected_option_id`;
  }
}

/** Each release's paths: both name these members alike today; a release that moves one gets its own function here. */
const JSON_PATHS: Record<UcpRelease, (field: FieldPath) => string> = {
  '2026-04-08': checkoutJsonPath,
  '2026-08-25': checkoutJsonPath,
};

/** The JSONPath of a checkout field in a release's checkout. */
export function ucpPath(field: FieldPath, release: UcpRelease): string {
  return JSON_PATHS[release](field);
}

/** The JSONPath of a checkout's text field (as the tools read them) in a release's checkout. */
export function ucpTextPath(field: CheckoutTextPath, release: UcpRelease): string {
  switch (field[0]) {
    case 'buyer':
      return `$.buyer.${BUYER_MEMBERS[field[1]]}`;
    case 'destination':
      return `${SHIPPING}.destinations[0].${POSTAL_ADDRESS_MEMBERS[field[1]]}`;
    case 'shippingOption':
      return ucpPath(['shippingOption'], release);
    case 'lines':
      // A line's properties come from its cart: the path names the line.
      return ucpPath(['lines', field[1]], release);
  }
}

/** The field's kind, without positions: `lines.variant`, `destination.postalCode`, `shippingOption`. */
const fieldKind = (field: FieldPath | undefined) => (field ?? []).filter((part) => typeof part === 'string').join('.');

const optionWords = (options: readonly ShippingOption[]) => options.map((o) => `${o.id} (${o.title}, ${formatMoney(o.amount)})`).join(' or ');

type AgentWords = (params: FactParams, options: readonly ShippingOption[]) => string | undefined;

/** Where an agent needs other words than the domain's default: UCP member names, tools, option ids. By `code@field`. */
const AGENT_WORDS: Record<string, AgentWords> = {
  'empty_checkout@lines': () => 'The checkout has no line items.',
  'too_many_lines@lines': (p) => `A checkout holds at most ${p.max} line items.`,
  'item_unavailable@lines': (p) => `Variant ${p.variantId} is no longer sold; remove the line item.`,
  'not_found@lines.variant': (p) => `Cannot find variant ${p.variantId}: an item id is a variant id from search_catalog or lookup_catalog.`,
  'invalid@buyer.phoneNumber': () => 'The buyer\'s phone_number is not a phone number: give it in E.164, such as +14155550100.',
  'missing@destination.firstName': () =>
    "The shipping address needs the recipient's name: the destination's first_name and/or last_name (when the destination names nobody, the buyer's first_name and last_name are used).",
  'invalid@destination.phoneNumber': () => "The destination's phone_number is not a phone number: give it in E.164, such as +14155550100.",
  'address_undeliverable@destination.country': () => 'This store ships to addresses in the United States only (address_country "US").',
  'missing@destination.streetAddress': () => 'The shipping address needs a street address (street_address).',
  'missing@destination.locality': () => 'The shipping address needs a city (address_locality).',
  'missing@destination.region': () => 'The shipping address needs a state (address_region, a two-letter code such as CA).',
  'invalid@destination.region': (p) => `"${p.region}" is not a US state code (address_region, such as CA or NY).`,
  'missing@destination.postalCode': () => 'The shipping address needs a ZIP code (postal_code).',
  'invalid@destination.postalCode': () => 'A ZIP code is 5 digits, or 5 digits, a hyphen and 4 more (postal_code).',
  'missing@shippingOption': (_p, options) => (options.length > 0 ? `Choose a shipping option: ${optionWords(options)}.` : undefined),
  'invalid@shippingOption': (p, options) =>
    options.length > 0 ? `"${p.option}" is not a shipping option; choose ${options.map((o) => o.id).join(' or ')}.` : undefined,
  'buyer_approval_required@': () =>
    "The buyer must approve this order on the store's approval page (continue_url) before it is placed; nothing is charged until then.",
  // Why a checkout is canceled, why the buyer's approval placed nothing, and an order canceled after it was placed.
  'checkout_declined@': () =>
    "The buyer declined this order on the store's approval page: nothing was ordered or charged, and this checkout cannot change any more. If the buyer still wants to buy, start a new checkout (create_checkout).",
  'checkout_expired@': () =>
    'This checkout expired before the buyer placed the order: nothing was ordered or charged, and it cannot change any more. To buy, start a new checkout (create_checkout).',
  'checkout_canceled@': (p) =>
    `${CANCELED_BY[String(p.by)] ?? 'This checkout was canceled'}: nothing was ordered or charged, and it cannot change any more. To buy, start a new checkout (create_checkout).`,
  'sold_out_at_approval@': () =>
    "Items sold out while this checkout waited for the buyer's approval, so nothing was ordered or charged and that approval link (continue_url) no longer works. Change the line items as the other messages say, then call complete_checkout for a new continue_url to give the buyer.",
  'order_canceled@': (p) =>
    `The store canceled order #${p.number} after it was placed${p.reason ? `: ${String(p.reason).replace(/[.\s]+$/, '')}` : ''}. Nothing more of it ships; the order's adjustments and payment message (get_order) say what was canceled and what happens to the money.`,
};

/** Who canceled a checkout (the move's actor), as the agent is told. */
const CANCELED_BY: Record<string, string> = {
  agent: 'This checkout was canceled with cancel_checkout',
  buyer: 'The buyer canceled this checkout',
  merchant: 'The store canceled this checkout',
  system: 'The store canceled this checkout',
};

function agentContent(fact: Refusal, options: readonly ShippingOption[]): string {
  return AGENT_WORDS[`${fact.code}@${fieldKind(fact.field)}`]?.(fact.params ?? {}, options) ?? fact.content;
}

/**
 * A message of a checkout's view as the release shows it. `options`: the checkout's shipping options, which the
 * messages about the option name.
 */
export function ucpMessage(message: CheckoutMessage, release: UcpRelease, options: readonly ShippingOption[] = []): UcpMessage {
  return {
    type: message.type,
    code: message.code,
    content: agentContent(message, options),
    ...(message.severity ? { severity: message.severity } : {}),
    ...(message.field ? { path: ucpPath(message.field, release) } : {}),
  };
}

/** A refused request as the release's error message: recoverable when it names a field the agent can fix. */
export function ucpRefusal(refusal: Refusal, release: UcpRelease): UcpMessage {
  return {
    type: 'error',
    code: refusal.code,
    content: agentContent(refusal, []),
    severity: refusal.field ? 'recoverable' : 'unrecoverable',
    ...(refusal.field ? { path: ucpPath(refusal.field, release) } : {}),
  };
}

/** What the agent is told the buyer will be asked for (the escalation message, the profile). */
export const APPROVAL_PROOF_WORDS: Record<ApprovalProofMode, string> = {
  'passkey-or-code':
    "The buyer must approve this order on the store's approval page (continue_url) before it is placed, and prove there that they are the buyer: with a passkey registered to the checkout's email, or a 6-digit code the store emails to that address when the buyer asks for it on the page. No tool can request, read or skip this step; nothing is charged until then.",
  code: "The buyer must approve this order on the store's approval page (continue_url) before it is placed, and prove there that they are the buyer with a 6-digit code the store emails to the checkout's address when the buyer asks for it on the page. No tool can request, read or skip this step; nothing is charged until then.",
  link: "The buyer must approve this order on the store's approval page (continue_url) before it is placed; this store asks no further proof there (development mode). Nothing is charged until then.",
};

/** How an approved order is paid, as the store's payment handler says it (its `config`). */
export type PayingWay = Pick<PaymentHandler['config'], 'paid_on' | 'capture' | 'provider'>;

const CHARGED_WHEN: Record<PayingWay['capture'], string> = {
  on_fulfillment: 'when the order ships',
  on_approval: 'as the order is placed',
  manual: 'when the store takes the payment, before the hold ends',
};

/** What the buyer does to pay, after proving who they are on the approval page, as the agent is told. */
export function paymentStepWords(paying: PayingWay): string {
  if (paying.paid_on === 'instructions') {
    return (
      'Approving places the order and charges nothing: the buyer then pays the store as its payment instructions say, by the due date ' +
      '(the approval page shows both, and the order page and the order confirmation email repeat them).'
    );
  }
  const provider = paying.provider.charAt(0).toUpperCase() + paying.provider.slice(1);
  return (
    `Then the buyer pays by card on ${provider}'s secure payment page: the amount is held on their card, the order is placed once ${provider} confirms the hold, ` +
    `and the card is charged ${CHARGED_WHEN[paying.capture]}. If they leave that page without paying, nothing is ordered and the approval page (continue_url) works again until it expires.`
  );
}

/** What the buyer does on the approval page, in order: review, prove who they are (as APPROVAL_PROOF says), approve or decline. */
const BUYER_PROOF_STEP: Record<ApprovalProofMode, string> = {
  'passkey-or-code':
    "There the buyer reviews the order and approves or declines it; to approve, they prove who they are with a passkey registered to the checkout's email, or a 6-digit code the store emails to that address when they ask for it on the page.",
  code: "There the buyer reviews the order and approves or declines it; to approve, they prove who they are with a 6-digit code the store emails to the checkout's address when they ask for it on the page.",
  link: 'There the buyer reviews the order and approves or declines it; this store asks no further proof (development mode).',
};

/** Everything the buyer does after complete_checkout, for the server's instructions: review, prove, approve, pay. */
export function buyerStepsWords(mode: ApprovalProofMode, paying: PayingWay): string {
  return `${BUYER_PROOF_STEP[mode]} ${paymentStepWords(paying)}`;
}

/** The proofs a mode accepts, as the profile's checkout capability publishes them. */
export const APPROVAL_PROOF_METHODS: Record<ApprovalProofMode, string[]> = { 'passkey-or-code': ['passkey', 'email_code'], code: ['email_code'], link: [] };

/**
 * The escalation: the checkout waits for the buyer on the approval page, with what they will be asked to prove and,
 * given the store's payment handler, how they pay then.
 */
export function ucpBuyerApprovalMessage(mode: ApprovalProofMode, _release: UcpRelease, paying?: PayingWay): UcpMessage {
  // Both releases say it alike; the release is taken so that this stays the place where one could differ.
  const content = paying ? `${APPROVAL_PROOF_WORDS[mode]} ${paymentStepWords(paying)}` : APPROVAL_PROOF_WORDS[mode];
  return { type: 'error', code: 'buyer_approval_required', severity: 'requires_buyer_review', content };
}
