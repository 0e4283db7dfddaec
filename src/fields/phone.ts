/**
 * The one phone rule: a phone the checkout takes (the buyer's, the shipping address's) is a telephone number as
 * libphonenumber-js knows the world's numbering plans, stored in E.164 (`+14155550100`), the form UCP's buyer
 * schema names. The store ships to the US only, so a number written without a country code is read as a US one
 * (`(415) 555-0100`); another country's is written with `+` and its code. No I/O.
 */
import parsePhoneNumber from 'libphonenumber-js';

/** The country a number without `+` and a country code is read in: the store ships to the US (src/checkout/shipping.ts). */
const HOME_COUNTRY = 'US';

/**
 * The number in E.164 when `text` (trimmed) is exactly one valid phone number; undefined otherwise, and then nothing
 * may be stored as it. Text around the number ("call 415 555 0100") and an extension ("x12": E.164 has no place for
 * one, and the store never cuts what it was given) are refused, as is a number of the wrong length for its plan.
 */
export function parsePhone(text: string): string | undefined {
  // extract: false, so that the whole text must be the number, not merely contain one.
  const phone = parsePhoneNumber(text.trim(), { defaultCountry: HOME_COUNTRY, extract: false });
  if (!phone || phone.ext !== undefined || !phone.isValid()) return undefined;
  return phone.number;
}
