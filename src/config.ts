/** Environment -> typed config. A bad value stops the process with one line naming the variable. */
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  logLevel: string;
  cartMaxLineQuantity: number;
  /** Request-rate limits; RATE_LIMIT=off for load tests or behind a proxy that limits instead. */
  rateLimit: boolean;
  /**
   * Hosts (host or host:port) the commerce endpoint accepts in Host/Origin besides BASE_URL's and the loopback
   * names on the listening port (MCP_ALLOWED_HOSTS, comma-separated).
   */
  mcpAllowedHosts: string[];
  /** Lets agent profiles be fetched over plain http from loopback (UCP_ALLOW_INSECURE_PROFILES=1), for tests only. */
  allowInsecureProfiles: boolean;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable}: ${problem}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'off', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `expected on or off, got "${env[name]}"`);
}

function absoluteHttpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http or https URL, got "${raw}"`);
  }
  if (url.search || url.hash) throw new ConfigError(name, `must not carry a query or fragment, got "${raw}"`);
  return url.toString().replace(/\/+$/, '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const baseUrl = absoluteHttpUrl('BASE_URL', env.BASE_URL || `http://localhost:${port}`);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'expected a postgres:// or postgresql:// URL');
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const cartMaxLineQuantity = integer(env, 'CART_MAX_LINE_QUANTITY', 10, 1, 1_000_000);
  const rateLimit = flag(env, 'RATE_LIMIT', true);
  const mcpAllowedHosts = (env.MCP_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const badHost = mcpAllowedHosts.find((h) => !/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/.test(h));
  if (badHost) throw new ConfigError('MCP_ALLOWED_HOSTS', `expected host or host:port entries, got "${badHost}"`);
  const allowInsecureProfiles = flag(env, 'UCP_ALLOW_INSECURE_PROFILES', false);
  return {
    port,
    host,
    baseUrl,
    dataDir,
    databaseUrl,
    logLevel,
    cartMaxLineQuantity,
    rateLimit,
    mcpAllowedHosts,
    allowInsecureProfiles,
  };
}
