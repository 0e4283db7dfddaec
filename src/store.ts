/**
 * The store's parts, opened in order: database, migrations, demo seed on an empty store, the in-memory catalog
 * and stock, and the domain services both doors call. Services take the database handle per call; the store
 * holds the one they are given outside a transaction.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Config } from './config.js';
import { DatabaseClosedError, openDatabase, quietDuringOutage, type Database, type Listening } from './db/database.js';
import { migrate } from './db/migrate.js';
import { Catalog, CATALOG_CHANNEL } from './catalog/catalog.js';
import { demoCatalog } from './catalog/demo-catalog.js';
import { seedCatalogIfEmpty } from './catalog/import/import-catalog.js';
import { CartService } from './cart/cart-service.js';
import { BuyerProof } from './checkout/buyer-proof.js';
import { purgeExpiredProofs } from './checkout/buyer-proof-store.js';
import type { ApprovalService } from './checkout/approval-service.js';
import { CheckoutService } from './checkout/checkout-service.js';
import { IdempotencyStore } from './idempotency/idempotency-store.js';
import { Inventory, STOCK_CHANNEL } from './inventory/inventory.js';
import { Recommendations } from './recommendations/recommendations.js';
import { CatalogSearch, SEARCH_INDEX_BUILD_FAILED } from './search/catalog-search.js';
import { paymentHandlerFor, type PaymentHandler } from './payments/payment-handlers.js';
import { manualProvider } from './payments/manual-provider.js';
import type { PaymentProvider } from './payments/payment-provider.js';
import { STRIPE_SESSION_LIFETIME_MS, stripeProvider } from './payments/stripe-provider.js';
import { approvalCodeMail } from './mail/approval-code-mail.js';
import { openMailSender, type MailSender } from './mail/mail-sender.js';
import type { MailShop, MerchantIdentity } from './mail/mail-parts.js';
import { orderMailSubscriber } from './mail/order-mail-subscriber.js';
import { storefrontCommand } from './cli/command-name.js';
import { OrderActions } from './orders/order-actions.js';
import type { OrderEventSubscriber } from './orders/order-events.js';
import { OutboxDispatcher, purgeDelivered, type Sender } from './outbox/outbox-dispatcher.js';
import { OUTBOX_CHANNEL, type MailMessage, type WebhookMessage } from './outbox/outbox.js';
import { LATEST_UCP_RELEASE, PROFILE_PATH } from './ucp/protocol.js';
import { orderWebhookSubscriber } from './ucp/webhooks/order-webhooks.js';
import { SigningKeys } from './ucp/webhooks/signing-keys.js';
import { sendWebhook } from './ucp/webhooks/webhook-sender.js';
import { StaffService } from './staff/staff-service.js';
import { SubscriptionService } from './subscriptions/subscription-service.js';

export interface Store {
  config: Config;
  /** The store's clock: checkouts, approvals and subscriptions read the time from it (a test drives it). */
  clock: () => Date;
  db: Database;
  catalog: Catalog;
  inventory: Inventory;
  search: CatalogSearch;
  recommendations: Recommendations;
  carts: CartService;
  idempotency: IdempotencyStore;
  /** The checkout's life: create, update, a cart's checkout, the request to complete, cancel. */
  checkouts: CheckoutService;
  /** What the buyer's approval link does: the page's state, approve (the order placed), decline. */
  approvals: ApprovalService;
  /** What a buyer proves before an order is placed: passkeys, mailed codes (APPROVAL_PROOF). */
  buyerProof: BuyerProof;
  /** How approved orders are paid, as the profile advertises it (manual capture: the buyer pays by the instructions). */
  payments: PaymentHandler;
  /** Who holds the buyer's money (PAYMENT_PROVIDER): the manual provider, or Stripe. */
  paymentProvider: PaymentProvider;
  /** The merchant's moves on an order: capture, fulfil, cancel, refund. */
  orders: OrderActions;
  /** The store's keys for signing what it sends; the profile publishes their public halves. */
  signingKeys: SigningKeys;
  /** Delivers the outbox (mail, webhooks); undefined when the store was opened without delivery. */
  outbox: OutboxDispatcher | undefined;
  /** Who may use the admin: staff, their passkeys, sign-in links and sessions. */
  staff: StaffService;
  /** Subscriptions: made by orders bought on a plan; their renewals, each a checkout the buyer approves. */
  subscriptions: SubscriptionService;
  close(): Promise<void>;
}

