/**
 * What the Stripe tests share: a store with PAYMENT_PROVIDER=stripe listening on loopback (its webhook reachable by
 * the stand-in's deliveries, the buyer's browser sent back to it), and an agent's checkout waiting for the buyer.
 */
import { loadConfig } from '../../src/config.js';
import { freePort } from './browser.js';
import { startTestStore, type Backend, type TestStore } from './store.js';

export const STRIPE_TEST_SKU = 'HYD-LEMONLIME-30';

/** A store paying on the Stripe API at `apiUrl` (the stand-in's, or Stripe's own when undefined), on a loopback port of its own. */
export async function startStripeStore(
  backend: Backend,
  account: { secretKey: string; webhookSecret: string; apiUrl?: string },
  env: Record<string, string> = {},
): Promise<{ t: TestStore; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    BASE_URL: base,
    DATA_DIR: 'unused',
    APPROVAL_PROOF: 'link',
    PAYMENT_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: account.secretKey,
    STRIPE_WEBHOOK_SECRET: account.webhookSecret,
    ...(account.apiUrl ? { STRIPE_API_URL: account.apiUrl } : {}),
    ...env,
  });
  const t = await startTestStore(backend, { config });
  await t.app.listen({ host: '127.0.0.1', port });
  return { t, base };
}

/** An agent's checkout of `quantity` units, asked to complete: the approval link's token, form secret and digest. */
export async function checkoutAwaitingApproval(t: TestStore, quantity = 2, email = 'ana@example.com') {
  const { checkouts, db } = t.store;
  const variantId = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === STRIPE_TEST_SKU)!.id;
  const created = await checkouts.create(
    db,
    {
      lines: [{ variantId, quantity }],
      buyer: { email },
      destination: { firstName: 'Ana', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94103', country: 'US' },
      shippingOption: 'standard',
    },
    'agent',
    'agent',
  );
  const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
  const approval = asked.approval!;
  return { id: created.view.record.id, token: approval.token, formSecret: approval.formSecret, digest: approval.digest, total: asked.view.totals.total };
}

/** The buyer proved it is them (link mode): the approval's outcome (`paying` with the payment page's URL, as a rule). */
export const approveCheckout = (t: TestStore, a: { token: string; formSecret: string; digest: string }) =>
  t.store.approvals.approve(t.store.db, a.token, a.formSecret, a.digest, { kind: 'none' });

/** The orders a checkout placed. */
export async function ordersOfCheckout(t: TestStore, checkoutId: string): Promise<string[]> {
  return (await t.store.db.query<{ id: string }>('select id from orders where checkout_id = $1', [checkoutId])).map((row) => row.id);
}
