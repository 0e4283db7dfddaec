/**
 * DNS-rebinding protection for the commerce endpoint (MCP transports, security warning): a request whose
 * Host, or Origin when present, is not one of this store's names is refused with 403. BASE_URL's host is
 * always allowed; MCP_ALLOWED_HOSTS adds names (`host` = any port, `host:port` = that port only).
 */

export interface AllowedHosts {
  exact: Set<string>;
  anyPort: Set<string>;
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

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

export function isAllowedHost(host: string | undefined, allowed: AllowedHosts): boolean {
  if (!host) return false;
  const lower = host.trim().toLowerCase();
  return allowed.exact.has(lower) || allowed.anyPort.has(splitHost(lower).name);
}

/** No Origin (a non-browser client) passes; `null` and foreign origins do not. */
export function isAllowedOrigin(origin: string | undefined, allowed: AllowedHosts): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isAllowedHost(url.host, allowed) || (url.port === '' && isAllowedHost(`${url.hostname}:${DEFAULT_PORT[url.protocol]}`, allowed));
}
