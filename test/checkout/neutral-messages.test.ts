/**
 * One fact, rendered per door (issue: "one domain, rendered per door and per release"): the checkout's messages and
 * refusals leave the domain as a code, a field in the domain's names and params; the UCP door renders them as
 * messages with the JSONPath of each release, the pages as sentences for a buyer. No protocol words in the domain.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { viewCheckout, type CheckoutMessage, type CheckoutRecord } from '../../src/checkout/checkout.js';
import type { FieldPath } from '../../src/checkout/fields.js';
import { refusal } from '../../src/checkout/machine.js';
import { shippingOptions } from '../../src/checkout/shipping.js';
import { buyerSentence as buyerSentenceHtml } from '../../src/storefront/pages/checkout-sentences.js';
import { ucpBuyerApprovalMessage, ucpMessage, ucpPath, ucpRefusal } from '../../src/ucp/checkout/ucp-messages.js';
import { UCP_RELEASES } from '../../src/ucp/protocol.js';
import { cartTools } from '../../src/ucp/tools/cart-tools.js';
import { catalogTools } from '../../src/ucp/tools/catalog-tools.js';
import { checkoutTools } from '../../src/ucp/tools/checkout-tools.js';
import { PROJECT_ROOT } from '../helpers/project-root.js';
import { testConfig } from '../helpers/store.js';

const SRC = path.join(PROJECT_ROOT, 'src');
const DOMAIN_FOLDERS = ['checkout', 'orders', 'payments'];

function typescriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * What the domain must not say, anywhere in a file's text (code, strings and comments alike). None of these can be
 * SQL: a column such as `line_items` is the database's and is not looked for, so no SQL string needs excluding.
 */
