/** Environment -> typed config. A bad value stops the process with one line naming the variable. */
import { isIP } from 'node:net';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { US_REGIONS } from './checkout/shipping.js';
import { parseMailbox } from './fields/mailbox.js';
import { textFault, textFaultSentence, type TextRule } from './fields/text.js';
import { APPROVAL_PROOF_MODES, type ApprovalProofMode, type CheckoutConfig, type PolicyKind } from './checkout/checkout-options.js';
import type { MailConfig } from './mail/mail-options.js';
import { CAPTURE_ON } from './orders/order-machine.js';
import { DEFAULT_PAYMENT_DUE_DAYS, DEFAULT_PAYMENT_INSTRUCTIONS } from './payments/manual-provider.js';
import { PAYMENT_INSTRUCTIONS_MAX, type PaymentConfig, type StripeConfig } from './payments/payment-options.js';
import { PAYMENT_PROVIDERS } from './payments/payment-provider.js';

// Each domain folder owns the shape of its options; the Config is made of them.
export type { ApprovalProofMode, CheckoutConfig, MailConfig, PaymentConfig, PolicyKind, StripeConfig };

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
  /** RATE_LIMITS: the request budgets (RATE_LIMIT_DEFAULTS, with the variable's entries over them). */
  rateLimits: RateLimitBudgets;
  /**
   * REDIS_URL (redis:// or rediss://): the rate-limit counters live there, shared by every instance; unset, each
   * instance counts in its own memory.
   */
  redisUrl: string | undefined;
  /** REDIS_KEY_PREFIX: what every key this store writes to Redis starts with (several stores may share one Redis). */
  redisKeyPrefix: string;
  /** METRICS_TOKEN: the bearer token that reads GET /metrics from anywhere; unset, only loopback may. */
  metricsToken: string | undefined;
  /**
   * Hosts (host or host:port) the commerce endpoint accepts in Host/Origin besides BASE_URL's and the loopback
   * names on the listening port (MCP_ALLOWED_HOSTS, comma-separated).
   */
  mcpAllowedHosts: string[];
  /**
   * The proxies whose X-Forwarded-For and X-Request-Id are believed (TRUST_PROXY: comma-separated IPs or CIDRs, or
   * `loopback`), as CIDRs; none by default, so a client cannot choose its own address or request id.
   */
  trustProxy: string[];
  /** Lets agent profiles be fetched over plain http from loopback (UCP_ALLOW_INSECURE_PROFILES=1), for tests only. */
  allowInsecureProfiles: boolean;
  /** The store's name as shoppers and buyers read it: every page, mail, the MCP instructions, the OpenAPI (STORE_NAME). */
  storeName: string;
  /** What the store is, in one or two sentences (STORE_DESCRIPTION): the home page, meta descriptions, the MCP instructions, the OpenAPI. */
  storeDescription: string;
  /** Where shoppers and buyers reach the merchant (STORE_CONTACT_EMAIL; default MERCHANT_EMAIL's address, else MAIL_FROM's). */
  storeContactEmail: string;
  /** The merchant's postal address as lines (STORE_ADDRESS, lines separated by `;`), or none. */
  storeAddress: string[];
  /** The IANA time zone the merchant reads times in (STORE_TIMEZONE, default UTC): pages, mails and the admin show it. */
  storeTimeZone: string;
  /** Subscriptions: how many days before a delivery its renewal is mailed for the buyer's approval (SUBSCRIPTION_NOTICE_DAYS, 3). */
  subscriptionNoticeDays: number;
  /** How long an agent profile fetch may take (ms; 2000 when absent). No variable: tests lengthen it. */
  agentProfileTimeoutMs?: number;
  /** How long a rate-limit command may wait for Redis before the request is served unlimited (ms; 200 when absent). No variable: tests lengthen it. */
  redisCommandTimeoutMs?: number;
  checkout: CheckoutConfig;
  payment: PaymentConfig;
  mail: MailConfig;
  outbox: OutboxConfig;
  /** SIGNING_KEY: the store's ES256 private key (a JWK, or PKCS#8 PEM); unset, one is generated once and kept in the database. */
  signingKey: string | undefined;
}

