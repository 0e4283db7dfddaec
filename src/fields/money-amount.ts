/**
 * The one rule for an amount of money a person types (the terminal's AMOUNT, the admin's capture and refund fields):
 * dollars and cents (`12.50`, `$12.50`, `12`, `0.5`) to integer cents, read from the digits, never through a float.
 * No I/O.
 */

/** The most a typed amount may hold: 999,999,999.99 (integer cents stay far below Number.MAX_SAFE_INTEGER). */
const DOLLARS_AND_CENTS = /^\$?(\d{1,9})(?:\.(\d{1,2}))?$/;

/** Cents when `text` (trimmed) is dollars and cents, zero included; undefined when it is not an amount. */
export function parseDollars(text: string): number | undefined {
  const match = DOLLARS_AND_CENTS.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
