/**
 * The fields of a checkout in the domain's own names, as a message or a refusal points at them. A door renders a
 * path in its protocol's words (the UCP door as a JSONPath of its release, a page as a sentence); the domain
 * never writes one.
 */

/** The parts of a shipping address a problem can name (the keys of PostalAddress). */
export type AddressField = 'streetAddress' | 'locality' | 'region' | 'postalCode' | 'country';

/** A field of a checkout: its lines (by position), the buyer's email, the destination (or one of its parts), the option. */
export type FieldPath =
  | readonly ['lines']
  | readonly ['lines', number]
  | readonly ['lines', number, 'variant' | 'quantity']
  | readonly ['buyer', 'email']
  | readonly ['destination']
  | readonly ['destination', AddressField]
  | readonly ['shippingOption'];

/** What a door needs to say a fact in its own words: a title, a count, an amount in cents, what was given. */
export type FactParams = Readonly<Record<string, string | number>>;
