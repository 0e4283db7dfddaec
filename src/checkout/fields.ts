/**
 * The fields of a checkout in the domain's own names, as a message or a refusal points at them. A door renders a
 * path in its protocol's words (the UCP door as a JSONPath of its release, a page as a sentence); the domain
 * never writes one.
 */

import { readPersonField, fieldFaultSentence, type FieldFault, type PersonField } from '../fields/person-fields.js';
import { ADDRESS_KEYS, type AddressInput, type AddressKey } from './shipping.js';

/** The parts of a shipping address a problem can name (the keys of PostalAddress): a missing recipient names firstName. */
export type AddressField = 'firstName' | 'streetAddress' | 'locality' | 'region' | 'postalCode' | 'country' | 'phoneNumber';

/** A field of a checkout: its lines (by position), the buyer's email or phone, the destination (or one of its parts), the option. */
export type FieldPath =
  | readonly ['lines']
  | readonly ['lines', number]
  | readonly ['lines', number, 'variant' | 'quantity']
  | readonly ['buyer', 'email' | 'phoneNumber']
  | readonly ['destination']
  | readonly ['destination', AddressField]
  | readonly ['shippingOption'];

/** What a door needs to say a fact in its own words: a title, a count, an amount in cents, what was given. */
export type FactParams = Readonly<Record<string, string | number>>;

/** A text field of a checkout that breaks its rule (src/fields): which one, and why. Nothing was stored. */
export class CheckoutFieldRefused extends Error {
  constructor(
    readonly field: CheckoutTextPath,
    readonly fault: FieldFault,
  ) {
    super(`a checkout's ${field.join('.')} ${fieldFaultSentence(fault)}`);
    this.name = 'CheckoutFieldRefused';
  }
}

/** The checkout's text fields: the buyer's, the address's parts, the option, a line's property names and values. */
export type CheckoutTextPath =
  | readonly ['buyer', BuyerKey]
  | readonly ['destination', AddressKey]
  | readonly ['shippingOption']
  | readonly ['lines', number, 'properties', string]
  | readonly ['lines', number, 'properties', string, 'name'];

type BuyerKey = 'email' | 'firstName' | 'lastName' | 'phoneNumber';
const BUYER_KEYS: readonly BuyerKey[] = ['email', 'firstName', 'lastName', 'phoneNumber'];

/** What a client gives a checkout that is text: the buyer, the destination, the option, the lines' properties. */
interface CheckoutText {
  buyer?: Partial<Record<BuyerKey, string>>;
  destination?: AddressInput | null;
  shippingOption?: string | null;
  lines?: readonly { properties?: Record<string, string> }[];
}

/**
 * The input with every text checked against its field's rule, the email and the phones normalised (E.164); the first
 * field that breaks its rule is thrown as CheckoutFieldRefused. The email first, then the address (which the
 * browser's name fields fill as well as the buyer's), so a refusal names the field the buyer typed into.
 */
export function checkedCheckoutText<T extends CheckoutText>(input: T): T {
  const read = (path: CheckoutTextPath, field: PersonField, value: string): string => {
    const result = readPersonField(field, value);
    if (result.fault) throw new CheckoutFieldRefused(path, result.fault);
    return result.value;
  };
  const buyer = input.buyer === undefined ? undefined : { ...input.buyer };
  if (buyer?.email !== undefined) buyer.email = read(['buyer', 'email'], 'email', buyer.email);
  const destination = input.destination ? { ...input.destination } : input.destination;
  if (destination) for (const key of ADDRESS_KEYS) {
    const value = destination[key];
    if (value !== undefined) destination[key] = read(['destination', key], key, value);
  }
  if (buyer) for (const key of BUYER_KEYS) if (key !== 'email' && buyer[key] !== undefined) buyer[key] = read(['buyer', key], key, buyer[key]);
  if (input.shippingOption) read(['shippingOption'], 'shippingOption', input.shippingOption);
  input.lines?.forEach((line, index) => {
    for (const [name, value] of Object.entries(line.properties ?? {})) {
      read(['lines', index, 'properties', name, 'name'], 'linePropertyName', name);
      read(['lines', index, 'properties', name], 'linePropertyValue', value);
    }
  });
  return { ...input, ...(buyer === undefined ? {} : { buyer }), ...(destination === undefined ? {} : { destination }) };
}
