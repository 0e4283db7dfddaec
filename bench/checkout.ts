/**
 * Checkout benchmark: buyers approving on the approval page. The app runs in a worker thread on a loopback port
 * (on a fresh database of each backend); it prepares APPROVALS checkouts an agent has asked to complete, each for
 * one unit of a stocked variant. This thread opens each approval page (GET: the form and its cookie, not timed),
 * then posts the approvals, CONNECTIONS at a time, and times the posts: each one locks and re-checks the approval,
 * takes stock, places the order, records the payment and writes the outbox row in one transaction. At the end
 * the orders counted must equal the 303 answers, and stock must have gone down by as many units.
 *
 * `proof`: `link` times the transaction alone (APPROVAL_PROOF=link). `code` runs the store as shipped (the mailed
 * code): each buyer first asks for a code (timed apart: one SMTP delivery to a real server on loopback per post),
 * and each approval then carries it, so its time adds the code's own check (a short transaction) to the order's.
 *
 * `payment`: `manual` (the default provider: the post places the order) or `stripe` (PAYMENT_PROVIDER=stripe against
 * the Stripe stand-in of the tests, served by this thread: the post creates the Checkout Session through the official
 * SDK, and the approval page the buyer is sent back to links to it; the buyer's Pay there is the stand-in's, without
 * a browser; the return, a GET, retrieves the session and its PaymentIntent, checks the hold and places the order).
 * An approval with Stripe is timed from its post to the return's 303 to the order page (one more page than the
 * manual provider's: the approval page read between), the stand-in's own work included.
 *
 *   node --import tsx bench/checkout.ts [approvals] [connections] [link|code] [manual|stripe]
 */
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { loadConfig, type ApprovalProofMode } from '../src/config.js';
import { freePort } from '../test/helpers/browser.js';
import { startSmtpServer, type TestSmtpServer } from '../test/helpers/smtp.js';
import { backends, dropTestDatabases, startTestStore, testConfig } from '../test/helpers/store.js';
import { startStripeStandIn, type StripeStandIn } from '../test/helpers/stripe-stand-in.js';

type Backend = 'pglite' | 'postgres';
type Proof = Extract<ApprovalProofMode, 'link' | 'code'>;
type Payment = 'manual' | 'stripe';
/** Where the worker's store finds the stand-in (PAYMENT_PROVIDER=stripe). */
interface StripeAccount {
  apiUrl: string;
  secretKey: string;
}
const BENCH_SKU = 'ESP-RIS-10';
const STOCK = 1_000_000;
const ADDRESS = { firstName: 'Sam', lastName: 'Reed', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };

export interface CheckoutBenchResult {
  backend: Backend;
  proof: Proof;
  payment: Payment;
  /** With the code: codes mailed per second (each post hands one message to the SMTP server), and failures. */
  codesPerSecond?: number;
  approvals: number;
  approvalsPerSecond: number;
  /**
   * Approvals per second of the store's own busy time: its thread's event-loop utilization while the approvals ran
   * (PGlite runs in that thread; a PostgreSQL server's work is its own process's). With Stripe this leaves out the
   * stand-in and the client, which share the machine's cores in this thread.
   */
  approvalsPerStoreSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  ordersPlaced: number;
  unitsTaken: number;
}

type FromServer = { port: number; tokens: string[] } | { codes: Record<string, string> } | { orders: number; onHand: number };

