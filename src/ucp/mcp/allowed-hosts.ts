/**
 * DNS-rebinding protection for the commerce endpoint (MCP transports, security warning): a request whose
 * Host, or Origin when present, is not one of this store's names is refused with 403. BASE_URL's host is
 * always allowed, and so are the loopback names (localhost, 127.0.0.1, [::1]) with the port the request
 * arrived on, so `curl http://127.0.0.1:PORT/…` on the store's machine works: a rebound DNS name never
 * arrives with a loopback Host (the browser sends the attacker's name), and a page on another local port
 * is another origin. MCP_ALLOWED_HOSTS adds names (`host` = any port, `host:port` = that port only).
 */

export interface AllowedHosts {
  exact: Set<string>;
  anyPort: Set<string>;
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** The names of this machine's loopback interface, as Host writes them. */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

function splitHost(host: string): { name: string; port: string | undefined } {
  const lower = host.trim().toLowerCase();
  const bracketed = /^(\[[^\]]*\])(?::(\d+))?$/.exec(lower);
  if (bracketed) return { name: bracketed[1]!, port: bracketed[2] };
  const [name = '', port, ...rest] = lower.split(':');
  return rest.length ? { name: lower, port: undefined } : { name, port };
}

export function allowedHosts(baseUrl: string, extra: readonly string[]): AllowedHosts {
  const base = new URL(baseUrl);
  const exact = new Set<string>([base.host.toLowerCase()]);
  const defaultPort = DEFAULT_PORT[base.protocol];
  if (!base.port && defaultPort) exact.add(`${base.hostname.toLowerCase()}:${defaultPort}`);
  const anyPort = new Set<string>();
  for (const entry of extra) {
    const { name, port } = splitHost(entry);
    if (port) exact.add(`${name}:${port}`);
    else anyPort.add(name);
  }
  return { exact, anyPort };
}

/**
 * `localPort`: the port the request arrived on (the socket's); a loopback name is allowed on that port only
 * (`defaultPort` is the port a Host without one means: 80, or 443 for an https Origin).
 */
export function isAllowedHost(host: string | undefined, allowed: AllowedHosts, localPort?: number, defaultPort = '80'): boolean {
  if (!host) return false;
  const lower = host.trim().toLowerCase();
  const { name, port } = splitHost(lower);
  if (allowed.exact.has(lower) || allowed.anyPort.has(name)) return true;
  return localPort !== undefined && LOOPBACK_NAMES.has(name) && (port ?? defaultPort) === String(localPort);
}

/** No Origin (a non-browser client) passes; `null` and foreign origins do not. */
export function isAllowedOrigin(origin: string | undefined, allowed: AllowedHosts, localPort?: number): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const defaultPort = DEFAULT_PORT[url.protocol]!;
  return isAllowedHost(url.host, allowed, localPort, defaultPort) || (url.port === '' && isAllowedHost(`${url.hostname}:${defaultPort}`, allowed));
}
