#!/usr/bin/env node
// The buyer, for the ucp-cli check: an `--on-escalation` hook. @shopify/ucp-cli hands it the escalation payload
// on stdin ({status, url, reason, business, operation}); this opens `url` (the store's approval page) in
// Debian's headless Chromium, checks the page shows an Approve button, clicks it and waits for the order page.
// Writes what happened as JSON to the file named by the first argument. Exit 0 when the order page was reached.
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [resultFile] = process.argv.slice(2);
const report = (result) => {
  if (resultFile) writeFileSync(resultFile, JSON.stringify(result));
  process.exitCode = result.approved ? 0 : 1;
};

let input = '';
for await (const chunk of process.stdin) input += chunk;
let payload;
try {
  payload = JSON.parse(input);
} catch {
  report({ approved: false, problem: 'the escalation payload is not JSON', input: input.slice(0, 500) });
  process.exit();
}
if (typeof payload.url !== 'string') {
  report({ approved: false, problem: 'the escalation payload has no url', payload });
  process.exit();
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  const response = await page.goto(payload.url);
  const status = response?.status();
  const approve = page.getByRole('button', { name: /approve/i });
  if (status !== 200 || (await approve.count()) !== 1) {
    report({ approved: false, problem: `the approval page answered ${status} without one Approve button`, payload });
  } else {
    await Promise.all([page.waitForURL(/\/orders\/ord_/, { timeout: 15_000 }), approve.click()]);
    report({ approved: true, payload, orderUrl: page.url(), reason: payload.reason });
  }
} catch (error) {
  report({ approved: false, problem: String(error?.message ?? error).slice(0, 500), payload });
} finally {
  await browser.close();
}
