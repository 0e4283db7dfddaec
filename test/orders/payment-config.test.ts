/**
 * The payment's configuration: the defaults the demo starts with (manual, a sentence that still says how to pay, 7
 * days, capture at fulfilment), each bad value one line naming its variable (never repeating a secret), Stripe's
 * variables required with PAYMENT_PROVIDER=stripe and STRIPE_API_URL parsed for the SDK, and the start banner's
 * warning while PAYMENT_INSTRUCTIONS is unset.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startBanner } from '../../src/cli/start-banner.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { CatalogSnapshot } from '../../src/catalog/catalog.js';

const STRIPE = { PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_51abcdefghijklmnop', STRIPE_WEBHOOK_SECRET: 'whsec_abcdefghijklmnop' };

/** loadConfig refuses with one line naming `variable`, and the line does not repeat `secret`. */
function refusedNaming(env: Record<string, string>, variable: string, pattern?: RegExp, secret?: string): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.variable, variable);
      assert.ok(!error.message.includes('\n'), error.message);
      assert.ok(error.message.startsWith(`${variable}: `), error.message);
      if (pattern) assert.match(error.message, pattern);
      if (secret) assert.ok(!error.message.includes(secret), 'the secret is not repeated');
      return true;
    },
    JSON.stringify(env),
  );
}

describe('payment configuration', () => {
  it('with no variables: manual, a default sentence that says how, due in 7 days, capture at fulfilment, no Stripe', () => {
    const { payment } = loadConfig({});
    assert.deepEqual(payment, {
      provider: 'manual',
      instructions: 'Reply to your order confirmation email and the store will send you its payment details.',
      instructionsSet: false,
      dueDays: 7,
      captureOn: 'fulfillment',
      stripe: undefined,
    });
  });

  it('PAYMENT_INSTRUCTIONS: several lines (a typed \\n is a line break), trimmed; a control or bidi character or too long is refused naming it', () => {
    const { payment } = loadConfig({ PAYMENT_INSTRUCTIONS: '  Bank: Example Bank\\nIBAN DE00 1234 5678\r\nQuote your order number.  ' });
    assert.equal(payment.instructions, 'Bank: Example Bank\nIBAN DE00 1234 5678\nQuote your order number.');
    assert.equal(payment.instructionsSet, true);
    refusedNaming({ PAYMENT_INSTRUCTIONS: 'pay\u001b[2J now' }, 'PAYMENT_INSTRUCTIONS', /control character/);
    refusedNaming({ PAYMENT_INSTRUCTIONS: 'pay \u202eot' }, 'PAYMENT_INSTRUCTIONS', /reorders text/);
    refusedNaming({ PAYMENT_INSTRUCTIONS: 'x'.repeat(1001) }, 'PAYMENT_INSTRUCTIONS', /at most 1000 characters/);
  });

  it('PAYMENT_PROVIDER, PAYMENT_DUE_DAYS and CAPTURE_ON take their values; anything else is one line naming the variable', () => {
    assert.equal(loadConfig({ PAYMENT_DUE_DAYS: '14' }).payment.dueDays, 14);
    assert.equal(loadConfig({ CAPTURE_ON: 'approval' }).payment.captureOn, 'approval');
    assert.equal(loadConfig({ CAPTURE_ON: 'manual' }).payment.captureOn, 'manual');
    refusedNaming({ PAYMENT_PROVIDER: 'paypal' }, 'PAYMENT_PROVIDER', /expected one of manual, stripe, got "paypal"/);
    refusedNaming({ PAYMENT_DUE_DAYS: '0' }, 'PAYMENT_DUE_DAYS', /from 1 to 365/);
    refusedNaming({ PAYMENT_DUE_DAYS: 'soon' }, 'PAYMENT_DUE_DAYS');
    refusedNaming({ CAPTURE_ON: 'shipping' }, 'CAPTURE_ON', /fulfillment, approval, manual/);
  });

  it('stripe: both keys required and checked without repeating them; STRIPE_API_URL parsed into host, port and protocol', () => {
    const { stripe } = loadConfig(STRIPE).payment;
    assert.deepEqual(stripe, {
      secretKey: STRIPE.STRIPE_SECRET_KEY,
      webhookSecret: STRIPE.STRIPE_WEBHOOK_SECRET,
      apiUrl: 'https://api.stripe.com',
      host: 'api.stripe.com',
      port: 443,
      protocol: 'https',
    });
    const local = loadConfig({ ...STRIPE, STRIPE_API_URL: 'http://127.0.0.1:12111' }).payment.stripe!;
    assert.deepEqual([local.host, local.port, local.protocol], ['127.0.0.1', 12111, 'http']);
    refusedNaming({ PAYMENT_PROVIDER: 'stripe', STRIPE_WEBHOOK_SECRET: STRIPE.STRIPE_WEBHOOK_SECRET }, 'STRIPE_SECRET_KEY', /required when PAYMENT_PROVIDER=stripe/);
    refusedNaming({ PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: STRIPE.STRIPE_SECRET_KEY }, 'STRIPE_WEBHOOK_SECRET', /required/);
    refusedNaming({ ...STRIPE, STRIPE_SECRET_KEY: 'pk_test_publishable0000' }, 'STRIPE_SECRET_KEY', /starting with sk_ or rk_/, 'pk_test_publishable0000');
    refusedNaming({ ...STRIPE, STRIPE_WEBHOOK_SECRET: 'secret with spaces' }, 'STRIPE_WEBHOOK_SECRET', /whsec_/, 'secret with spaces');
    refusedNaming({ ...STRIPE, STRIPE_API_URL: 'ftp://stripe.test' }, 'STRIPE_API_URL');
    refusedNaming({ ...STRIPE, STRIPE_API_URL: 'https://api.stripe.com/v1' }, 'STRIPE_API_URL', /no path/);
    // Unchecked while another provider is chosen.
    assert.equal(loadConfig({ STRIPE_SECRET_KEY: 'nonsense' }).payment.stripe, undefined);
  });

  it('the start banner says how buyers pay, and warns while PAYMENT_INSTRUCTIONS is unset', () => {
    const snapshot = { products: [], collections: [] } as unknown as CatalogSnapshot;
    const unset = startBanner(loadConfig({}), snapshot);
    assert.match(unset, /^ {2}Payments: +manual: buyers pay by the payment instructions within 7 days$/m);
    assert.match(unset, /^Warning: PAYMENT_INSTRUCTIONS is not set/m);
    const set = startBanner(loadConfig({ PAYMENT_INSTRUCTIONS: 'Pay on delivery.' }), snapshot);
    assert.doesNotMatch(set, /Warning/);
    assert.match(startBanner(loadConfig(STRIPE), snapshot), /^ {2}Payments: +Stripe \(cards; the hold is captured at the first shipment\)$/m);
  });
});