async function serveBenchApp(backendName: Backend, approvals: number, proof: Proof, stripe: StripeAccount | undefined): Promise<void> {
  const backend = backends.find((b) => b.name === backendName)!;
  const base = testConfig();
  const smtp: TestSmtpServer | undefined = proof === 'code' ? await startSmtpServer() : undefined;
  const payment = stripe
    ? loadConfig({ PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: 'whsec_bench', STRIPE_API_URL: stripe.apiUrl }).payment
    : base.payment;
  // The port first: the payment page's success and cancel URLs name the store where it listens (BASE_URL).
  const port = await freePort();
  const t = await startTestStore(backend, {
    config: { baseUrl: `http://127.0.0.1:${port}`, rateLimit: false, logLevel: 'silent', checkout: { ...base.checkout, approvalProof: proof }, mail: { ...base.mail, smtpUrl: smtp?.url }, payment },
  });
  const { store } = t;
  const variant = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === BENCH_SKU)!;
  await store.inventory.setOnHand(store.db, BENCH_SKU, STOCK);
  const tokens: string[] = [];
  for (let i = 0; i < approvals; i++) {
    const created = await store.checkouts.create(
      store.db,
      { lines: [{ variantId: variant.id, quantity: 1 }], buyer: { email: `buyer${i}@example.com` }, destination: ADDRESS, shippingOption: 'standard' },
      'agent',
      'agent',
    );
    const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
    tokens.push(asked.approval!.token);
  }
  await t.app.listen({ port, host: '127.0.0.1' });
  parentPort!.postMessage({ port, tokens } satisfies FromServer);
  if (smtp) {
    // The codes as the buyers read them, by approval link (each checkout has its own buyer).
    await once(parentPort!, 'message');
    const mails = await smtp.waitFor(approvals);
    const codeOf = new Map(mails.map((mail) => [mail.envelope.to[0]!, /^(\d{6}) /.exec(mail.subject ?? '')![1]!]));
    parentPort!.postMessage({ codes: Object.fromEntries(tokens.map((token, i) => [token, codeOf.get(`buyer${i}@example.com`) ?? ''])) } satisfies FromServer);
  }
  await once(parentPort!, 'message');
  const [orders] = await store.db.query<{ n: number }>('select count(*)::int as n from orders');
  const [level] = await store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variant.id]);
  parentPort!.postMessage({ orders: orders!.n, onHand: level!.on_hand } satisfies FromServer);
  await t.close();
  await smtp?.close();
  await dropTestDatabases();
}

interface PreparedForm {
  token: string;
  cookie: string;
  fields: Record<string, string>;
}

async function openPage(origin: string, token: string): Promise<PreparedForm> {
  const response = await fetch(`${origin}/checkout/approve/${token}`);
  const html = await response.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const cookie = (response.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  return { token, cookie, fields: { form_token: field('form_token'), digest: field('digest') } };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

/** Runs `step` once per prepared page, `connections` at a time; the latencies and how many steps failed. */
async function timeSteps(forms: readonly PreparedForm[], connections: number, step: (form: PreparedForm) => Promise<boolean>) {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < forms.length) {
        const form = forms[next++]!;
        const begin = performance.now();
        const ok = await step(form);
        latencies.push(performance.now() - begin);
        if (!ok) failures++;
      }
    }),
  );
  return { latencies: latencies.sort((a, b) => a - b), failures, seconds: (performance.now() - started) / 1000 };
}

/** The page's form posted with `fields`: the answer's status and Location. */
async function postForm(origin: string, form: PreparedForm, fields: Record<string, string>) {
  const response = await fetch(`${origin}/checkout/approve/${form.token}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    body: new URLSearchParams({ ...form.fields, ...fields }).toString(),
  });
  await response.arrayBuffer();
  return { status: response.status, location: response.headers.get('location') ?? '' };
}

/** Posts one form per prepared page, `connections` at a time; the latencies and the answers that were not `expected`. */
function postForms(origin: string, forms: readonly PreparedForm[], connections: number, fields: (form: PreparedForm) => Record<string, string>, expected: number) {
  return timeSteps(forms, connections, async (form) => (await postForm(origin, form, fields(form))).status === expected);
}

/**
 * With Stripe: the post (a 303 to the approval page, which then links to the stand-in's payment page), the page,
 * Pay there (the stand-in's, in this thread), and the buyer's return (a 303 to the order page).
 */
function approveAndPay(origin: string, standIn: StripeStandIn, forms: readonly PreparedForm[], connections: number, fields: (form: PreparedForm) => Record<string, string>) {
  return timeSteps(forms, connections, async (form) => {
    // The proof is taken, and the approval page (303) now links to the payment page.
    const posted = await postForm(origin, form, fields(form));
    if (posted.status !== 303) return false;
    const page = await fetch(new URL(posted.location, origin), { headers: { cookie: form.cookie } });
    const payment = new RegExp(`href="(${standIn.checkoutOrigin}/[^"]+)"`).exec(await page.text())?.[1];
    if (!payment) return false;
    const paid = standIn.pay(payment.split('/').at(-1)!);
    if (paid.status !== 'authorized' || !paid.redirect) return false;
    const back = await fetch(paid.redirect, { redirect: 'manual' });
    await back.arrayBuffer();
    return back.status === 303 && (back.headers.get('location') ?? '').startsWith('/orders/');
  });
}