/**
 * How often an instance polls for catalog and stock changes made by another process. On a server, other
 * instances' changes arrive by LISTEN/NOTIFY when they commit, so the poll is only a safety net. The embedded
 * database belongs to one process: its own writes refresh at once, the CLI's come through the control socket.
 */
const POLL_MS = {
  postgres: { catalog: 30_000, stock: 30_000 },
  pglite: { catalog: 2000, stock: 1000 },
} as const;
const CATALOG_REFRESH_FAILED = 'catalog refresh failed; serving the last catalog';
const STOCK_REFRESH_FAILED = 'stock refresh failed; serving the last stock levels';
/** How often a serving instance produces the renewals that are due (every instance does; each renewal happens once). */
const SUBSCRIPTION_RUN_MS = 60_000;
/** Expired carts and idempotency keys are purged at start and this often. */
const PURGE_INTERVAL_MS = 60 * 60 * 1000;

export interface StoreOptions {
  seedDemo?: boolean;
  /** Deliver the outbox from this process: `serve` does; off by default (a store opened for a command, most tests). */
  deliver?: boolean;
  db?: Database;
  /** Where failures of background work (polls, purges) are reported; by default one line on stderr. */
  onBackgroundError?: (what: string, error: unknown) => void;
  /** The payment provider, instead of the one PAYMENT_PROVIDER names (a test's, or one built around the store). */
  paymentProvider?: PaymentProvider;
  /** The store's clock, instead of the system's (tests that cannot wait a month for a renewal). */
  clock?: () => Date;
}

const reportOnStderr = (what: string, error: unknown) => console.error(`storefront: ${what}: ${(error as Error)?.message ?? error}`);

