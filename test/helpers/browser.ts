/** What the browser tests share: Debian's Chromium (through playwright-core) and a free loopback port to serve on. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { dropTestDatabases } from './store.js';

/** Debian's chromium package installs here (scripts/start-services.sh installs it); CHROMIUM_PATH names another. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Chromium, headless; its absence is a failure that says so, never a skipped test. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: the browser tests need it (apt-get install chromium, or set CHROMIUM_PATH).`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/**
 * One Chromium for a test file: launched before its tests (`opened` is told), closed after them, and the file's test
 * databases dropped then.
 */
export function oneChromiumForTheFile(opened: (browser: Browser) => void): void {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launchChromium();
    opened(browser);
  });
  after(async () => {
    await browser?.close();
    await dropTestDatabases();
  });
}

/**
 * A page of `context` with a virtual WebAuthn authenticator (a platform passkey that verifies its user and answers at
 * once) and the console errors it logs, a script the page's CSP refused among them.
 */
export async function pageWithPasskeys(context: BrowserContext): Promise<{ page: Page; errors: string[]; cdp: CDPSession; authenticatorId: string }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { page, errors, cdp, authenticatorId };
}

/** A loopback port free now, so a store can be configured with its BASE_URL before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page (the test injects it), as "rule: target" lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
