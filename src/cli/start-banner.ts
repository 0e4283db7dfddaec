/**
 * What `storefront serve` prints on a terminal once it listens: where the shop, its JSON, the commerce endpoint and
 * the approval pages are, which catalog it serves and which database it keeps. Off a terminal (a supervisor, a
 * container's log) only the JSON log lines are written.
 */
import type { CatalogSnapshot } from '../catalog/catalog.js';
import { demoCatalog } from '../catalog/demo-catalog.js';
import type { Config } from '../config.js';
import { MCP_PATH, PROFILE_PATH } from '../ucp/protocol.js';

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

export function startBanner(config: Config, snapshot: CatalogSnapshot): string {
  const base = config.baseUrl;
  const products = snapshot.products.length;
  const catalog = `${products} ${products === 1 ? 'product' : 'products'} in ${snapshot.collections.length} collections${
    isDemoCatalog(snapshot) ? ' (the demo catalog: `storefront import FILE` replaces it)' : ''
  }`;
  const rows = [
    ['Shop', `${base}/`],
    ['Storefront JSON', `${base}/products.json, ${base}/cart.js`],
    ['Agents (MCP)', `${base}${MCP_PATH} (profile: ${base}${PROFILE_PATH})`],
    ['Approvals', `${base}/checkout/approve/… (each checkout's link, for its buyer)`],
    ['Catalog', catalog],
    ['Database', databaseOf(config)],
  ];
  rows.push(['Payments', paymentsOf(config)]);
  const width = Math.max(...rows.map(([label]) => label!.length)) + 2;
  return [
    `${config.storeName} is open`,
    ...rows.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`),
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
