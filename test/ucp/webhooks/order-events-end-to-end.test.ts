/**
 * Order events from end to end, as a platform sees them: an agent whose profile (served on loopback, insecure
 * profiles allowed) declares the order capability with a `config.webhook_url` on loopback checks out over MCP, the
 * buyer approves, the merchant fulfils and cancels, and the store's dispatcher (a store opened with `deliver: true`)
 * posts each event to that URL. The receiver verifies every event as a platform does, independently of the store's
 * code (test/helpers/webhook-receiver.ts): the Content-Digest of the raw body, then the RFC 9421 signature with a
 * key read from the store's `/.well-known/ucp`. Every body is an order valid against UCP's order schema. A receiver
 * that answers 503 three times still gets each event, with the same Webhook-Id and bytes on every attempt; two
 * instances on one PostgreSQL deliver each event once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Config } from '../../../src/config.js';
import type { Order } from '../../../src/orders/orders.js';
import { backends, dropTestDatabases, getJson, startTestStore, testConfig, type TestStore } from '../../helpers/store.js';
import {
  sha256Digest,
  startWebhookReceiver,
  verificationProblems,
  type PublishedJwk,
  type ReceivedEvent,
  type WebhookReceiver,
} from '../../helpers/webhook-receiver.js';
import { injectToolCall, json, startProfileServer, type ProfileServer } from '../mcp-harness.js';
import { OfficialSchema, officialSchemaErrors } from '../official-schemas.js';

after(dropTestDatabases);

/** Generous: the machines running these tests are loaded. Nothing below asserts how long anything took. */
const WAIT_MS = 60_000;
/** How long to keep listening after the last expected event, to see that no second copy comes. */
const GRACE_MS = 1_000;
/** The outbox lease of these stores (OUTBOX_LEASE accepts 5 s and up), and a platform slower than it yet within the 10 s webhook deadline. */
const LEASE_SECONDS = 5;
const SLOW_ANSWER_MS = 8_000;

const VERSION = '2026-04-08';
const ADDRESS = { first_name: 'Ana', last_name: 'Lima', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };
const HOOKS = ['/hook', '/flaky', '/shared', '/slow'] as const;
type Hook = (typeof HOOKS)[number];
const profilePath = (hook: Hook) => `/profiles${hook}.json`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Polls `check` until it answers something other than undefined or false; fails naming `what` after WAIT_MS. */
async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}`);
    await sleep(50);
  }
}

/** A platform profile sharing checkout, fulfillment and order, its order events to `webhookUrl`. */
function agentProfile(webhookUrl: string) {
  const entry = (name: string) => ({ version: VERSION, spec: `https://ucp.dev/${VERSION}/specification/${name}`, schema: `https://ucp.dev/${VERSION}/schemas/shopping/${name}.json` });
  return {
    ucp: {
      version: VERSION,
      services: {
        'dev.ucp.shopping': [
          { version: VERSION, spec: `https://ucp.dev/${VERSION}/specification/overview`, transport: 'mcp', schema: `https://ucp.dev/${VERSION}/services/shopping/mcp.openrpc.json` },
        ],
      },
      capabilities: {
        'dev.ucp.shopping.checkout': [entry('checkout')],
        'dev.ucp.shopping.fulfillment': [{ ...entry('fulfillment'), extends: 'dev.ucp.shopping.checkout' }],
        'dev.ucp.shopping.order': [{ ...entry('order'), config: { webhook_url: webhookUrl } }],
      },
      payment_handlers: {},
    },
  };
}

/** A store that delivers its outbox: webhooks retried quickly, mail written as files into `mailDir` (no SMTP server). */
function deliveryConfig(mailDir: string): Partial<Config> {
  return {
    allowInsecureProfiles: true,
    mail: { ...testConfig().mail, dir: mailDir },
    outbox: { ...testConfig().outbox, retryBaseSeconds: 0.2, leaseSeconds: LEASE_SECONDS },
  };
}

