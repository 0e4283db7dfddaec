/**
 * What the end-to-end browser walks share: a store listening on loopback with its default proof (the buyer asks for
 * a code the store mails to a loopback SMTP server), a browser window that records console errors (a script or
 * style the page's CSP refuses is one), screenshots of a page at a phone's and a desktop's width, the browser
 * checkout's form filled as a buyer fills it, the mailed code typed on the approval page, and what the database
 * then holds (the order, its lines, its checkout's channel, the stock).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig, type Config } from '../../src/config.js';
import { freePort } from './browser.js';
import { PROJECT_ROOT } from './project-root.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from './smtp.js';
import { startTestStore, type Backend, type TestStore } from './store.js';

/** The merchant's identity every page of the walk shows. */
export const MERCHANT = {
  STORE_NAME: 'Fizz & Sons',
  STORE_DESCRIPTION: 'Fizz & Sons sells drink sticks and coffee capsules.',
  STORE_CONTACT_EMAIL: 'help@fizz.example',
} as const;

export interface ListeningShop {
  t: TestStore;
  /** `http://127.0.0.1:PORT`: an IP address, so no passkey is offered and the mailed code is the proof. */
  base: string;
  smtp: TestSmtpServer;
  close(): Promise<void>;
}

/** The store with its default proof (APPROVAL_PROOF unset: passkey or mailed code), listening on loopback and mailing to a loopback SMTP server. */
export async function startListeningShop(backend: Backend, overrides: Partial<Config> = {}): Promise<ListeningShop> {
  const smtp = await startSmtpServer();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off', ...MERCHANT });
  assert.equal(config.checkout.approvalProof, 'passkey-or-code', 'the store runs its default proof');
  const t = await startTestStore(backend, { config: { ...config, mail: { ...config.mail, smtpUrl: smtp.url }, ...overrides } });
  await t.app.listen({ host: '127.0.0.1', port });
  return {
    t,
    base,
    smtp,
    async close() {
      await t.close();
      await smtp.close();
    },
  };
}

export interface BrowserWindow {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  errors: string[];
}

/** A new browser context and page, with or without JavaScript, recording what the console reports as errors. */
export async function openWindow(browser: Browser, options: { javaScriptEnabled: boolean }): Promise<BrowserWindow> {
  const context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // Every page of the walk answers in well under a second: a wait this long means the page went elsewhere.
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`${page.url()}: pageerror: ${error.message}`));
  return { context, page, errors };
}

/** The phone and desktop widths every page is looked at. */
export const SCREEN_WIDTHS = [390, 1280] as const;

const SCREENSHOTS = path.join(PROJECT_ROOT, 'test-output', 'screenshots');

/**
 * Saves the whole page at each width as test-output/screenshots/{folder}/{name}-{width}.png (git-ignored, for a
 * person to review), then puts the window back at the width it had.
 */