export async function openStore(config: Config, options: StoreOptions = {}): Promise<Store> {
  const db = options.db ?? (await openDatabase(config));
  const clock = options.clock ?? (() => new Date());
  const timers: NodeJS.Timeout[] = [];
  let listening: Listening | undefined;
  /** The one mail sender: opened when the outbox delivers, or on the first approval code (mailed at once, the buyer waits). */
  let mail: MailSender | undefined;
  const mailer = () => (mail ??= openMailSender(config.mail));
  let outbox: OutboxDispatcher | undefined;
  try {
    await migrate(db);
    if (options.seedDemo ?? true) await seedCatalogIfEmpty(db, demoCatalog);
    // An outage fails every poll alike: its first failure of each kind is reported, then one line a minute.
    const report = quietDuringOutage(options.onBackgroundError ?? reportOnStderr);
    // Work that began before the store closed and finds the database closed has nothing to report.
    const onError = (what: string, error: unknown) => (error instanceof DatabaseClosedError ? undefined : report(what, error));
    const catalog = await Catalog.load(db, config.baseUrl);
    const inventory = await Inventory.load(db);
    catalog.watch(db, POLL_MS[db.kind].catalog, (error) => onError(CATALOG_REFRESH_FAILED, error));
    inventory.watch(db, POLL_MS[db.kind].stock, (error) => onError(STOCK_REFRESH_FAILED, error), { full: db.kind === 'postgres' });
    const carts = await CartService.open(db, { catalog, stock: inventory, maxLineQuantity: config.cartMaxLineQuantity });
    const idempotency = new IdempotencyStore(onError);
    const paymentProvider = options.paymentProvider ?? openPaymentProvider(config);
    const payments = paymentHandlerFor(config.baseUrl, LATEST_UCP_RELEASE, paymentProvider, config.payment.captureOn);
    const signingKeys = await SigningKeys.open(db, config.signingKey);
    // A key rotated by another instance or the CLI is signed with, and published, within a minute.
    signingKeys.watch(db, 60_000, (error) => onError('signing key refresh failed', error));
    const subscribers = orderEventSubscribers(config);
    const buyerProof = openBuyerProof(config, mailer, clock);
    const checkouts = new CheckoutService({
      catalog,
      inventory,
      carts,
      config: config.checkout,
      maxLineQuantity: config.cartMaxLineQuantity,
      payments,
      orderEvents: subscribers,
      buyerProof,
      now: clock,
    });
    const staff = openStaff(config);
    const subscriptions = new SubscriptionService({
      catalog,
      inventory,
      checkouts,
      clock,
      baseUrl: config.baseUrl,
      noticeDays: config.subscriptionNoticeDays,
      maxLineQuantity: config.cartMaxLineQuantity,
      shop: { ...merchantIdentity(config), timeZone: config.storeTimeZone },
      mailDeadlineSeconds: config.outbox.mailDeadlineSeconds,
      onError,
    });
    // An order bought on a plan starts a subscription; a renewal's order moves it to its next date: in the order's transaction.
    checkouts.approvals.afterOrderPlaced(subscriptions.onOrderPlaced);
    const orders = new OrderActions({ inventory, subscribers, provider: paymentProvider, captureOn: config.payment.captureOn, now: clock });
    // A provider holding the buyer's money: the approval sends the buyer to its page, and CAPTURE_ON=approval captures.
    checkouts.approvals.usePaymentPage({
      baseUrl: config.baseUrl,
      sessionLifetimeMs: STRIPE_SESSION_LIFETIME_MS,
      // Only CAPTURE_ON=approval does anything once a paid order is placed (its order's row read and locked otherwise for nothing).
      afterPlacement: config.payment.captureOn === 'approval' ? (db, order) => orders.afterPlacement(db, order.id) : undefined,
    });
    if (options.deliver ?? false) {
      // A failed attempt is one line (no address, no URL); the message waits in the outbox (`storefront outbox`).
      outbox = outboxDispatcher(db, config, signingKeys, mailer(), onError, (failure) =>
        report(
          `outbox ${failure.kind} (${failure.topic}) attempt ${failure.attempt} failed${failure.givenUp ? ', given up' : ', will be retried'}`,
          new Error(failure.reason),
        ),
      );
      // The embedded database is this process's alone: a delivery it had under way when it last stopped is not.
      if (db.kind === 'pglite') await db.query('update outbox set claimed_until = null where sent_at is null and claimed_until is not null');
      outbox.start();
      // The schedule of renewals runs where the outbox is delivered: in every serving instance, at start and each minute.
      let running: Promise<unknown> | undefined;
      const runSubscriptions = () => {
        // One run at a time here (a slow one is not joined by the next); other instances' runs pass over its rows.
        running ??= subscriptions
          .run(db)
          .catch((error: unknown) => onError('subscription renewal run failed', error))
          .finally(() => (running = undefined));
      };
      const subscriptionTimer = setInterval(runSubscriptions, SUBSCRIPTION_RUN_MS);
      subscriptionTimer.unref();
      timers.push(subscriptionTimer);
      runSubscriptions();
    }
    // One listening connection hears every instance's commits: catalog, stock, and outbox rows to deliver.
    const wakeOutbox = outbox ? () => outbox!.wake() : undefined;
    if (db.kind === 'postgres') listening = await followOtherInstances(db, catalog, inventory, onError, wakeOutbox);
    else if (wakeOutbox) listening = await db.listen([OUTBOX_CHANNEL], wakeOutbox);
    const purge = () =>
      Promise.all([
        purgeDelivered(db).catch((error: unknown) => onError('outbox purge failed', error)),
        checkouts.expireDue(db).catch((error: unknown) => onError('checkout expiry sweep failed', error)),
        carts.purgeExpired(db).catch((error: unknown) => onError('cart purge failed', error)),
        idempotency.purgeExpired(db).catch((error: unknown) => onError('idempotency key purge failed', error)),
        purgeExpiredProofs(db).catch((error: unknown) => onError('approval proof purge failed', error)),
        staff.purgeExpired(db).catch((error: unknown) => onError('staff link and session purge failed', error)),
        // Money moves a stopped process left asked of the provider and unrecorded; holds that lapsed uncaptured.
        orders.settleUnsettled(db).catch((error: unknown) => onError('payment settlement sweep failed', error)),
        // CAPTURE_ON=approval: holds a stopped process placed and did not capture.
        orders.captureMissedAtApproval(db).catch((error: unknown) => onError('capture-at-approval sweep failed', error)),
        orders.expireLapsedAuthorizations(db).catch((error: unknown) => onError('authorization expiry sweep failed', error)),
        // Holds lapsing within a day, uncaptured: the merchant is mailed once per order.
        orders.warnExpiringAuthorizations(db).catch((error: unknown) => onError('authorization expiry warning sweep failed', error)),
      ]);
    await purge();
    const purgeTimer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
    purgeTimer.unref();
    timers.push(purgeTimer);
    let closing: Promise<void> | undefined;
    return {
      config,
      clock,
      db,
      catalog,
      inventory,
      search: new CatalogSearch(catalog, inventory, (error) => onError(SEARCH_INDEX_BUILD_FAILED, error)),
      recommendations: new Recommendations(catalog, inventory),
      carts,
      idempotency,
      checkouts,
      approvals: checkouts.approvals,
      buyerProof,
      payments,
      paymentProvider,
      orders,
      signingKeys,
      outbox,
      staff,
      subscriptions,
      // Background work starts nothing more, then the database waits for the work under way (a request whose
      // client has gone, a refresh already reading) before it closes. Closing twice is closing once.
      close: () =>
        (closing ??= (async () => {
          for (const timer of timers) clearInterval(timer);
          catalog.close();
          inventory.close();
          signingKeys.close();
          await listening?.close();
          await outbox?.close();
          mail?.close();
          // Before the database closes: what it could not be told of keys settled while it was away.
          await idempotency.close();
          await db.close();
        })()),
    };
  } catch (error) {
    for (const timer of timers) clearInterval(timer);
    await listening?.close();
    await outbox?.close();
    mail?.close();
    await db.close().catch(() => {});
    throw error;
  }
}

