#!/usr/bin/env node
// The buyer, for the ucp-cli check: an `--on-escalation` hook. @shopify/ucp-cli hands it the escalation payload
// on stdin ({status, url, reason, business, operation}); this opens `url` (the store's approval page) in
// Debian's headless Chromium and passes the buyer's proof as a first-time buyer would (the store's default,
// APPROVAL_PROOF=passkey-or-code, offers no passkey to an email that has none): it clicks "Email me a code", reads
// the code from the mail the store wrote (no SMTP_URL: each mail is an .eml file in DATA_DIR/mail, the directory
// named by STOREFRONT_MAIL_DIR; the code begins its Subject), types it, clicks Approve and waits for the order page.
// Writes what happened as JSON to the file named by the first argument. Exit 0 when the order page was reached.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
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
const mailDir = process.env.STOREFRONT_MAIL_DIR;
if (!mailDir) {
  report({ approved: false, problem: "STOREFRONT_MAIL_DIR is not set: the hook cannot read the store's code mail", payload });
  process.exit();
}

/** The store's mail files (complete ones: a file being written is a dot-file until it is renamed). */
const mailFiles = () => {
  try {
    return readdirSync(mailDir).filter((name) => name.endsWith('.eml') && !name.startsWith('.'));
  } catch (error) {
    if (error?.code === 'ENOENT') return [];
    throw error;
  }
};

/** Decodes RFC 2047 encoded words (=?charset?B|Q?...?=), as a long or non-ASCII subject may be written. */
const decodeWords = (text) =>
  text.replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=\s*/g, (_word, _charset, encoding, data) =>
    encoding.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(data.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
  );

/** The Subject of an .eml file, unfolded and decoded. */
const subjectOf = (file) => {
  const text = readFileSync(file, 'utf8');
  const headers = text.split(/\r?\n\r?\n/, 1)[0].replace(/\r?\n[ \t]+/g, ' ');
  const line = headers.split(/\r?\n/).find((header) => /^subject:/i.test(header));
  return line ? decodeWords(line.replace(/^subject:\s*/i, '')).trim() : '';
};

/** The code of the newest code mail that was not there before `known`; waits for it a little. */
async function newestCode(known, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const fresh = mailFiles()
      .filter((name) => !known.has(name))
      .map((name) => ({ file: path.join(mailDir, name), name }))
      .sort((a, b) => statSync(b.file).mtimeMs - statSync(a.file).mtimeMs || b.name.localeCompare(a.name));
    for (const { file, name } of fresh) {
      const subject = subjectOf(file);
      const code = /^(\d{6})\b/.exec(subject)?.[1];
      if (code) return { code, file: name, subject: subject.replace(code, '######') };
    }
    if (Date.now() > deadline) throw new Error(`no new code mail in ${mailDir} after ${timeoutMs} ms (${fresh.length} new file(s))`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const steps = [];
let page;
try {
  page = await browser.newPage();
  const response = await page.goto(payload.url);
  const status = response?.status();
  const sendCode = page.getByRole('button', { name: 'Email me a code' });
  if (status !== 200 || (await sendCode.count()) !== 1) {
    report({ approved: false, problem: `the approval page answered ${status} without one "Email me a code" button`, payload });
  } else {
    steps.push('opened the approval page');
    const known = new Set(mailFiles());
    await Promise.all([page.waitForEvent('load'), sendCode.click()]);
    steps.push('asked for a code');
    const mail = await newestCode(known);
    steps.push(`read the code from ${mail.file} (${mail.subject})`);
    await page.getByLabel('Code from the email').fill(mail.code);
    const approve = page.getByRole('button', { name: /^Approve and place order/ });
    if ((await approve.count()) !== 1) {
      report({ approved: false, problem: 'the approval page shows no "Approve and place order" button beside the code field', steps, payload });
    } else {
      await Promise.all([page.waitForURL(/\/orders\/ord_/, { timeout: 15_000 }), approve.click()]);
      steps.push('typed the code and approved');
      report({ approved: true, payload, orderUrl: page.url(), reason: payload.reason, steps });
    }
  }
} catch (error) {
  // What the page said, if it refused the code (it then shows the approval page again with the reason).
  const said = await page
    ?.locator('#proof-problem')
    .innerText({ timeout: 1_000 })
    .catch(() => undefined);
  report({ approved: false, problem: String(error?.message ?? error).slice(0, 500), ...(said ? { page: said } : {}), steps, payload });
} finally {
  await browser.close();
}