interface WebhookRow {
  [column: string]: unknown;
  event_id: string;
  topic: string;
  body: string;
  timestamp: number;
  attempts: number;
  sent: boolean;
  failed: boolean;
  last_error: string | null;
}

/** The order's webhook rows in the outbox, oldest first: one per event. */
const webhookRows = (test: TestStore, orderId: string) =>
  test.store.db.query<WebhookRow>(
    `select event_id, topic, payload->>'body' as body, (payload->>'timestamp')::float8 as timestamp, attempts,
            sent_at is not null as sent, failed_at is not null as failed, last_error
       from outbox where kind = 'webhook' and order_id = $1 order by id`,
    [orderId],
  );

/** Waits until every webhook row of these orders is delivered; answers the rows, order by order. */
async function allDelivered(test: TestStore, orderIds: readonly string[], expectedPerOrder?: readonly number[]): Promise<WebhookRow[][]> {
  return until(`every order event of ${orderIds.length} order(s) to be delivered`, async () => {
    const rows = await Promise.all(orderIds.map((id) => webhookRows(test, id)));
    if (expectedPerOrder && rows.some((r, i) => r.length !== expectedPerOrder[i])) return undefined;
    const undelivered = rows.flat().filter((row) => !row.sent);
    assert.ok(!rows.flat().some((row) => row.failed), `an event was given up: ${JSON.stringify(rows.flat().find((row) => row.failed))}`);
    return undelivered.length === 0 ? rows : undefined;
  });
}

const webhookId = (event: ReceivedEvent) => String(event.headers['webhook-id']);
const bodyOf = (event: ReceivedEvent) => JSON.parse(event.body.toString('utf8'));

/** The same bytes with one of them changed. */
function withOneByteChanged(body: Buffer): Buffer {
  const changed = Buffer.from(body);
  const at = Math.floor(changed.length / 2);
  changed[at] = changed[at] === 0x41 ? 0x42 : 0x41;
  return changed;
}