/** The provider PAYMENT_PROVIDER names: Stripe with the account's keys, or manual with the merchant's instructions and due days. */
export function openPaymentProvider(config: Config): PaymentProvider {
  if (config.payment.provider === 'stripe' && config.payment.stripe) return stripeProvider(config.payment.stripe);
  return manualProvider({ instructions: config.payment.instructions, dueDays: config.payment.dueDays });
}

/** Who hears of an order's events, in the event's transaction: the buyer's and merchant's mail, the platform's webhook. */
export function orderEventSubscribers(config: Config): OrderEventSubscriber[] {
  return [
    orderMailSubscriber(mailShop(config), config.outbox.mailDeadlineSeconds),
    orderWebhookSubscriber({ baseUrl: config.baseUrl, deadlineSeconds: config.outbox.webhookDeadlineSeconds, captureOn: config.payment.captureOn }),
  ];
}

/** Who the buyer's mail comes from, as the configuration says. */
const merchantIdentity = (config: Config): MerchantIdentity => ({
  storeName: config.storeName,
  contactEmail: config.storeContactEmail,
  address: config.storeAddress,
});

/** What the order mails need from the store's configuration. */
const mailShop = (config: Config): MailShop => ({
  ...merchantIdentity(config),
  baseUrl: config.baseUrl,
  merchantEmail: config.mail.merchantEmail,
  captureOn: config.payment.captureOn,
  timeZone: config.storeTimeZone,
  command: storefrontCommand(),
});

