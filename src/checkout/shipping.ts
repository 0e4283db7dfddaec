/**
 * Where and how an order ships: the US postal address rules and the shipping options from configuration
 * (standard, free from a threshold; express). No I/O.
 */
import type { CheckoutConfig } from './checkout-options.js';
import { parsePhone } from '../fields/phone.js';
import type { AddressField, FactParams } from './fields.js';

export interface PostalAddress {
  firstName?: string;
  lastName?: string;
  streetAddress: string;
  extendedAddress?: string;
  locality: string;
  region: string;
  postalCode: string;
  country: 'US';
  phoneNumber?: string;
}

export interface ShippingOption {
  id: 'standard' | 'express';
  title: string;
  description: string;
  amount: number;
}

/** The 50 states, DC and the territories USPS delivers to. */
export const US_REGIONS = new Set(
  ('AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX ' +
    'UT VT VA WA WV WI WY DC PR GU VI AS MP').split(' '),
);

/** A part of an address that is missing or wrong: which one (in the domain's names) and why. */
export interface AddressProblem {
  field: AddressField;
  code: 'missing' | 'invalid' | 'address_undeliverable';
  content: string;
  params?: FactParams;
}

/** The parts of an address, as the domain names them. */
export const ADDRESS_KEYS = ['firstName', 'lastName', 'streetAddress', 'extendedAddress', 'locality', 'region', 'postalCode', 'country', 'phoneNumber'] as const;
export type AddressKey = (typeof ADDRESS_KEYS)[number];

/** An address as a client gave it, not yet checked (each door maps its own names onto these). */
export type AddressInput = Partial<Record<AddressKey, string>>;

// Lengths and characters were checked where the text entered (checkedCheckoutText): nothing is cut here.
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** Whose name a parcel carries when its address names nobody: the buyer's (first and last name). */
export type Recipient = { firstName?: string; lastName?: string };

/**
 * Reads a US address. Returns the address when it is complete and valid, and every problem otherwise (no recipient
 * name; missing street, city, state, ZIP; a state that is not a US state; a ZIP that is not 5 or 9 digits; another
 * country; a phone that is not one, as a checkout stored before the phone rule may hold). The recipient is the
 * address's first and last name, or, when the address gives neither, `buyer`'s: UCP's own checkout examples name
 * the buyer and give a destination without a name, and the approval page shows the name the parcel will carry.
 */
export function readUsAddress(input: AddressInput, buyer: Recipient = {}): { address?: PostalAddress; problems: AddressProblem[] } {
  const problems: AddressProblem[] = [];
  const recipient = text(input.firstName) || text(input.lastName) ? input : buyer;
  const firstName = text(recipient.firstName);
  const lastName = text(recipient.lastName);
  if (!firstName && !lastName) {
    problems.push({ field: 'firstName', code: 'missing', content: 'The shipping address needs the name of the person it goes to (a first name, a last name or both).' });
  }
  const country = text(input.country)?.toUpperCase();
  if (country !== undefined && country !== 'US' && country !== 'USA') {
    problems.push({ field: 'country', code: 'address_undeliverable', content: 'This store ships to addresses in the United States only.', params: { country: country.slice(0, 20) } });
  }
  const street = text(input.streetAddress);
  if (!street) problems.push({ field: 'streetAddress', code: 'missing', content: 'The shipping address needs a street address.' });
  const locality = text(input.locality);
  if (!locality) problems.push({ field: 'locality', code: 'missing', content: 'The shipping address needs a city.' });
  const region = text(input.region)?.toUpperCase();
  if (!region) problems.push({ field: 'region', code: 'missing', content: 'The shipping address needs a state (a two-letter code such as CA).' });
  else if (!US_REGIONS.has(region)) problems.push({ field: 'region', code: 'invalid', content: `"${region.slice(0, 20)}" is not a US state code (such as CA or NY).`, params: { region: region.slice(0, 20) } });
  const postalCode = text(input.postalCode);
  if (!postalCode) problems.push({ field: 'postalCode', code: 'missing', content: 'The shipping address needs a ZIP code.' });
  else if (!/^\d{5}(-\d{4})?$/.test(postalCode)) problems.push({ field: 'postalCode', code: 'invalid', content: 'A ZIP code is 5 digits, or 5 digits, a hyphen and 4 more.' });
  const givenPhone = text(input.phoneNumber);
  const phone = givenPhone === undefined ? undefined : parsePhone(givenPhone);
  if (givenPhone !== undefined && phone === undefined) {
    problems.push({ field: 'phoneNumber', code: 'invalid', content: "The shipping address's phone is not a phone number (such as (415) 555-0100)." });
  }
  if (problems.length > 0) return { problems };
  const address: PostalAddress = {
    streetAddress: street!,
    locality: locality!,
    region: region!,
    postalCode: postalCode!,
    country: 'US',
  };
  const extended = text(input.extendedAddress);
  if (extended) address.extendedAddress = extended;
  if (firstName) address.firstName = firstName;
  if (lastName) address.lastName = lastName;
  if (phone) address.phoneNumber = phone;
  return { address, problems };
}

/** The shipping options for an order of this subtotal: standard (free from the threshold) and express. */
export function shippingOptions(config: CheckoutConfig, subtotal: number): ShippingOption[] {
  const free = config.freeShippingOverCents > 0 && subtotal >= config.freeShippingOverCents;
  return [
    {
      id: 'standard',
      title: free ? 'Free standard shipping' : 'Standard shipping',
      description: '5 to 8 business days',
      amount: free ? 0 : config.standardShippingCents,
    },
    { id: 'express', title: 'Express shipping', description: '2 business days', amount: config.expressShippingCents },
  ];
}

/** The address on one line, as an order list or a page shows it. */
export function formatAddress(address: PostalAddress): string[] {
  const name = [address.firstName, address.lastName].filter(Boolean).join(' ');
  return [
    ...(name ? [name] : []),
    address.streetAddress,
    ...(address.extendedAddress ? [address.extendedAddress] : []),
    `${address.locality}, ${address.region} ${address.postalCode}`,
    'United States',
  ];
}
