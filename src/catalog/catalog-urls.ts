/**
 * What a URL the catalog carries (a product's image) may be: an `https://` address on a named host, or a path on
 * this store (`/assets/…`). The import refuses anything else, and the pages' Content-Security-Policy lets images
 * load from the origins of these addresses only, so an address is checked strictly enough that its origin is a
 * CSP source and nothing more (`new URL()` lets `*`, `;` and `,` through into a host). No I/O.
 */

export const MAX_CATALOG_URL_LENGTH = 2048;

/** RFC 3986's characters but the apostrophe: no space, quote, angle bracket or backslash ends or escapes a source. */
const URL_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&()*+,;=%]*$/;
const HTTPS = /^https:\/\//i;
/** The authority of an https address: a host and an optional port, nothing else (no user name, no password). */
const AUTHORITY = /^([A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A last label a URL parser reads as a number makes the host an IPv4 address (`1.2.3.4`, `0x7f.1`). */
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|[0-9]+)$/;
const MAX_HOST_LENGTH = 253;

/** A host name of letters, digits and hyphens (an international one in its `xn--` form); an IP address is not one. */
function isHostName(host: string): boolean {
  const labels = host.toLowerCase().split('.');
  return host.length <= MAX_HOST_LENGTH && labels.every((label) => LABEL.test(label)) && !NUMERIC_LABEL.test(labels.at(-1)!);
}

/** A port a browser can use; the address's default one (443) may be written too. */
const isPort = (port: string | undefined) => port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);

/** Why an `https://` address's authority is refused, or undefined. */
function authorityFault(authority: string): string | undefined {
  if (authority.includes('@')) return 'has a user name or password in it';
  const match = AUTHORITY.exec(authority);
  if (!match || !isHostName(match[1]!)) return 'names no valid host (letters, digits, hyphens and dots; not an IP address)';
  if (!isPort(match[2])) return 'names no valid port';
  return undefined;
}

/**
 * Why `url` is not an address the catalog may carry, as the end of a sentence that starts with the field's name;
 * undefined when it may be stored.
 */
export function catalogUrlFault(url: string): string | undefined {
  if (url.length > MAX_CATALOG_URL_LENGTH) return `is too long: at most ${MAX_CATALOG_URL_LENGTH} characters`;
  if (!URL_CHARACTERS.test(url)) return 'holds a character a URL may not (a space, a quote, a backslash, a control or a non-ASCII character)';
  if (url.startsWith('/')) return url.startsWith('//') ? 'must start with https:// (an address without its scheme is not taken)' : undefined;
  if (!HTTPS.test(url)) return 'must be an https:// address or a path on this store starting with /';
  const rest = url.slice('https://'.length);
  const fault = authorityFault(rest.slice(0, rest.search(/[/?#]|$/)));
  if (fault) return fault;
  // The parser the pages use must read the same host (a last guard against a difference between the two readings).
  const parsed = URL.parse(url);
  if (!parsed || parsed.username !== '' || parsed.password !== '' || !isHttpsOrigin(parsed.origin)) return 'is not a valid URL';
  return undefined;
}

/** The origin an image at `url` loads from when it is another host's (`https://host[:port]`); undefined for a path or a refused address. */
export function catalogUrlOrigin(url: string): string | undefined {
  if (!HTTPS.test(url) || catalogUrlFault(url) !== undefined) return undefined;
  return URL.parse(url)?.origin;
}

/** Whether `origin` is exactly `https://host[:port]` with a host name the catalog's URLs may name: a CSP source and nothing more. */
export function isHttpsOrigin(origin: string): boolean {
  if (!origin.startsWith('https://')) return false;
  return authorityFault(origin.slice('https://'.length)) === undefined;
}
