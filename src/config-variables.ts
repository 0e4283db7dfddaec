/**
 * Every variable the store reads from its environment, with its default and what it does: `storefront --help` lists
 * them from here (test/core/config-variables.test.ts checks that loadConfig reads exactly these).
 * docs/configuration.md says the same at more length; the README's table is the short form.
 */
export interface ConfigVariable {
  name: string;
  default: string;
  meaning: string;
}

export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  { name: 'PORT', default: '3000', meaning: 'listening port' },
  { name: 'HOST', default: '0.0.0.0', meaning: 'listening address (an IP address or a host name)' },
  { name: 'BASE_URL', default: 'http://localhost:PORT', meaning: 'the start of every absolute URL the store emits' },
  { name: 'DATA_DIR', default: './data', meaning: 'where the embedded database keeps its files (and mail without SMTP_URL)' },
  { name: 'DATABASE_URL', default: 'unset', meaning: 'postgres://…: a PostgreSQL server instead of the embedded database' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'CART_MAX_LINE_QUANTITY', default: '10', meaning: 'the most units of one line a cart may hold' },
  { name: 'RATE_LIMIT', default: 'on', meaning: 'per-client request budgets; off behind a proxy that limits instead' },
  { name: 'RATE_LIMITS', default: 'none', meaning: 'budgets over the defaults, e.g. cart-write=6000/min,mcp-per-profile[URL]=6000/min' },
  { name: 'REDIS_URL', default: 'unset', meaning: 'redis://…: rate-limit counters shared by every instance' },
  { name: 'REDIS_KEY_PREFIX', default: 'storefront:', meaning: 'what every key this store writes to Redis starts with' },
  { name: 'METRICS_TOKEN', default: 'unset', meaning: 'the bearer token that reads /metrics from anywhere (unset: loopback only)' },
  { name: 'TRUST_PROXY', default: 'none', meaning: 'proxies whose X-Forwarded-For is believed: IPs or CIDRs, or loopback' },
  { name: 'MCP_ALLOWED_HOSTS', default: 'none', meaning: 'extra host[:port] values the commerce endpoint accepts' },
  { name: 'UCP_ALLOW_INSECURE_PROFILES', default: 'off', meaning: 'agent profiles over plain http from loopback (tests only)' },
  { name: 'STORE_NAME', default: 'Storefront', meaning: "the store's name on its pages, mails, MCP instructions and OpenAPI" },
  { name: 'STORE_DESCRIPTION', default: 'STORE_NAME is an online store.', meaning: 'what the store sells, in a sentence or two' },
  { name: 'STORE_CONTACT_EMAIL', default: "MERCHANT_EMAIL, else MAIL_FROM's", meaning: 'where shoppers and buyers reach the merchant' },
  { name: 'STORE_TIMEZONE', default: 'UTC', meaning: 'the time zone of times on pages, mails and the admin (e.g. Europe/Berlin)' },
  { name: 'STORE_ADDRESS', default: 'none', meaning: "the merchant's postal address, lines separated by ;" },
  { name: 'CHECKOUT_TTL', default: '6h', meaning: 'how long a checkout lives (seconds, or 15m, 6h)' },
  { name: 'APPROVAL_TTL', default: '15m', meaning: "how long the buyer's approval link works" },
  { name: 'APPROVAL_PROOF', default: 'passkey-or-code', meaning: 'what the buyer proves: passkey-or-code, code, or link (development only)' },
  { name: 'SHIPPING_STANDARD_CENTS', default: '500', meaning: 'standard shipping, in cents' },
  { name: 'SHIPPING_EXPRESS_CENTS', default: '1500', meaning: 'express shipping, in cents' },
  { name: 'FREE_SHIPPING_OVER_CENTS', default: '5000', meaning: 'standard shipping is free from this subtotal (0: never)' },
  { name: 'TAX_RATES', default: 'none', meaning: 'sales tax by US state in percent, e.g. CA=7.25,NY=4' },
  { name: 'POLICY_TERMS_URL', default: '/policies/terms-of-service', meaning: 'the terms of service buyers and agents are shown' },
  { name: 'POLICY_PRIVACY_URL', default: '/policies/privacy-policy', meaning: 'the privacy policy' },
  { name: 'POLICY_REFUND_URL', default: '/policies/refund-policy', meaning: 'the refund policy' },
  { name: 'POLICY_SHIPPING_URL', default: '/policies/shipping-policy', meaning: 'the shipping policy' },
  { name: 'SUBSCRIPTION_NOTICE_DAYS', default: '3', meaning: "days before a subscription's delivery its renewal is mailed for approval" },
  { name: 'PAYMENT_PROVIDER', default: 'manual', meaning: "who holds the buyer's money: manual (instructions) or stripe" },
  { name: 'PAYMENT_INSTRUCTIONS', default: 'reply to the confirmation', meaning: 'manual: how buyers pay (bank details, pay on delivery); \\n for a new line' },
  { name: 'PAYMENT_DUE_DAYS', default: '7', meaning: 'manual: days after the order a payment is due' },
  { name: 'CAPTURE_ON', default: 'fulfillment', meaning: "stripe: when the card's hold is captured: fulfillment, approval or manual" },
  { name: 'STRIPE_SECRET_KEY', default: 'unset', meaning: 'stripe: the secret key, sk_test_… or sk_live_… (required with stripe)' },
  { name: 'STRIPE_WEBHOOK_SECRET', default: 'unset', meaning: "stripe: the webhook endpoint's signing secret, whsec_… (required with stripe)" },
  { name: 'STRIPE_API_URL', default: 'https://api.stripe.com', meaning: "stripe: where Stripe's API is (a stand-in in tests)" },
  { name: 'SMTP_URL', default: 'unset', meaning: 'smtp:// or smtps://: the mail server (unset: .eml files in DATA_DIR/mail)' },
  { name: 'MAIL_FROM', default: "STORE_NAME <orders@BASE_URL's host>", meaning: 'the sender of every mail' },
  { name: 'MERCHANT_EMAIL', default: 'unset', meaning: 'who is mailed when an order is placed' },
  { name: 'SIGNING_KEY', default: 'generated', meaning: "the ES256 key (JWK or PKCS#8 PEM) signing order webhooks" },
  { name: 'OUTBOX_LEASE', default: '60s', meaning: 'how long an instance holds a message it is sending' },
  { name: 'OUTBOX_RETRY_BASE', default: '10s', meaning: 'the first wait after a failed delivery (doubling, up to an hour)' },
];

/** The variables as `storefront --help` prints them: one per line, name, default, meaning. */
export function configVariablesHelp(): string {
  const width = Math.max(...CONFIG_VARIABLES.map((v) => v.name.length)) + 2;
  return CONFIG_VARIABLES.map((v) => `  ${v.name.padEnd(width)}${v.meaning} (default: ${v.default})`).join('\n');
}
