/**
 * The one email rule: what the checkout accepts, the mailer sends to, config takes and the code limit counts are
 * the same addresses. A plain `local@domain` (no display name, quotes, comments, lists, IP literals or spaces),
 * so an address the store takes is one it can mail. No I/O.
 */

/** The longest address a mail path carries (RFC 5321's 256 less the brackets). */
export const MAX_MAILBOX_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;

// Dot-atoms (RFC 5322) with letters of any script (RFC 6531): no leading, trailing or doubled dot.
const LOCAL_PART = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const DOMAIN_LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?$/u;
// A top-level domain is never all digits: `a@1.2.3.4` is an IP address, not a host name.
const NUMERIC = /^\p{N}+$/u;

/**
 * The address when `text` (trimmed) is exactly one plain address, its domain in lower case; undefined otherwise,
 * and then nothing may be stored as or mailed to it.
 */
export function parseMailbox(text: string): string | undefined {
  const value = text.trim();
  const at = value.lastIndexOf('@');
  if (at <= 0 || value.length > MAX_MAILBOX_LENGTH) return undefined;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  const labels = domain.split('.');
  if (local.length > MAX_LOCAL_LENGTH || !LOCAL_PART.test(local)) return undefined;
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label)) || NUMERIC.test(labels.at(-1)!)) return undefined;
  return `${local}@${domain}`;
}

/**
 * The mailbox an address delivers to, as a limit counts it: `Local+Tag@Domain` is `local@domain`. Plus-addressing
 * and case reach one inbox at the common providers, so they share its limit.
 */
export function mailboxKey(address: string): string {
  const value = address.trim().toLowerCase();
  const at = value.lastIndexOf('@');
  if (at <= 0) return value;
  const local = value.slice(0, at);
  const plus = local.indexOf('+');
  return `${plus > 0 ? local.slice(0, plus) : local}@${value.slice(at + 1)}`;
}