/** The approval's proof: WebAuthn bound to BASE_URL (its origin, its host as RP ID), codes mailed at once. */
function openBuyerProof(config: Config, mailer: () => MailSender, now: () => Date): BuyerProof {
  const base = new URL(config.baseUrl);
  return new BuyerProof({
    mode: config.checkout.approvalProof,
    origin: base.origin,
    rpId: base.hostname,
    storeName: config.storeName,
    passkeysPossible: !isIP(base.hostname.replace(/^\[|\]$/g, '')),
    mailCode: (mail) => mailer().send(approvalCodeMail(mail, merchantIdentity(config)), randomUUID()),
    now,
  });
}

/** The admin's staff: passkeys bound to BASE_URL (its origin, its host as RP ID); enrollment links mailed when SMTP_URL is set. */
export function openStaff(config: Config): StaffService {
  const base = new URL(config.baseUrl);
  return new StaffService({
    baseUrl: config.baseUrl,
    storeName: config.storeName,
    merchant: merchantIdentity(config),
    timeZone: config.storeTimeZone,
    mail: config.mail.smtpUrl ? { deadlineSeconds: config.outbox.mailDeadlineSeconds } : undefined,
    passkeysPossible: !isIP(base.hostname.replace(/^\[|\]$/g, '')),
  });
}

/** The outbox's dispatcher with a sender for each kind: mail through nodemailer, webhooks signed with the store's key. */
export function outboxDispatcher(
  db: Database,
  config: Config,
  signingKeys: SigningKeys,
  mail: MailSender,
  onError: (what: string, error: unknown) => void,
  onAttemptFailed?: ConstructorParameters<typeof OutboxDispatcher>[2]['onAttemptFailed'],
): OutboxDispatcher {
  const senders: Record<'mail' | 'webhook', Sender> = {
    mail: (row) => mail.send(row.payload as MailMessage, row.eventId),
    webhook: (row) =>
      sendWebhook(row.payload as WebhookMessage, row.eventId, {
        keys: signingKeys,
        businessProfileUrl: `${config.baseUrl}${PROFILE_PATH}`,
        allowInsecure: config.allowInsecureProfiles,
      }),
  };
  return new OutboxDispatcher(db, senders, {
    leaseSeconds: config.outbox.leaseSeconds,
    retryBaseSeconds: config.outbox.retryBaseSeconds,
    onError,
    onAttemptFailed,
  });
}

/**
 * Refreshes the catalog or the stock when a transaction that changed it commits, in this instance or another.
 * Refreshes coalesce (one running, one queued), so a burst of notifications costs two reads. After the listening
 * connection was lost and made again, both are refreshed once: changes in between were not announced here.
 */
function followOtherInstances(
  db: Database,
  catalog: Catalog,
  inventory: Inventory,
  onError: (what: string, error: unknown) => void,
  wakeOutbox: (() => void) | undefined,
): Promise<Listening> {
  const refreshCatalog = () => void catalog.refresh(db).catch((error: unknown) => onError(CATALOG_REFRESH_FAILED, error));
  const refreshStock = () => void inventory.refresh(db).catch((error: unknown) => onError(STOCK_REFRESH_FAILED, error));
  const heard: Record<string, () => void> = { [CATALOG_CHANNEL]: refreshCatalog, [STOCK_CHANNEL]: refreshStock, ...(wakeOutbox ? { [OUTBOX_CHANNEL]: wakeOutbox } : {}) };
  return db.listen(Object.keys(heard), (channel) => heard[channel]?.(), {
    onReconnect: () => {
      refreshCatalog();
      refreshStock();
      wakeOutbox?.();
    },
    onError: (error) => onError("the connection listening for other instances' changes was lost; reconnecting", error),
  });
}