export async function saveScreenshots(page: Page, folder: string, name: string): Promise<void> {
  const dir = `${SCREENSHOTS}${folder}/`;
  mkdirSync(dir, { recursive: true });
  const before = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of SCREEN_WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: `${dir}${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize(before);
}

/** Whether the page scrolls sideways at its current width (text or a table wider than a phone's screen). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  return scrollWidth > clientWidth + 1;
}

/** Where a failed walk stood: the page's URL and what it says is wrong (its alerts), for the failure's message. */
export async function whereItStopped(page: Page): Promise<string> {
  const alerts = await page.locator('[role="alert"], .problem').allInnerTexts().catch(() => []);
  return `on ${page.url()}${alerts.length > 0 ? `, saying: ${alerts.map((text) => text.replace(/\s+/g, ' ').trim()).join(' | ')}` : ''}`;
}

/** Clicks what submits or follows and waits for the page it leads to. */
export async function clickAndLoad(page: Page, click: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForEvent('load'), click()]);
}

export interface ShippingBuyer {
  email: string;
  firstName: string;
  lastName: string;
  streetAddress: string;
  line2?: string;
  city: string;
  /** A US state's two-letter code. */
  state: string;
  zip: string;
  /** The shipping method's radio, by its accessible name. */
  shipping: RegExp;
}

export const BUYER: Omit<ShippingBuyer, 'email'> = {
  firstName: 'Ann',
  lastName: 'Lee',
  streetAddress: '1 Main St',
  line2: 'Apt 4',
  city: 'Springfield',
  state: 'IL',
  zip: '62701',
  shipping: /^Standard shipping|^Free standard shipping/,
};

/** Fills the browser checkout's form (email, name, US address, shipping method) as a buyer does. */
export async function fillCheckoutForm(page: Page, buyer: ShippingBuyer): Promise<void> {
  await page.getByLabel('Email', { exact: true }).fill(buyer.email);
  await page.getByLabel('First name', { exact: true }).fill(buyer.firstName);
  await page.getByLabel('Last name', { exact: true }).fill(buyer.lastName);
  await page.getByLabel('Street address', { exact: true }).fill(buyer.streetAddress);
  if (buyer.line2) await page.getByLabel('Apartment, suite, etc. (optional)', { exact: true }).fill(buyer.line2);
  await page.getByLabel('City', { exact: true }).fill(buyer.city);
  await page.getByLabel('State', { exact: true }).selectOption(buyer.state);
  await page.getByLabel('ZIP code', { exact: true }).fill(buyer.zip);
  await page.getByRole('group', { name: 'Shipping method' }).getByRole('radio', { name: buyer.shipping }).check();
}

/** The 6-digit code a code mail's subject begins with. */
function codeOf(mail: ReceivedMail | undefined): string {
  const code = /^(\d{6}) /.exec(mail?.subject ?? '')?.[1];
  assert.ok(code, `a code mail: ${JSON.stringify(mail?.subject)}`);
  return code;
}

/** On the approval page: "Email me a code", the code read from the mail `email` received; the page then shows the code field. */
export async function askForMailedCode(page: Page, smtp: TestSmtpServer, email: string): Promise<string> {
  const before = smtp.messages.length;
  await clickAndLoad(page, () => page.getByRole('button', { name: 'Email me a code' }).click());
  const mail = (await smtp.waitFor(before + 1))[before];
  assert.deepEqual(mail?.envelope.to, [email], 'the code goes to the email the buyer gave');
  return codeOf(mail);
}

/** Types the code and approves; resolves with the order's id once the order page is open. */
export async function approveWithCode(page: Page, code: string): Promise<string> {
  await page.getByLabel('Code from the email').fill(code);
  await Promise.all([page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]+$/), page.getByRole('button', { name: /^Approve and place order/ }).click()]);
  return new URL(page.url()).pathname.split('/').pop()!;
}

export interface PlacedOrder {
  number: number;
  /** The items' total and the order's, in cents. */
  subtotal: number;
  total: number;
  channel: string;
  buyerEmail: string;
  /** The channel of the checkout the order was placed from. */
  checkoutChannel: string;
  /** The cart the checkout was made from, if any. */
  cartToken: string | null;
  lines: { variantId: number; quantity: number; sellingPlanId: number | null }[];
}

/** The order as the database holds it, with its checkout's channel and cart. */
export async function placedOrder(t: TestStore, orderId: string): Promise<PlacedOrder> {
  const [order] = await t.store.db.query<{ number: string; subtotal: number; total: number; channel: string; buyer_email: string; checkout_channel: string; cart_token: string | null }>(
    `select o.number, o.subtotal, o.total, o.channel, o.buyer_email, c.channel as checkout_channel, c.cart_token
       from orders o join checkouts c on c.id = o.checkout_id where o.id = $1`,
    [orderId],
  );
  assert.ok(order, `order ${orderId} is in the database`);
  const lines = await t.store.db.query<{ variant_id: string; quantity: number; selling_plan_id: string | null }>(
    'select variant_id, quantity, selling_plan_id from order_lines where order_id = $1 order by position',
    [orderId],
  );
  return {
    number: Number(order.number),
    subtotal: order.subtotal,
    total: order.total,
    channel: order.channel,
    buyerEmail: order.buyer_email,
    checkoutChannel: order.checkout_channel,
    cartToken: order.cart_token,
    lines: lines.map((line) => ({ variantId: Number(line.variant_id), quantity: line.quantity, sellingPlanId: line.selling_plan_id === null ? null : Number(line.selling_plan_id) })),
  };
}

/** Cents as the pages write them: $24.50. */
export const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** Units on hand of a variant, as the database holds them. */
export async function onHand(t: TestStore, variantId: number): Promise<number> {
  const [row] = await t.store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId]);
  assert.ok(row, `variant ${variantId} has a stock row`);
  return row.on_hand;
}

/** A variant of the seeded catalog by its SKU: its product and the name a cart line gives it ("Product - Variant"). */
export interface CatalogVariant {
  id: number;
  title: string;
  optionValues: string[];
  productTitle: string;
  optionNames: string[];
  handle: string;
  /** The line's name on the cart page and in the controls' accessible names. */
  itemName: string;
}

export function variantBySku(t: TestStore, sku: string): CatalogVariant {
  for (const product of t.store.catalog.snapshot.products) {
    const variant = product.variants.find((v) => v.sku === sku);
    if (!variant) continue;
    return {
      id: variant.id,
      title: variant.title,
      optionValues: variant.optionValues,
      productTitle: product.title,
      optionNames: product.optionNames,
      handle: product.handle,
      itemName: product.optionNames.length === 0 ? product.title : `${product.title} - ${variant.title}`,
    };
  }
  throw new Error(`no variant ${sku} in the catalog`);
}

/**
 * Chooses the variant on a product page as a shopper does: with the shop's script, one select per option (the
 * variant select hidden); without it, the one "Variant" select.
 */
export async function chooseVariant(page: Page, variant: CatalogVariant): Promise<void> {
  const select = page.getByLabel('Variant', { exact: true });
  if (await select.isVisible()) {
    await select.selectOption(String(variant.id));
    return;
  }
  for (const [index, name] of variant.optionNames.entries()) await page.getByLabel(name, { exact: true }).selectOption(variant.optionValues[index]!);
  assert.equal(await select.inputValue(), String(variant.id), 'the option selects chose the variant in the form');
}

/** The cart page's quantity input of a line, by the line's name. */
export const cartQuantityOf = (page: Page, variant: CatalogVariant) => page.getByLabel(`Quantity for ${variant.itemName}`, { exact: true });

/** How many lines the cart page shows: each has one "Remove …" button. */
export const cartLineCount = (page: Page) => page.getByRole('main').getByRole('button', { name: /^Remove / }).count();