export interface OutboxConfig {
  /** OUTBOX_LEASE: how long a delivery under way is held by its instance before another may take it over (a process that died mid-send). */
  leaseSeconds: number;
  /** OUTBOX_RETRY_BASE: the first wait after a failed delivery; each next one doubles (with jitter), up to an hour. */
  retryBaseSeconds: number;
  /** Deadlines after which a delivery is given up: 24 h for webhooks, 3 days for mail. */
  webhookDeadlineSeconds: number;
  mailDeadlineSeconds: number;
}

const POLICY_VARIABLES: Record<PolicyKind, string> = {
  terms_of_service: 'POLICY_TERMS_URL',
  privacy_policy: 'POLICY_PRIVACY_URL',
  refund_policy: 'POLICY_REFUND_URL',
  shipping_policy: 'POLICY_SHIPPING_URL',
};

/**
 * A request budget (src/http/rate-limit.ts counts it): `max` requests at once, refilled evenly over `periodMs`, so a
 * client that has spent it may send one more every periodMs / max.
 */
export interface RateBudget {
  max: number;
  periodMs: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The budgets, each per client address unless its name says otherwise. Several hundred shoppers may share one
 * address (a carrier's NAT, an office), and an agent platform calls the commerce endpoint from few addresses for
 * many shoppers: what one client may do is bounded by the budgets of its own cart or agent profile, and the
 * address's budget only bounds what all of them together may do.
 */
export const RATE_LIMIT_DEFAULTS = {
  /** The shop's pages (home, collections, products) and their JSON, recommendations, sitemap, openapi, scopes, demo
   *  images and the shop's script: 20 product pages a minute is a fast shopper (~100 calls), this leaves room for a
   *  few behind one address, and holds a scraper to 10/s. */
  catalog: { max: 600, periodMs: MINUTE },
  /** Search-as-you-type sends one request per keystroke: 300 is twenty typed queries a minute. */
  search: { max: 300, periodMs: MINUTE },
  /** /cart.js and /cart.json: themes read the cart on every page and after every change, and a new visitor's first
   *  read starts its cart; a few hundred shoppers behind one address read theirs ten times a minute. */
  'cart-read': { max: 3000, periodMs: MINUTE },
  /** Adds, changes, updates, clears, /cart/c/{token} and POST /checkout, from one address: a few hundred shoppers
   *  each changing their cart ten times a minute. */
  'cart-write': { max: 3000, periodMs: MINUTE },
  /** The same writes to one cart (the cart of the cookie, or of /cart/c/{token}): a person changes a cart a few
   *  times a minute, and a quantity stepper clicked fast sends a burst. */
  'cart-write-per-cart': { max: 60, periodMs: MINUTE },
  /** New carts (a cart answer handing out a new token, create_cart and create_checkout from line items): one per
   *  visitor, so a few hundred shoppers behind one address have room, while one client cannot fill the database
   *  with carts (see MAX_CART_TEXT_BYTES). */
  'cart-start': { max: 3000, periodMs: HOUR },
  /** The commerce endpoint from one address: an agent platform's calls for all its agents (100 calls/s). */
  mcp: { max: 6000, periodMs: MINUTE },
  /** The calls of one agent profile (the UCP-Agent header's, or a tool call's meta["ucp-agent"].profile) from one
   *  address: 20 calls/s sustained, for a platform calling for many shoppers. A trusted platform's own budget is an
   *  entry `mcp-per-profile[its profile URL]` in RATE_LIMITS. */
  'mcp-per-profile': { max: 1200, periodMs: MINUTE },
  /** The UCP profile: its readers cache it (max-age 300). */
  profile: { max: 120, periodMs: MINUTE },
  /** A person's own pages: the cart page, the checkout form, the approval page's GET, checkout, order and policy
   *  pages: a person opens a handful a minute. */
  page: { max: 120, periodMs: MINUTE },
  /** Approving or declining is one click of a person; more is someone trying links or forms. */
  'approval-post': { max: 20, periodMs: MINUTE },
  /** /healthz and /readyz: balancers and supervisors probe every few seconds; never refuse a probe that is sane. */
  health: { max: 1200, periodMs: MINUTE },
  /** The admin's pages and actions (/admin) from one address: a merchant's staff clicking through orders. */
  admin: { max: 600, periodMs: MINUTE },
  /** Admin sign-in attempts (passkey ceremonies, sign-in and enrollment links) from one address: a person signs in a
   *  few times a day; more is someone guessing. */
  'admin-sign-in': { max: 20, periodMs: 15 * MINUTE },
  /** Everything else, 404s and 405s included: nothing a client needs often. */
  other: { max: 120, periodMs: MINUTE },
} as const satisfies Record<string, RateBudget>;

export type BudgetName = keyof typeof RATE_LIMIT_DEFAULTS;

/** RATE_LIMITS read: every budget, and the trusted agent platforms' budgets. */
export interface RateLimitBudgets {
  budgets: Readonly<Record<BudgetName, RateBudget>>;
  /** `mcp-per-profile[URL]` entries by profile URL (as `new URL()` writes it): they replace mcp-per-profile's budget. */
  agentProfiles: ReadonlyMap<string, RateBudget>;
}

/** A DNS host name: labels of letters, digits and inner hyphens, at most 253 characters. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable}: ${problem}`);
  }
}

function approvalProofMode(env: NodeJS.ProcessEnv): ApprovalProofMode {
  const raw = env.APPROVAL_PROOF?.trim() || 'passkey-or-code';
  const mode = APPROVAL_PROOF_MODES.find((m) => m === raw);
  if (!mode) throw new ConfigError('APPROVAL_PROOF', `expected one of ${APPROVAL_PROOF_MODES.join(', ')}, got "${raw.slice(0, 40)}"`);
  return mode;
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

/** A display name before a configured address: one line of text a header can carry without quoting. */
const DISPLAY_NAME: TextRule = { max: 100, lines: 'single' };

/**
 * A mailbox: `name@host` or `Name <name@host>`, the address by the one email rule (parseMailbox, the mailer's), the
 * name one line without quotes, brackets or characters that reorder text (a header must never be injected).
 */
function mailbox(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const bracketed = /^([^<>]*)<([^<>]*)>$/.exec(raw);
  const displayName = bracketed?.[1]?.trim() ?? '';
  const address = parseMailbox(bracketed ? bracketed[2]! : raw);
  if (address === undefined || /["@]/.test(displayName) || textFault(displayName, DISPLAY_NAME) !== undefined || (bracketed && displayName === '')) {
    // The value is not repeated: it is an address, and the line goes to logs.
    throw new ConfigError(name, 'expected one address such as orders@example.com or "Store <orders@example.com>", on one line');
  }
  return bracketed ? `${displayName} <${address}>` : address;
}

/** One line of the merchant's text (name, description, address line): no control, bidi or invisible characters. */
function merchantText(name: string, value: string, max: number, what: string): void {
  const fault = textFault(value, { max, lines: 'single' });
  if (fault) throw new ConfigError(name, `${what}: it ${textFaultSentence(fault, { max, lines: 'single' })}`);
}

/** The address alone of a mailbox (`Store <orders@example.com>` → `orders@example.com`). */
function bareAddress(mailbox: string): string {
  return /<([^>]+)>\s*$/.exec(mailbox)?.[1]?.trim() ?? mailbox.trim();
}

function smtpUrlOrThrow(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL', 'expected an smtp:// or smtps:// URL such as smtps://user:password@smtp.example.com');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', `expected smtp:// or smtps://, got ${url.protocol}//`);
  if (!url.hostname) throw new ConfigError('SMTP_URL', 'the URL names no host');
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

/** REDIS_URL: redis:// or rediss:// (TLS), with a host; the message never repeats a password the URL may hold. */
function redisUrlOrThrow(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL', 'expected a redis:// or rediss:// URL such as redis://127.0.0.1:6379');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError('REDIS_URL', `expected redis:// or rediss://, got ${url.protocol}//`);
  if (!url.hostname) throw new ConfigError('REDIS_URL', 'the URL names no host');
}

/** A duration: seconds, or a number with s, m or h ("900", "15m", "6h"). */
function duration(env: NodeJS.ProcessEnv, name: string, fallbackSeconds: number, minSeconds: number, maxSeconds: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallbackSeconds;
  const match = /^(\d{1,9})(s|m|h)?$/.exec(raw);
  const seconds = match ? Number(match[1]) * { s: 1, m: 60, h: 3600 }[(match[2] ?? 's') as 's' | 'm' | 'h'] : Number.NaN;
  if (!(seconds >= minSeconds && seconds <= maxSeconds)) {
    throw new ConfigError(name, `expected a duration from ${minSeconds} s to ${maxSeconds / 3600} h such as 900, 15m or 6h, got "${raw}"`);
  }
  return seconds;
}

/** TAX_RATES: "CA=7.25,NY=4" (percent, up to two decimals) -> basis points by state code. */
function taxRates(env: NodeJS.ProcessEnv): Record<string, number> {
  const rates: Record<string, number> = {};
  for (const entry of (env.TAX_RATES ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const match = /^([A-Za-z]{2})\s*=\s*(\d{1,2})(?:\.(\d{1,2}))?$/.exec(entry);
    if (!match || !US_REGIONS.has(match[1]!.toUpperCase())) {
      throw new ConfigError('TAX_RATES', `expected STATE=PERCENT entries such as CA=7.25, got "${entry.slice(0, 40)}"`);
    }
    rates[match[1]!.toUpperCase()] = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  }
  return rates;
}

const RATE_UNITS: Record<string, number> = { s: SECOND, min: MINUTE, h: HOUR };
/** One RATE_LIMITS entry: `name=N/unit`, or `mcp-per-profile[URL]=N/unit` (the URL may hold brackets: an IPv6 host). */
const RATE_LIMIT_ENTRY = /^([a-z-]+)(?:\[(.+)\])?=(\d{1,9})\/(s|min|h)$/;

/**
 * RATE_LIMITS: comma-separated entries over the defaults, e.g. "cart-write=6000/min,search=600/min" and, for a
 * trusted agent platform, "mcp-per-profile[https://platform.example/profile]=6000/min". Commas inside an entry's
 * brackets belong to its URL.
 */
function rateLimitBudgets(env: NodeJS.ProcessEnv): RateLimitBudgets {
  const budgets: Record<BudgetName, RateBudget> = { ...RATE_LIMIT_DEFAULTS };
  const agentProfiles = new Map<string, RateBudget>();
  for (const entry of (env.RATE_LIMITS ?? '').split(/,(?![^[]*\])/).map((e) => e.replace(/\s+/g, '')).filter(Boolean)) {
    const match = RATE_LIMIT_ENTRY.exec(entry);
    if (!match) throw new ConfigError('RATE_LIMITS', `expected entries such as cart-write=120/min (per s, min or h), got "${entry.slice(0, 80)}"`);
    const [, name = '', url, max = '', unit = ''] = match;
    if (!Object.hasOwn(RATE_LIMIT_DEFAULTS, name)) {
      throw new ConfigError('RATE_LIMITS', `no budget is named "${name.slice(0, 40)}"; the budgets are ${Object.keys(RATE_LIMIT_DEFAULTS).join(', ')}`);
    }
    const budget = { max: Number(max), periodMs: RATE_UNITS[unit]! };
    if (budget.max < 1) throw new ConfigError('RATE_LIMITS', `a budget allows at least one request, got "${entry.slice(0, 80)}"`);
    if (url === undefined) budgets[name as BudgetName] = budget;
    else if (name !== 'mcp-per-profile') throw new ConfigError('RATE_LIMITS', `only mcp-per-profile takes a profile URL in brackets, got "${entry.slice(0, 80)}"`);
    else agentProfiles.set(agentProfileUrl(url), budget);
  }
  return { budgets, agentProfiles };
}

/** A trusted agent profile's URL, as the rate limits compare it (`new URL()`'s form). */
function agentProfileUrl(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ConfigError('RATE_LIMITS', `expected an agent profile's http(s) URL in mcp-per-profile[…], got "${raw.slice(0, 80)}"`);
  }
  return url.href;
}

/** The names TRUST_PROXY accepts besides addresses, as the ranges they stand for. */
const PROXY_RANGE_NAMES: Record<string, string[]> = { loopback: ['127.0.0.0/8', '::1/128'] };

/** TRUST_PROXY: "loopback", "10.0.0.1", "10.0.0.0/8,fd00::/8" -> CIDRs; "" or "none" -> none. */
function trustedProxies(env: NodeJS.ProcessEnv): string[] {
  const entries = (env.TRUST_PROXY ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
  if (entries.length === 1 && entries[0] === 'none') return [];
  return entries.flatMap((entry) => {
    const named = PROXY_RANGE_NAMES[entry];
    if (named) return named;
    try {
      // node:net is strict (no `127.1` or octal forms); ipaddr.js then reads the range.
      if (isIP(entry.split('/')[0]!) === 0) throw new Error('not an address');
      const [address, prefix] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), isIP(entry) === 4 ? 32 : 128];
      return [`${address.toString()}/${prefix}`];
    } catch {
      throw new ConfigError('TRUST_PROXY', `expected comma-separated IP addresses or CIDRs (10.0.0.0/8), or loopback, got "${entry.slice(0, 60)}"`);
    }
  });
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name]?.trim() || fallback;
  const value = values.find((v) => v === raw);
  if (!value) throw new ConfigError(name, `expected one of ${values.join(', ')}, got "${raw.slice(0, 40)}"`);
  return value;
}

/** A secret: its expected prefix and visible ASCII only; the message never repeats the value. */
function secret(env: NodeJS.ProcessEnv, name: string, prefixes: readonly string[], example: string): string {
  const raw = env[name]?.trim() ?? '';
  if (raw === '') throw new ConfigError(name, `required when PAYMENT_PROVIDER=stripe (${example})`);
  if (!prefixes.some((prefix) => raw.startsWith(prefix)) || !/^[\x21-\x7e]{8,255}$/.test(raw)) {
    throw new ConfigError(name, `expected a key starting with ${prefixes.join(' or ')} (${example}), visible characters only`);
  }
  return raw;
}

/** STRIPE_API_URL: an http(s) origin, parsed into the host, port and protocol the SDK takes. */
function stripeApi(env: NodeJS.ProcessEnv): Pick<StripeConfig, 'apiUrl' | 'host' | 'port' | 'protocol'> {
  const apiUrl = absoluteHttpUrl('STRIPE_API_URL', env.STRIPE_API_URL?.trim() || 'https://api.stripe.com');
  const url = new URL(apiUrl);
  if (url.pathname !== '/' || url.username || url.password) throw new ConfigError('STRIPE_API_URL', `expected an origin such as https://api.stripe.com, with no path or credentials, got "${apiUrl.slice(0, 80)}"`);
  const protocol = url.protocol === 'https:' ? 'https' : 'http';
  return { apiUrl, host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80, protocol };
}

/** PAYMENT_INSTRUCTIONS: the merchant's text, several lines allowed, checked by the fields' rule; `\n` typed in an env file is a line break. */
function paymentInstructions(env: NodeJS.ProcessEnv): { instructions: string; instructionsSet: boolean } {
  const raw = (env.PAYMENT_INSTRUCTIONS ?? '').replace(/\\n/g, '\n').replace(/\r\n?/g, '\n').trim();
  if (raw === '') return { instructions: DEFAULT_PAYMENT_INSTRUCTIONS, instructionsSet: false };
  const rule: TextRule = { max: PAYMENT_INSTRUCTIONS_MAX, lines: 'multi' };
  const fault = textFault(raw, rule);
  if (fault) throw new ConfigError('PAYMENT_INSTRUCTIONS', `how a buyer pays, at most ${PAYMENT_INSTRUCTIONS_MAX} characters: it ${textFaultSentence(fault, rule)}`);
  return { instructions: raw, instructionsSet: true };
}

function paymentConfig(env: NodeJS.ProcessEnv): PaymentConfig {
  const provider = oneOf(env, 'PAYMENT_PROVIDER', PAYMENT_PROVIDERS, 'manual');
  // Read whatever the provider (so --help's list is what is read), checked only when Stripe is the provider.
  const stripeEnv = { STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET: env.STRIPE_WEBHOOK_SECRET, STRIPE_API_URL: env.STRIPE_API_URL };
  return {
    provider,
    ...paymentInstructions(env),
    dueDays: integer(env, 'PAYMENT_DUE_DAYS', DEFAULT_PAYMENT_DUE_DAYS, 1, 365),
    captureOn: oneOf(env, 'CAPTURE_ON', CAPTURE_ON, 'fulfillment'),
    stripe:
      provider === 'stripe'
        ? {
            secretKey: secret(stripeEnv, 'STRIPE_SECRET_KEY', ['sk_', 'rk_'], 'sk_test_… or sk_live_… from the Stripe dashboard'),
            webhookSecret: secret(stripeEnv, 'STRIPE_WEBHOOK_SECRET', ['whsec_'], "whsec_…, the webhook endpoint's signing secret"),
            ...stripeApi(stripeEnv),
          }
        : undefined,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  // An IPv6 address may come bracketed as in a URL ([::1]); the listener takes it bare.
  const host = ((env.HOST ?? '').trim() || '0.0.0.0').replace(/^\[([0-9a-f:.]+)\]$/i, '$1');
  if (!isIP(host) && !HOST_NAME.test(host)) {
    throw new ConfigError('HOST', `expected an IP address (0.0.0.0, ::, 127.0.0.1) or a host name (localhost), got "${host.slice(0, 80)}"`);
  }
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
  const rateLimits = rateLimitBudgets(env);
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl !== undefined) redisUrlOrThrow(redisUrl);
  const redisKeyPrefix = env.REDIS_KEY_PREFIX || 'storefront:';
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN', 'expected 16 to 256 visible ASCII characters, no spaces');
  }
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', `expected 1 to 64 of A-Z a-z 0-9 : _ . -, got "${redisKeyPrefix.slice(0, 80)}"`);
  }
  const mcpAllowedHosts = (env.MCP_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const badHost = mcpAllowedHosts.find((h) => !/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/.test(h));
  if (badHost) throw new ConfigError('MCP_ALLOWED_HOSTS', `expected host or host:port entries, got "${badHost}"`);
  const trustProxy = trustedProxies(env);
  const allowInsecureProfiles = flag(env, 'UCP_ALLOW_INSECURE_PROFILES', false);
  const storeName = (env.STORE_NAME ?? '').trim() || 'Storefront';
  merchantText('STORE_NAME', storeName, 100, 'one line of text, at most 100 characters');
  const storeDescription = (env.STORE_DESCRIPTION ?? '').trim() || `${storeName} is an online store.`;
  merchantText('STORE_DESCRIPTION', storeDescription, 300, 'one line of text, at most 300 characters');
  const storeAddress = (env.STORE_ADDRESS ?? '')
    .split(';')
    .map((line) => line.trim())
    .filter(Boolean);
  if (storeAddress.length > 6) throw new ConfigError('STORE_ADDRESS', 'at most 6 lines separated by ";", each at most 100 characters of text');
  for (const line of storeAddress) merchantText('STORE_ADDRESS', line, 100, 'at most 6 lines separated by ";", each at most 100 characters of text');
  const storeTimeZone = timeZone(env);
  const subscriptionNoticeDays = integer(env, 'SUBSCRIPTION_NOTICE_DAYS', 3, 1, 28);
  const policies = Object.fromEntries(
    Object.entries(POLICY_VARIABLES).map(([kind, variable]) => {
      const raw = env[variable]?.trim();
      return [kind, raw ? absoluteHttpUrl(variable, raw) : `${baseUrl}/policies/${kind.replace(/_/g, '-')}`];
    }),
  ) as Record<PolicyKind, string>;
  const checkout: CheckoutConfig = {
    ttlSeconds: duration(env, 'CHECKOUT_TTL', 6 * 3600, 60, 30 * 24 * 3600),
    approvalTtlSeconds: duration(env, 'APPROVAL_TTL', 15 * 60, 30, 24 * 3600),
    standardShippingCents: integer(env, 'SHIPPING_STANDARD_CENTS', 500, 0, 1_000_000),
    expressShippingCents: integer(env, 'SHIPPING_EXPRESS_CENTS', 1500, 0, 1_000_000),
    freeShippingOverCents: integer(env, 'FREE_SHIPPING_OVER_CENTS', 5000, 0, 100_000_000),
    taxRatesBps: taxRates(env),
    policies,
    approvalProof: approvalProofMode(env),
  };
  const payment = paymentConfig(env);
  const smtpUrl = env.SMTP_URL?.trim() || undefined;
  if (smtpUrl !== undefined) smtpUrlOrThrow(smtpUrl);
  const defaultFrom = `${storeName.replace(/[^\p{L}\p{N} .'&-]/gu, '').trim() || 'Storefront'} <orders@${new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').replace(/:/g, '-')}>`;
  const mail: MailConfig = {
    smtpUrl,
    from: mailbox(env, 'MAIL_FROM') ?? defaultFrom,
    merchantEmail: mailbox(env, 'MERCHANT_EMAIL'),
    dir: path.join(dataDir, 'mail'),
  };
  const storeContactEmail = bareAddress(mailbox(env, 'STORE_CONTACT_EMAIL') ?? mail.merchantEmail ?? mail.from);
  const outbox: OutboxConfig = {
    leaseSeconds: duration(env, 'OUTBOX_LEASE', 60, 5, 3600),
    retryBaseSeconds: duration(env, 'OUTBOX_RETRY_BASE', 10, 1, 3600),
    webhookDeadlineSeconds: 24 * 3600,
    mailDeadlineSeconds: 3 * 24 * 3600,
  };
  const signingKey = env.SIGNING_KEY?.trim() || undefined;
  return {
    port,
    host,
    baseUrl,
    dataDir,
    databaseUrl,
    logLevel,
    cartMaxLineQuantity,
    rateLimit,
    rateLimits,
    redisUrl,
    redisKeyPrefix,
    metricsToken,
    mcpAllowedHosts,
    trustProxy,
    allowInsecureProfiles,
    storeName,
    storeDescription,
    storeContactEmail,
    storeAddress,
    storeTimeZone,
    subscriptionNoticeDays,
    checkout,
    payment,
    mail,
    outbox,
    signingKey,
  };
}

/** STORE_TIMEZONE: an IANA zone name Intl knows (Europe/Berlin, America/New_York), or UTC. */
function timeZone(env: NodeJS.ProcessEnv): string {
  const raw = env.STORE_TIMEZONE?.trim() || 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw new ConfigError('STORE_TIMEZONE', `expected an IANA time zone such as Europe/Berlin or America/New_York, got "${raw.slice(0, 60)}"`);
  }
}
