/**
 * What `storefront serve` prints on a terminal once it listens: where the shop, its JSON, the commerce endpoint, the
 * approval pages and the admin are, how the first owner is made (and how staff sign in where no passkey can exist),
 * which catalog it serves, which database it keeps and where its mail goes. Off a terminal (a supervisor, a
 * container's log) only the JSON log lines are written. Commands are named as the merchant types them here
 * (src/cli/command-name.ts): `npm run storefront -- …` in a checkout, `storefront …` where the package is installed.
 * Every value is inert on a terminal (src/cli/terminal-text.ts): a path or a name cannot steer it.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import type { CatalogSnapshot } from '../catalog/catalog.js';
import { demoCatalog } from '../catalog/demo-catalog.js';
import type { Config } from '../config.js';
import { MCP_PATH, PROFILE_PATH } from '../ucp/protocol.js';
import { storefrontCommand } from './command-name.js';
import { inertLine } from './terminal-text.js';

/** Whether the catalog served is exactly the demo catalog (its published products, by handle). */
function isDemoCatalog(snapshot: CatalogSnapshot): boolean {
  const demo = demoCatalog.products.filter((p) => p.published !== false).map((p) => p.handle).sort();
  const served = snapshot.products.map((p) => p.handle).sort();
  return demo.length === served.length && demo.every((handle, i) => handle === served[i]);
}

function databaseOf(config: Config): string {
  if (!config.databaseUrl) return `embedded PostgreSQL in ${config.dataDir}`;
  try {
    const url = new URL(config.databaseUrl);
    return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname.length > 1 ? url.pathname : ''}`;
  } catch {
    return 'PostgreSQL';
  }
}

/**
 * Where mail goes: the SMTP server (its host and port, never the URL's user or password), or the folder the `.eml`
 * files are written to, relative to where the store was started when it is under it (`data/mail`).
 */
function mailOf(config: Config): string {
  const { smtpUrl, dir, merchantEmail } = config.mail;
  const newOrders = merchantEmail ? '' : '; MERCHANT_EMAIL unset: no mail to you of new orders';
  if (smtpUrl) {
    try {
      const url = new URL(smtpUrl);
      return `through the SMTP server ${url.hostname}${url.port ? `:${url.port}` : ''}${newOrders}`;
    } catch {
      return `through SMTP_URL's server${newOrders}`;
    }
  }
  const relative = path.relative(process.cwd(), dir);
  const shown = relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : dir;
  return `.eml files in ${shown}${path.sep} (SMTP_URL unset)${newOrders}`;
}

/** Whether BASE_URL's host is an IP address, where no passkey can be made (WebAuthn binds one to a host name). */
const baseIsIpAddress = (config: Config) => isIP(new URL(config.baseUrl).hostname.replace(/^\[|\]$/g, '')) !== 0;

export interface BannerOptions {
  /** How the merchant runs the CLI here: `npm run storefront --` in a checkout, `storefront` installed (by default, as found). */
  command?: string;
  /** Whether the store has an owner already: the banner then says how to add staff, not how to make the first owner. */
  hasOwner?: boolean;
}

export function startBanner(config: Config, snapshot: CatalogSnapshot, options: BannerOptions = {}): string {
  const base = config.baseUrl;
  const cli = options.command ?? storefrontCommand();
  const products = snapshot.products.length;
  const catalog = `${products} ${products === 1 ? 'product' : 'products'} in ${snapshot.collections.length} collections${
    isDemoCatalog(snapshot) ? ` (the demo catalog: \`${cli} import FILE\` replaces it)` : ''
  }`;
  const rows = [
    ['Shop', `${base}/`],
    ['Storefront JSON', `${base}/products.json, ${base}/cart.js`],
    ['Agents (MCP)', `${base}${MCP_PATH} (profile: ${base}${PROFILE_PATH})`],
    ['Approvals', `${base}/checkout/approve/… (each checkout's link, for its buyer)`],
    ['Admin', `${base}/admin`],
    options.hasOwner
      ? ['Staff', `${cli} staff add EMAIL [--role owner|staff]; ${cli} staff lists them`]
      : ['First owner', `${cli} staff add EMAIL --role owner${baseIsIpAddress(config) ? '' : ' (prints a 30-minute link where they make their passkey)'}`],
    ...(baseIsIpAddress(config)
      ? [['Staff sign-in', `no passkey can exist where BASE_URL is an IP address: \`${cli} staff sign-in-link EMAIL\` prints a 5-minute link`]]
      : []),
    ['Catalog', catalog],
    ['Database', databaseOf(config)],
    ['Payments', paymentsOf(config)],
    ['Mail', mailOf(config)],
    ['Times', `${config.storeTimeZone} (STORE_TIMEZONE)`],
  ];
  const width = Math.max(...rows.map(([label]) => label!.length)) + 2;
  return [
    inertLine(`${config.storeName} is open`),
    ...rows.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${inertLine(value!)}`),
    ...paymentWarnings(config),
    'Stop with Ctrl+C.',
  ].join('\n');
}

function paymentsOf(config: Config): string {
  const { payment } = config;
  if (payment.provider === 'stripe') return `Stripe (cards; the hold is captured at ${payment.captureOn === 'fulfillment' ? 'the first shipment' : payment.captureOn === 'approval' ? 'the approval' : "the merchant's command"})`;
  return `manual: buyers pay by the payment instructions within ${payment.dueDays} ${payment.dueDays === 1 ? 'day' : 'days'}`;
}

/** What the merchant should set before taking real orders. */
function paymentWarnings(config: Config): string[] {
  if (config.payment.provider !== 'manual' || config.payment.instructionsSet) return [];
  return [
    'Warning: PAYMENT_INSTRUCTIONS is not set, so buyers are told to reply to their confirmation email for payment details.',
    '  Set it to how buyers pay you (bank details, pay on delivery…) before taking real orders.',
  ];
}
