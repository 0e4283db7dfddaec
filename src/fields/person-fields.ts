/**
 * Every person-facing text field the store keeps, with its length and line rule: one table that both doors, the
 * form's maxlength and the domain read, and the two fields with a form of their own: an email (mailbox.ts) and a phone
 * (phone.ts). A door names a field in its own words; the rule is the same. No I/O.
 */
import { MAX_MAILBOX_LENGTH, parseMailbox } from './mailbox.js';
import { parsePhone } from './phone.js';
import { textFault, textFaultSentence, type TextFault, type TextRule } from './text.js';

const single = (max: number): TextRule => ({ max, lines: 'single' });
const multi = (max: number): TextRule => ({ max, lines: 'multi' });

export const PERSON_FIELDS = {
  email: single(MAX_MAILBOX_LENGTH),
  firstName: single(100),
  lastName: single(100),
  streetAddress: single(200),
  extendedAddress: single(200),
  locality: single(100),
  region: single(40),
  postalCode: single(20),
  country: single(40),
  phoneNumber: single(40),
  shippingOption: single(40),
  cartNote: multi(5000),
  cartAttributeName: single(250),
  cartAttributeValue: multi(1000),
  linePropertyName: single(250),
  linePropertyValue: multi(1000),
  /** Why the merchant canceled or refunded an order, a tracking number, a carrier (the buyer's mail quotes them). */
  orderText: single(500),
} as const satisfies Record<string, TextRule>;

export type PersonField = keyof typeof PERSON_FIELDS;

/** A text refused for a field: which field, and why (the door names the field in its own words). */
export interface FieldFault {
  readonly field: PersonField;
  readonly fault: TextFault | 'not_a_mailbox' | 'not_a_phone';
}

/**
 * The text as it is stored (an email normalised by parseMailbox, a phone to E.164 by parsePhone), or why it may not
 * be. A blank phone is no phone given: kept as it is, read as none.
 */
export function readPersonField(field: PersonField, value: string): { value: string; fault?: undefined } | { value?: undefined; fault: FieldFault } {
  const fault = textFault(value, PERSON_FIELDS[field]);
  if (fault) return { fault: { field, fault } };
  if (field === 'email') {
    const address = parseMailbox(value);
    return address === undefined ? { fault: { field, fault: 'not_a_mailbox' } } : { value: address };
  }
  if (field === 'phoneNumber' && value.trim() !== '') {
    const phone = parsePhone(value);
    return phone === undefined ? { fault: { field, fault: 'not_a_phone' } } : { value: phone };
  }
  return { value };
}

/** What is wrong with `value` as `field`, or undefined when it may be stored as it is. */
export function fieldFault(field: PersonField, value: string): FieldFault | undefined {
  return readPersonField(field, value).fault;
}

/** Why a text is not a phone, after the field's name. */
const PHONE_FAULT = 'is not a phone number: write a US number with its area code, such as (415) 555-0100, or another country\'s with + and its country code, without an extension';

/** The fault as the end of a sentence that starts with the field's name: "street_address contains a control character". */
export function fieldFaultSentence({ field, fault }: FieldFault): string {
  if (fault === 'not_a_mailbox') return 'is not one plain email address the store can mail (such as name@example.com)';
  if (fault === 'not_a_phone') return PHONE_FAULT;
  return textFaultSentence(fault, PERSON_FIELDS[field]);
}