export async function benchCheckoutApprovals(options: { backend: Backend; approvals: number; connections: number; proof?: Proof; payment?: Payment }): Promise<CheckoutBenchResult> {
  const proof = options.proof ?? 'link';
  const payment = options.payment ?? 'manual';
  const standIn = payment === 'stripe' ? await startStripeStandIn() : undefined;
  const stripe: StripeAccount | undefined = standIn && { apiUrl: standIn.apiUrl, secretKey: standIn.secretKey };
  // On Node 20 a worker's .ts entry loads before --import hooks apply: register tsx first, then import this file.
  const entry = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
    .then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(entry, { eval: true, workerData: { role: 'checkout-bench-server', backend: options.backend, approvals: options.approvals, proof, stripe } });
  const failed = once(worker, 'error').then(([error]) => Promise.reject(error as Error));
  failed.catch(() => {});
  const [ready] = (await Promise.race([once(worker, 'message'), failed])) as [{ port: number; tokens: string[] }];
  const origin = `http://127.0.0.1:${ready.port}`;
  const forms: PreparedForm[] = [];
  for (const token of ready.tokens) forms.push(await openPage(origin, token));

  let codes: Record<string, string> = {};
  let codesPerSecond: number | undefined;
  let codeFailures = 0;
  if (proof === 'code') {
    const sent = await postForms(origin, forms, options.connections, () => ({ action: 'send_code' }), 303);
    codesPerSecond = (forms.length - sent.failures) / sent.seconds;
    codeFailures = sent.failures;
    worker.postMessage('codes');
    [{ codes }] = (await once(worker, 'message')) as [{ codes: Record<string, string> }];
  }
  const fields = (form: PreparedForm) => ({ action: 'approve', ...(proof === 'code' ? { code: codes[form.token]! } : {}) });
  const busyBefore = worker.performance.eventLoopUtilization();
  const approved = standIn ? await approveAndPay(origin, standIn, forms, options.connections, fields) : await postForms(origin, forms, options.connections, fields, 303);
  const storeBusy = worker.performance.eventLoopUtilization(busyBefore);
  worker.postMessage('done');
  const [tally] = (await once(worker, 'message')) as [{ orders: number; onHand: number }];
  await once(worker, 'exit');
  await standIn?.close();
  return {
    backend: options.backend,
    proof,
    payment,
    ...(codesPerSecond === undefined ? {} : { codesPerSecond }),
    approvals: forms.length,
    approvalsPerSecond: (forms.length - approved.failures) / approved.seconds,
    approvalsPerStoreSecond: (forms.length - approved.failures) / (storeBusy.active / 1000),
    p50Ms: Math.round(percentile(approved.latencies, 50)),
    p99Ms: Math.round(percentile(approved.latencies, 99)),
    failures: approved.failures + codeFailures,
    ordersPlaced: tally.orders,
    unitsTaken: STOCK - tally.onHand,
  };
}

if (!isMainThread && (workerData as { role?: string })?.role === 'checkout-bench-server') {
  const { backend, approvals, proof, stripe } = workerData as { backend: Backend; approvals: number; proof: Proof; stripe?: StripeAccount };
  await serveBenchApp(backend, approvals, proof, stripe);
} else if (isMainThread && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const approvals = Number(process.argv[2] ?? 500);
  const connections = Number(process.argv[3] ?? 10);
  const proof = process.argv[4] === 'code' ? 'code' : 'link';
  const payment = process.argv[5] === 'stripe' ? 'stripe' : 'manual';
  for (const backend of ['pglite', 'postgres'] as const) {
    console.log(await benchCheckoutApprovals({ backend, approvals, connections, proof, payment }));
  }
}
