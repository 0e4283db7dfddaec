/**
 * The checkout's facts (messages and refusals: a code, a field, params) as plain sentences for the buyer reading a
 * page: no field names, no paths; the options by their titles. A fact this table does not know reads as the
 * domain's default sentence.
 */
import type { FactParams, FieldPath } from '../../checkout/fields.js';
import type { Refusal } from '../../checkout/machine.js';
import type { ShippingOption } from '../../checkout/shipping.js';
import { html, typed, type Html } from '../../markup/html.js';
import { sentence } from './message-page.js';
import { formatMoney } from './purchase-parts.js';

type BuyerWords = (params: FactParams, options: readonly ShippingOption[]) => Html | string;

const choices = (options: readonly ShippingOption[]) => options.map((o) => `${o.title} (${formatMoney(o.amount)})`).join(' or ');

/** By `code@field` (the field without positions). */
const BUYER_WORDS: Record<string, BuyerWords> = {
  'empty_checkout@lines': () => 'Your checkout has no items yet.',
  'item_unavailable@lines': (p) => `An item in your checkout (variant ${p.variantId}) is no longer sold.`,
  'out_of_stock@lines': (p) => `${p.title} is sold out.`,
  'insufficient_stock@lines': (p) => `Only ${p.available} of ${p.title} left, fewer than your checkout asks for.`,
  'backordered@lines': (p) => `${p.backordered} of the ${p.quantity} ${p.title} ship later, when they are back in stock.`,
  'price_changed@lines': (p) => `The price of ${p.title} changed from ${formatMoney(Number(p.from))} to ${formatMoney(Number(p.to))}.`,
  'missing@buyer.email': () => 'Your email address is needed for the order confirmation.',
  'invalid@buyer.email': (p) => html`"${typed(p.email)}" is not an email address.`,
  'invalid@buyer.phoneNumber': () => 'The phone number is not valid: write it with its area code, such as (415) 555-0100.',
  'missing@destination': () => 'A shipping address in the United States is needed.',
  'missing@destination.firstName': () => 'The shipping address needs the name of the person it goes to.',
  'invalid@destination.phoneNumber': () => 'The phone number is not valid: write it with its area code, such as (415) 555-0100.',
  'address_undeliverable@destination.country': () => 'This store ships only to addresses in the United States.',
  'missing@destination.streetAddress': () => 'The shipping address needs a street.',
  'missing@destination.locality': () => 'The shipping address needs a city.',
  'missing@destination.region': () => 'The shipping address needs a state.',
  'invalid@destination.region': (p) => html`"${typed(p.region)}" is not a US state.`,
  'missing@destination.postalCode': () => 'The shipping address needs a ZIP code.',
  'invalid@destination.postalCode': () => 'The ZIP code is not valid: it has 5 digits, or 5 digits, a hyphen and 4 more.',
  'missing@shippingOption': (_p, options) => `A shipping choice is needed: ${choices(options)}.`,
  'invalid@shippingOption': (_p, options) => `The shipping chosen is not one this store offers; it offers ${choices(options)}.`,
};

const fieldKind = (field: FieldPath | undefined) => (field ?? []).filter((part) => typeof part === 'string').join('.');

/**
 * A message or refusal as the buyer reads it (what the buyer typed in it isolated in <bdi>). `options`: the
 * checkout's shipping options, named by their titles.
 */
export function buyerSentence(fact: Refusal, options: readonly ShippingOption[] = []): Html | string {
  const words = BUYER_WORDS[`${fact.code}@${fieldKind(fact.field)}`];
  return words ? words(fact.params ?? {}, options) : sentence(fact.content);
}