function protocolWords(): { name: string; pattern: RegExp }[] {
  const tools = [...catalogTools, ...cartTools, ...checkoutTools].map((tool) => tool.name);
  assert.ok(tools.length >= 10, 'the UCP tools are listed');
  return [
    { name: 'a JSONPath', pattern: /\$\.[A-Za-z_[]|\$\[/ },
    { name: 'continue_url', pattern: /continue_url/ },
    { name: 'a UCP checkout member path', pattern: /selected_option_id|fulfillment\.methods|destinations\[/ },
    { name: 'a UCP postal_address member name', pattern: /\b(street_address|extended_address|address_locality|address_region|postal_code|address_country)\b/ },
    ...tools.map((tool) => ({ name: `the tool ${tool}`, pattern: new RegExp(`\\b${tool}\\b`) })),
  ];
}

const FIELDS: [FieldPath, string][] = [
  [['lines'], '$.line_items'],
  [['lines', 3], '$.line_items[3]'],
  [['lines', 1, 'variant'], '$.line_items[1].item.id'],
  [['lines', 0, 'quantity'], '$.line_items[0].quantity'],
  [['buyer', 'email'], '$.buyer.email'],
  [['buyer', 'phoneNumber'], '$.buyer.phone_number'],
  [['destination'], '$.fulfillment.methods[0].destinations[0]'],
  [['destination', 'firstName'], '$.fulfillment.methods[0].destinations[0].first_name'],
  [['destination', 'streetAddress'], '$.fulfillment.methods[0].destinations[0].street_address'],
  [['destination', 'locality'], '$.fulfillment.methods[0].destinations[0].address_locality'],
  [['destination', 'region'], '$.fulfillment.methods[0].destinations[0].address_region'],
  [['destination', 'postalCode'], '$.fulfillment.methods[0].destinations[0].postal_code'],
  [['destination', 'country'], '$.fulfillment.methods[0].destinations[0].address_country'],
  [['destination', 'phoneNumber'], '$.fulfillment.methods[0].destinations[0].phone_number'],
  [['shippingOption'], '$.fulfillment.methods[0].groups[0].selected_option_id'],
];

const config = testConfig().checkout;
const options = shippingOptions(config, 1000);
const NOW = new Date('2026-05-01T12:00:00Z');

/** A checkout with something wrong in every field: a line no longer sold, no email, a bad address, an unknown option. */
function troubledView() {
  const record: CheckoutRecord = {
    id: 'chk_test',
    status: 'incomplete',
    cartToken: null,
    lines: [{ id: 'li_1', variantId: 4242, quantity: 1, sellingPlanId: null, properties: {}, quotedPrice: 500 }],
    buyer: {},
    destination: { streetAddress: '1 Market St', region: 'ZZ', postalCode: '1', country: 'FR' },
    shippingOption: 'overnight',
    channel: 'agent',
    note: null,
    attributes: {},
    webhookUrl: null,
    version: 0,
    orderId: null,
    expiresAt: new Date(NOW.getTime() + 3600_000),
    createdAt: NOW,
    updatedAt: NOW,
  };
  return viewCheckout(record, () => undefined, { onHand: () => 0 }, config, NOW);
}

describe('the domain speaks no protocol', () => {
  it('no file under src/checkout, src/orders or src/payments holds a JSONPath, continue_url, a UCP member path or a UCP tool name', () => {
    const words = protocolWords();
    const found: string[] = [];
    for (const folder of DOMAIN_FOLDERS) {
      const files = typescriptFiles(path.join(SRC, folder));
      assert.ok(files.length > 0, folder);
      for (const file of files) {
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, index) => {
            for (const word of words) if (word.pattern.test(line)) found.push(`${path.relative(SRC, file)}:${index + 1}: ${word.name}`);
          });
      }
    }
    assert.deepEqual(found, []);
  });

  it('the scan would catch each kind of word', () => {
    const words = protocolWords();
    for (const sample of ["path: '$.buyer.email'", '`$.line_items[${i}]`', 'the page (continue_url)', 'groups[0].selected_option_id', 'from search_catalog', 'get_cart answers']) {
      assert.ok(words.some((word) => word.pattern.test(sample)), sample);
    }
    for (const sql of ['insert into order_fulfillments (id, order_id, type, line_items)', 'where id = $1 and total >= $2']) {
      assert.ok(!words.some((word) => word.pattern.test(sql)), sql);
    }
  });

  it("a checkout's messages name fields in the domain's words, with the figures a door needs as params", () => {
    const view = troubledView();
    assert.deepEqual(
      view.messages.map((m) => [m.code, m.field, m.params]),
      [
        ['item_unavailable', ['lines', 0], { variantId: 4242 }],
        ['missing', ['buyer', 'email'], undefined],
        ['missing', ['destination', 'firstName'], undefined],
        ['address_undeliverable', ['destination', 'country'], { country: 'FR' }],
        ['missing', ['destination', 'locality'], undefined],
        ['invalid', ['destination', 'region'], { region: 'ZZ' }],
        ['invalid', ['destination', 'postalCode'], undefined],
        ['invalid', ['shippingOption'], { option: 'overnight' }],
      ],
    );
    assert.deepEqual(
      view.blockers.map((b) => [b.code, b.field]),
      view.messages.map((m) => [m.code, m.field]),
      'every error blocks completion, naming the same field',
    );
  });
});

describe('the UCP door renders each fact as a message of the release', () => {
  for (const release of UCP_RELEASES) {
    it(`${release}: every field has the JSONPath of its UCP member`, () => {
      for (const [field, jsonPath] of FIELDS) assert.equal(ucpPath(field, release), jsonPath, JSON.stringify(field));
    });
  }

  it("a view's messages keep type, code and severity, gain the path, and speak the agent's words", () => {
    const view = troubledView();
    const messages = view.messages.map((message) => ucpMessage(message, '2026-04-08', view.options));
    assert.deepEqual(
      messages.map((m) => [m.type, m.code, m.severity, m.path]),
      [
        ['error', 'item_unavailable', 'recoverable', '$.line_items[0]'],
        ['error', 'missing', 'recoverable', '$.buyer.email'],
        ['error', 'missing', 'recoverable', '$.fulfillment.methods[0].destinations[0].first_name'],
        ['error', 'address_undeliverable', 'recoverable', '$.fulfillment.methods[0].destinations[0].address_country'],
        ['error', 'missing', 'recoverable', '$.fulfillment.methods[0].destinations[0].address_locality'],
        ['error', 'invalid', 'recoverable', '$.fulfillment.methods[0].destinations[0].address_region'],
        ['error', 'invalid', 'recoverable', '$.fulfillment.methods[0].destinations[0].postal_code'],
        ['error', 'invalid', 'recoverable', '$.fulfillment.methods[0].groups[0].selected_option_id'],
      ],
    );
    assert.match(messages[2]!.content, /recipient's name: the destination's first_name and\/or last_name/);
    assert.match(messages[4]!.content, /\(address_locality\)/);
    assert.match(messages[5]!.content, /"ZZ" is not a US state code \(address_region/);
    assert.match(messages[7]!.content, /^"overnight" is not a shipping option; choose standard or express\.$/);
  });

  it('a missing option lists the option ids with their titles and prices', () => {
    const missing: CheckoutMessage = { type: 'error', code: 'missing', content: 'Choose a shipping option.', severity: 'recoverable', field: ['shippingOption'] };
    const message = ucpMessage(missing, '2026-08-25', options);
    assert.match(message.content, /^Choose a shipping option: standard \(Standard shipping, \$\d+\.\d\d\) or express \(Express shipping, \$\d+\.\d\d\)\.$/);
    assert.equal(message.path, '$.fulfillment.methods[0].groups[0].selected_option_id');
  });

  it('a warning has no severity, and a fact without words of its own keeps the domain sentence', () => {
    const warning: CheckoutMessage = { type: 'warning', code: 'price_changed', content: 'The price of Tea changed from $1.00 to $2.00.', field: ['lines', 2], params: { title: 'Tea', from: 100, to: 200 } };
    assert.deepEqual(ucpMessage(warning, '2026-04-08'), { type: 'warning', code: 'price_changed', content: warning.content, path: '$.line_items[2]' });
  });

  it('a refusal naming a field is recoverable at its path; one naming none is unrecoverable without a path', () => {
    const unknown = ucpRefusal({ code: 'not_found', content: 'Cannot find variant 9.', field: ['lines', 1, 'variant'], params: { variantId: 9 } }, '2026-04-08');
    assert.deepEqual(unknown, {
      type: 'error',
      code: 'not_found',
      content: 'Cannot find variant 9: an item id is a variant id from search_catalog or lookup_catalog.',
      severity: 'recoverable',
      path: '$.line_items[1].item.id',
    });
    const quantity = ucpRefusal({ code: 'quantity_limit', content: 'The quantity of Tea must be from 1 to 99.', field: ['lines', 0, 'quantity'] }, '2026-08-25');
    assert.equal(quantity.path, '$.line_items[0].quantity');
    const closed = ucpRefusal(refusal('completed', 'incomplete', { actor: 'agent', blockers: [], approvedByBuyer: false, expired: false })!, '2026-04-08');
    assert.deepEqual([closed.code, closed.severity, 'path' in closed], ['checkout_closed', 'unrecoverable', false]);
  });

  it("the agent is told of the approval page by its UCP name, continue_url; the machine's own words do not name it", () => {
    const machine = refusal('ready_for_complete', 'complete_in_progress', { actor: 'agent', blockers: [], approvedByBuyer: false, expired: false })!;
    assert.equal(machine.code, 'buyer_approval_required');
    assert.doesNotMatch(machine.content, /continue_url/);
    assert.match(ucpRefusal(machine, '2026-04-08').content, /approval page \(continue_url\)/);
    for (const mode of ['passkey-or-code', 'code', 'link'] as const) {
      const message = ucpBuyerApprovalMessage(mode, '2026-04-08');
      assert.deepEqual([message.type, message.code, message.severity], ['error', 'buyer_approval_required', 'requires_buyer_review']);
      assert.match(message.content, /continue_url/);
    }
  });
});

describe('the pages render each fact as a sentence for the buyer', () => {
  // The page's markup of the sentence: typed text in it is isolated in <bdi>.
  const buyerSentence = (...args: Parameters<typeof buyerSentenceHtml>) => String(buyerSentenceHtml(...args));
  const PROTOCOL = /\$\.|\$\[|line_items|selected_option|fulfillment|address_|postal_code|street_address|continue_url|_checkout|_cart|search_catalog/;

  it("every message of a troubled checkout reads as a sentence with no path, member name or option id", () => {
    const view = troubledView();
    const sentences = view.messages.map((message) => buyerSentence(message, view.options));
    for (const sentence of sentences) {
      assert.doesNotMatch(sentence, PROTOCOL, sentence);
      assert.match(sentence, /^[A-Z"].*[.]$/, sentence);
    }
    assert.deepEqual(sentences.slice(1, 6), [
      'Your email address is needed for the order confirmation.',
      'The shipping address needs the name of the person it goes to.',
      'This store ships only to addresses in the United States.',
      'The shipping address needs a city.',
      '"<bdi>ZZ</bdi>" is not a US state.',
    ]);
    assert.match(sentences[7]!, /^The shipping chosen is not one this store offers; it offers Standard shipping \(\$\d+\.\d\d\) or Express shipping \(\$\d+\.\d\d\)\.$/);
  });

  it('a missing option names the options by their titles and prices, never their ids', () => {
    const missing: CheckoutMessage = { type: 'error', code: 'missing', content: 'Choose a shipping option.', severity: 'recoverable', field: ['shippingOption'] };
    const sentence = buyerSentence(missing, options);
    assert.match(sentence, /^A shipping choice is needed: Standard shipping \(\$\d+\.\d\d\) or Express shipping \(\$\d+\.\d\d\)\.$/);
    assert.doesNotMatch(sentence, /\bstandard\b|\bexpress\b/);
  });

  it('stock, backorder and price facts name the item and the figures', () => {
    const line: FieldPath = ['lines', 0];
    assert.equal(buyerSentence({ code: 'insufficient_stock', content: '', field: line, params: { title: 'Tea', available: 2 } }), 'Only 2 of Tea left, fewer than your checkout asks for.');
    assert.equal(buyerSentence({ code: 'backordered', content: '', field: line, params: { title: 'Tea', backordered: 1, quantity: 3 } }), '1 of the 3 Tea ship later, when they are back in stock.');
    assert.equal(buyerSentence({ code: 'price_changed', content: '', field: line, params: { title: 'Tea', from: 650, to: 700 } }), 'The price of Tea changed from $6.50 to $7.00.');
  });

  it("a fact with no sentence of its own reads as the domain's default, as a sentence", () => {
    assert.equal(buyerSentence({ code: 'checkout_expired', content: 'this checkout has expired; start a new one' }), 'This checkout has expired; start a new one.');
  });
});