for (const backend of backends) {
  describe(`${backend.name}: order events reach the platform's webhook, signed`, () => {
    let mailDir: string;
    let receiver: WebhookReceiver;
    let profiles: ProfileServer;
    let test: TestStore;
    let keys: PublishedJwk[];

    before(async () => {
      mailDir = mkdtempSync(path.join(tmpdir(), 'order-events-mail-'));
      receiver = await startWebhookReceiver(({ path: at, attempt }) => {
        if (at === '/flaky' && attempt <= 3) return 503;
        if (at === '/slow' && attempt === 1) return { status: 200, afterMs: SLOW_ANSWER_MS };
        return 200;
      });
      // One agent profile per webhook path: /profiles/hook.json sends order events to /hook, and so on.
      profiles = await startProfileServer(Object.fromEntries(HOOKS.map((hook) => [profilePath(hook), json(agentProfile(receiver.url(hook)))])));
      test = await startTestStore(backend, { deliver: true, config: deliveryConfig(mailDir) });
      assert.ok(test.store.outbox, 'the store delivers its outbox');
      const profile = await getJson(test.app, '/.well-known/ucp');
      assert.equal(profile.status, 200);
      keys = profile.body.keys;
      assert.ok(Array.isArray(keys) && keys.length > 0, 'the store profile publishes keys');
      assert.ok(keys.every((key) => typeof key.kid === 'string' && !('d' in key)), 'public keys, each with a kid');
    });
    after(async () => {
      await test?.close();
      await profiles?.close();
      await receiver?.close();
      if (mailDir) rmSync(mailDir, { recursive: true, force: true });
    });

    const call = (on: TestStore, name: string, args: Record<string, unknown>) => injectToolCall(on.app, name, args);

    const variantOf = (sku: string) => {
      for (const product of test.store.catalog.snapshot.products) for (const variant of product.variants) if (variant.sku === sku) return variant.id;
      throw new Error(`no variant ${sku}`);
    };

    /** An agent whose profile asks for order events at `hook` checks out over MCP through `on`; the buyer approves; the order is placed. */
    async function placeOrder(hook: Hook, lines: [sku: string, quantity: number][], on: TestStore = test): Promise<Order> {
      const agent = { 'ucp-agent': { profile: profiles.url(profilePath(hook)) } };
      const checkout = await call(on, 'create_checkout', {
        meta: agent,
        checkout: {
          line_items: lines.map(([sku, quantity]) => ({ item: { id: String(variantOf(sku)) }, quantity })),
          buyer: { email: 'ada@example.com' },
          fulfillment: FULFILLMENT,
        },
      });
      assert.equal(checkout.status, 'ready_for_complete', JSON.stringify(checkout.messages));
      const escalated = await call(on, 'complete_checkout', { id: checkout.id, meta: { ...agent, 'idempotency-key': randomUUID() } });
      assert.equal(escalated.status, 'requires_escalation');
      const token = new URL(escalated.continue_url).pathname.split('/').pop()!;
      const state = await on.store.checkouts.approvalState(on.store.db, token);
      if (state.kind !== 'pending') throw new Error(`the approval is ${state.kind}, not pending`);
      const outcome = await on.store.checkouts.approve(on.store.db, token, state.approval.formSecret, state.approval.digest, { kind: 'none' });
      if (outcome.kind !== 'placed') throw new Error(`the approval was ${outcome.kind}: ${JSON.stringify(outcome)}`);
      assert.equal(outcome.order.webhookUrl, receiver.url(hook), 'the order keeps the webhook URL of the profile it was bought with');
      return outcome.order;
    }

    /** The one request that delivered each row (answered 200), by its Webhook-Id. */
    function deliveredEvents(rows: readonly WebhookRow[], at: string): ReceivedEvent[] {
      return rows.map((row) => {
        const arrived = receiver.at(at).filter((event) => webhookId(event) === row.event_id);
        assert.equal(arrived.length, 1, `${row.topic} arrived ${arrived.length} times`);
        assert.equal(arrived[0]!.status, 200);
        return arrived[0]!;
      });
    }

    it('placed, fulfilled in part and canceled: each arrives as a signed event, its digest and signature verify with the profile key, its body is the order as it then was', async () => {
      const startedAt = Date.now() / 1000;
      // Order A: placed, one line shipped in part, then the rest canceled. Order B: placed, then canceled outright.
      const a = await placeOrder('/hook', [['ESP-CLA-10', 3], ['ESP-DEC-10', 1]]);
      const b = await placeOrder('/hook', [['ESP-CLA-10', 1]]);
      const [classic, decaf] = a.lines;
      await test.store.orders.fulfill(test.store.db, a.id, { trackingNumber: '1Z', carrier: 'UPS', lines: new Map([[classic!.id, 2]]) });
      await test.store.orders.cancel(test.store.db, a.id, 'The buyer changed their mind');
      await test.store.orders.cancel(test.store.db, b.id);

      const [rowsA, rowsB] = await allDelivered(test, [a.id, b.id], [3, 2]);
      assert.deepEqual(rowsA!.map((row) => row.topic), ['order.placed', 'order.fulfilled', 'order.canceled']);
      assert.deepEqual(rowsB!.map((row) => row.topic), ['order.placed', 'order.canceled']);
      const rows = [...rowsA!, ...rowsB!];
      const events = deliveredEvents(rows, '/hook');

      // Every event: a signed POST the platform verifies, Standard Webhooks headers, the order as UCP's schema has it.
      for (const [index, event] of events.entries()) {
        const row = rows[index]!;
        const what = `${row.topic} of ${index < 3 ? 'A' : 'B'}`;
        assert.equal(event.method, 'POST', what);
        assert.equal(event.headers['content-type'], 'application/json', what);
        assert.match(webhookId(event), UUID, `${what}: Webhook-Id is a UUID (UCP's order event webhook)`);
        const timestamp = String(event.headers['webhook-timestamp']);
        assert.match(timestamp, /^\d+$/, `${what}: Webhook-Timestamp is an integer`);
        assert.equal(Number(timestamp), row.timestamp, `${what}: Webhook-Timestamp is the event's time`);
        // Seconds, not milliseconds: within a minute of this test's run (the bound is loose; no timing is asserted).
        assert.ok(Math.abs(Number(timestamp) - startedAt) < 60 + (Date.now() / 1000 - startedAt), `${what}: Webhook-Timestamp ${timestamp} is unix seconds`);
        assert.equal(event.headers['ucp-agent'], `profile="${test.store.config.baseUrl}/.well-known/ucp"`, what);
        assert.equal(event.headers['content-digest'], `sha-256=:${createHash('sha256').update(event.body).digest('base64')}:`, `${what}: the digest of the raw body`);
        assert.deepEqual(await verificationProblems(event, keys, receiver.origin), [], what);
        assert.equal(event.body.toString('utf8'), row.body, `${what}: the body is the outbox row's, byte for byte`);
        const body = bodyOf(event);
        assert.deepEqual(officialSchemaErrors(OfficialSchema.order, body), [], what);
        assert.equal(body.id, index < 3 ? a.id : b.id, what);
      }
      assert.equal(new Set(events.map(webhookId)).size, events.length, 'one Webhook-Id per event');

      // The verification fails when anything signed is not what was sent.
      const [placedA] = events;
      const tampered = { ...placedA!, body: withOneByteChanged(placedA!.body) };
      assert.notDeepEqual(await verificationProblems(tampered, keys, receiver.origin), [], 'a body with one byte changed fails the digest');
      const redigested = { ...tampered, headers: { ...tampered.headers, 'content-digest': sha256Digest(tampered.body) } };
      const problems = await verificationProblems(redigested, keys, receiver.origin);
      assert.ok(problems.some((problem) => /signature/.test(problem)), `a digest made for the changed body fails the signature: ${problems.join('; ')}`);
      assert.notDeepEqual(await verificationProblems({ ...placedA!, path: '/elsewhere' }, keys, receiver.origin), [], 'another path fails the signature');
      assert.notDeepEqual(await verificationProblems(placedA!, keys, 'http://127.0.0.2:1'), [], 'another authority fails the signature');
      const otherKeys = keys.map((key) => ({ ...key, kid: `${key.kid}-other` }));
      assert.notDeepEqual(await verificationProblems(placedA!, otherKeys, receiver.origin), [], 'no published key with its keyid: not verified');

      // What each body says: A placed, then shipped in part with tracking, then its rest canceled.
      const [placed, fulfilled, canceled] = events.slice(0, 3).map(bodyOf);
      const line = (order: any, id: string) => order.line_items.find((item: any) => item.id === id);
      assert.deepEqual(line(placed, classic!.id).quantity, { original: 3, total: 3, fulfilled: 0 });
      assert.deepEqual(line(placed, decaf!.id).quantity, { original: 1, total: 1, fulfilled: 0 });
      assert.deepEqual(placed.fulfillment.events, []);
      assert.deepEqual(placed.adjustments, []);

      assert.deepEqual(line(fulfilled, classic!.id).quantity, { original: 3, total: 3, fulfilled: 2 });
      assert.equal(line(fulfilled, classic!.id).status, 'partial');
      assert.deepEqual(line(fulfilled, decaf!.id).quantity, { original: 1, total: 1, fulfilled: 0 });
      assert.equal(fulfilled.fulfillment.events.length, 1);
      const shipped = fulfilled.fulfillment.events[0];
      assert.equal(shipped.tracking_number, '1Z');
      assert.equal(shipped.carrier, 'UPS');
      assert.deepEqual(shipped.line_items, [{ id: classic!.id, quantity: 2 }]);
      assert.deepEqual(fulfilled.adjustments, []);

      assert.deepEqual(line(canceled, classic!.id).quantity, { original: 3, total: 2, fulfilled: 2 }, 'the unshipped unit is canceled');
      assert.equal(line(canceled, classic!.id).status, 'fulfilled');
      assert.deepEqual(line(canceled, decaf!.id).quantity, { original: 1, total: 0, fulfilled: 0 });
      assert.equal(line(canceled, decaf!.id).status, 'removed');
      assert.deepEqual(canceled.fulfillment.events, fulfilled.fulfillment.events, 'what shipped stays shipped');
      assert.equal(canceled.adjustments.length, 1);
      const cancellation = canceled.adjustments[0];
      assert.equal(cancellation.type, 'cancellation');
      assert.equal(cancellation.description, 'The buyer changed their mind');
      assert.deepEqual(
        [...cancellation.line_items].sort((x: any, y: any) => x.id.localeCompare(y.id)),
        [{ id: classic!.id, quantity: -1 }, { id: decaf!.id, quantity: -1 }].sort((x, y) => x.id.localeCompare(y.id)),
      );

      // B: canceled before anything shipped; every unit canceled.
      const [placedB, canceledB] = events.slice(3).map(bodyOf);
      assert.deepEqual(placedB.line_items[0].quantity, { original: 1, total: 1, fulfilled: 0 });
      assert.deepEqual(canceledB.line_items[0].quantity, { original: 1, total: 0, fulfilled: 0 });
      assert.equal(canceledB.adjustments[0].type, 'cancellation');

      // The last event says what get_order says now.
      const now = await call(test, 'get_order', { id: a.id, meta: { 'ucp-agent': { profile: profiles.url(profilePath('/hook')) } } });
      assert.deepEqual(officialSchemaErrors(OfficialSchema.order, now), []);
      assert.deepEqual(
        { line_items: now.line_items, fulfillment: now.fulfillment, adjustments: now.adjustments, totals: now.totals },
        { line_items: canceled.line_items, fulfillment: canceled.fulfillment, adjustments: canceled.adjustments, totals: canceled.totals },
      );
    });

    it('a receiver that answers 503 three times, then 200: every event arrives, each attempt with the same Webhook-Id and the same bytes, and its row ends delivered after 4 attempts', async () => {
      const order = await placeOrder('/flaky', [['ESP-CLA-10', 2]]);
      await test.store.orders.fulfill(test.store.db, order.id, { trackingNumber: '1Z', carrier: 'UPS', lines: new Map([[order.lines[0]!.id, 1]]) });
      await test.store.orders.cancel(test.store.db, order.id, 'Out of stock at the warehouse');

      const [rows] = await allDelivered(test, [order.id], [3]);
      assert.deepEqual(rows!.map((row) => row.topic), ['order.placed', 'order.fulfilled', 'order.canceled']);
      const attempts = receiver.at('/flaky').filter((event) => bodyOf(event).id === order.id);
      assert.equal(attempts.filter((event) => event.status === 200).length, rows!.length, 'one accepted delivery per event');
      assert.equal(attempts.length, rows!.length * 4, 'three refused attempts and one accepted, per event');
      assert.equal(new Set(attempts.map(webhookId)).size, rows!.length, 'one Webhook-Id per event, kept across its retries');
      for (const row of rows!) {
        const tries = attempts.filter((event) => webhookId(event) === row.event_id);
        assert.deepEqual(tries.map((event) => event.status), [503, 503, 503, 200], row.topic);
        assert.ok(tries.every((event) => event.body.equals(tries[0]!.body)), `${row.topic}: the same body bytes on every attempt`);
        assert.equal(tries[0]!.body.toString('utf8'), row.body, row.topic);
        assert.ok(tries.every((event) => event.headers['webhook-timestamp'] === tries[0]!.headers['webhook-timestamp']), `${row.topic}: the same Webhook-Timestamp`);
        for (const event of tries) assert.deepEqual(await verificationProblems(event, keys, receiver.origin), [], `${row.topic}: every attempt is signed`);
        assert.deepEqual(officialSchemaErrors(OfficialSchema.order, bodyOf(tries[0]!)), [], row.topic);
        assert.equal(row.attempts, 4, `${row.topic}: attempts`);
        assert.equal(row.failed, false);
        assert.equal(row.last_error, null, `${row.topic}: a delivered row keeps no error`);
      }
    });

    if (backend.name === 'postgres') {
      describe('two instances on one PostgreSQL', () => {
        let second: TestStore;
        before(async () => {
          second = await startTestStore(backend, { database: test.database, deliver: true, config: deliveryConfig(mailDir) });
          assert.ok(second.store.outbox, 'the second instance delivers too');
        });
        after(() => second?.close());

        it('deliver each event of orders placed and fulfilled through either instance exactly once', async () => {
          const instances = [test, second];
          const orders = await Promise.all(
            [0, 1, 2, 3, 4].map((n) => placeOrder('/shared', [['ESP-CLA-10', 2], ['ESP-DEC-10', 1]], instances[n % 2])),
          );
          await Promise.all(
            orders.map((order, n) => {
              const on = instances[(n + 1) % 2]!;
              return on.store.orders.fulfill(on.store.db, order.id, { trackingNumber: `1Z${n}`, carrier: 'UPS', lines: new Map([[order.lines[0]!.id, 1]]) });
            }),
          );
          await Promise.all(orders.slice(0, 2).map((order, n) => instances[n % 2]!.store.orders.cancel(instances[n % 2]!.store.db, order.id)));
          const expected = orders.map((_, n) => (n < 2 ? 3 : 2));

          const rows = (await allDelivered(test, orders.map((order) => order.id), expected)).flat();
          await sleep(GRACE_MS); // a second copy, if one were coming, would arrive by now
          const arrived = receiver.at('/shared');
          assert.equal(arrived.length, rows.length, `${rows.length} events, ${arrived.length} deliveries`);
          assert.equal(new Set(arrived.map(webhookId)).size, rows.length, 'each Webhook-Id once');
          assert.deepEqual(new Set(arrived.map(webhookId)), new Set(rows.map((row) => row.event_id)));
          assert.ok(arrived.every((event) => event.status === 200));
          assert.ok(rows.every((row) => row.attempts === 1), `each row attempted once: ${rows.map((row) => row.attempts).join(',')}`);
          // Both instances sign with the one key the database keeps, which the profile publishes.
          const secondKeys = (await getJson(second.app, '/.well-known/ucp')).body.keys as PublishedJwk[];
          assert.deepEqual(secondKeys, keys);
          for (const event of arrived) {
            assert.deepEqual(await verificationProblems(event, keys, receiver.origin), []);
            assert.deepEqual(officialSchemaErrors(OfficialSchema.order, bodyOf(event)), []);
          }
        });

        // Delivery docs: a message is sent twice only when a process dies between the receiver accepting it and the
        // store recording that. Here no process dies: the platform takes 8 s to answer (within the 10 s webhook deadline),
        // longer than the lease (OUTBOX_LEASE, 5 s here, the least the configuration accepts).
        it('a platform slower than the lease (yet within the webhook deadline) still gets the event once', async () => {
          const order = await placeOrder('/slow', [['ESP-CLA-10', 1]]);
          const [rows] = await allDelivered(test, [order.id], [1]);
          await sleep(GRACE_MS);
          const arrived = receiver.at('/slow').filter((event) => webhookId(event) === rows![0]!.event_id);
          assert.equal(arrived.length, 1, `order.placed was posted ${arrived.length} times (attempts recorded: ${rows![0]!.attempts}) while no process died`);
        });
      });
    }
  });
}
