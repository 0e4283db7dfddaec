/**
 * A checkout, with no I/O: what was set (lines, buyer, destination, shipping option), priced against the live
 * catalog and stock, with every reason it cannot be completed yet as a message naming the field at fault (in
 * the domain's names: each door renders it). Its digest binds the buyer's approval to exactly what they were shown.
 */
import { createHash } from 'node:crypto';
import type { CheckoutConfig } from './checkout-options.js';
import { findSellingPlan, itemName, type Purchasable, type VariantLookup } from '../cart/cart.js';
import { formatMoney, planTermsOf, planUnitPrice, planWords, type PlanTerms } from '../catalog/types.js';
import { sellableQuantity, type StockLevels } from '../inventory/stock.js';
import { parseMailbox } from '../fields/mailbox.js';
import { parsePhone } from '../fields/phone.js';
import type { FieldPath } from './fields.js';
import { statusForInformation, type Actor, type CheckoutStatus, type MoveCode, type Refusal } from './machine.js';
import { formatAddress, readUsAddress, shippingOptions, type AddressInput, type PostalAddress, type ShippingOption } from './shipping.js';
import { checkoutTotals, type CheckoutTotals } from './totals.js';

export interface CheckoutLine {
  /** `li_1`, `li_2`, … in the order the lines were given. */
  id: string;
  variantId: number;
  quantity: number;
  sellingPlanId: number | null;
  /** A renewal's line: the subscription's terms (kept when the catalog changes the plan); a cart's line reads the catalog's. */
  plan?: PlanTerms;
  properties: Record<string, string>;
  /** The unit price when the line was last set: a different live price is reported, never applied silently. */
  quotedPrice: number | null;
}

export interface Buyer {
  email?: string;
  firstName?: string;
  lastName?: string;
  phoneNumber?: string;
}

export type Channel = 'agent' | 'browser';

/** A checkout as stored. */
export interface CheckoutRecord {
  id: string;
  status: CheckoutStatus;
  cartToken: string | null;
  lines: CheckoutLine[];
  buyer: Buyer;
  /** The shipping address as the client gave it (its problems are reported on every read). */
  destination: AddressInput | null;
  shippingOption: string | null;
  channel: Channel;
  /** Where the agent's platform asked to hear of the order (its profile's order webhook), if anywhere. */
  webhookUrl: string | null;
  /** The platform whose agent created or last updated it (the host of its profile), if an agent did. */
  agentPlatform?: string | null;
  /** The cart's note and attributes (Shopify's cart/update.js), carried to the order; none for an agent's own lines. */
  note: string | null;
  attributes: Record<string, string>;
  version: number;
  orderId: string | null;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** A fact about a checkout (a refusal's code, field and params) with its kind and who can resolve it. */
export interface CheckoutMessage extends Refusal {
  type: 'error' | 'warning' | 'info';
  severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
}

export interface PricedCheckoutLine {
  line: CheckoutLine;
  /** Undefined when the variant is no longer sold. */
  item: Purchasable | undefined;
  title: string;
  productTitle: string;
  variantTitle: string;
  sku: string | null;
  unitPrice: number;
  /** The one-time unit price: the plan's saving is (fullUnitPrice - unitPrice) per unit. */
  fullUnitPrice: number;
  /** The selling plan the line is bought on, as it applies now (a renewal's own terms, else the catalog's plan). */
  plan: PlanTerms | undefined;
  lineTotal: number;
  /** Units of this line beyond the stock on hand now, sold under a continue-selling policy: they ship later. */
  backordered: number;
}

/** A checkout as every door shows it: priced now, with its messages and what blocks completion. */
export interface CheckoutView {
  record: CheckoutRecord;
  lines: PricedCheckoutLine[];
  address: PostalAddress | undefined;
  options: ShippingOption[];
  selectedOption: ShippingOption | undefined;
  totals: CheckoutTotals;
  messages: CheckoutMessage[];
  /** Why it cannot be completed yet; empty when it can. */
  blockers: Refusal[];
  expired: boolean;
}

/** The plan a line is bought on: its own terms (a renewal's), else the catalog's plan of that id, if it still offers it. */
export function linePlan(item: Purchasable, line: Pick<CheckoutLine, 'sellingPlanId' | 'plan'>): PlanTerms | undefined {
  if (line.plan) return line.plan;
  const found = line.sellingPlanId === null ? undefined : findSellingPlan(item.product, line.sellingPlanId);
  return found ? planTermsOf(found.group, found.plan) : undefined;
}

export function unitPrice(item: Purchasable, line: Pick<CheckoutLine, 'sellingPlanId' | 'plan'>): number {
  const plan = linePlan(item, line);
  return plan ? planUnitPrice(item.variant.priceCents, plan.discountPercent) : item.variant.priceCents;
}

function priceLine(line: CheckoutLine, lookup: VariantLookup): PricedCheckoutLine {
  const item = lookup(line.variantId);
  if (!item) {
    const price = line.quotedPrice ?? 0;
    return {
      line,
      item,
      title: `Variant ${line.variantId}`,
      productTitle: '',
      variantTitle: '',
      sku: null,
      unitPrice: price,
      fullUnitPrice: price,
      plan: line.plan,
      lineTotal: price * line.quantity,
      backordered: 0,
    };
  }
  const plan = linePlan(item, line);
  const price = plan ? planUnitPrice(item.variant.priceCents, plan.discountPercent) : item.variant.priceCents;
  return {
    line,
    item,
    title: itemName(item),
    productTitle: item.product.title,
    variantTitle: item.variant.title,
    sku: item.variant.sku,
    unitPrice: price,
    fullUnitPrice: item.variant.priceCents,
    plan,
    lineTotal: price * line.quantity,
    backordered: 0,
  };
}

/**
 * Units beyond stock per line, for tracked variants sold past zero (continue policy): the stock on hand goes to
 * the earlier lines of a variant first, as the approval takes it.
 */
function markBackorders(lines: PricedCheckoutLine[], stock: StockLevels): void {
  const left = new Map<number, number>();
  for (const priced of lines) {
    const variant = priced.item?.variant;
    if (!variant || !variant.inventoryTracked || variant.inventoryPolicy !== 'continue') continue;
    const onHand = left.get(variant.id) ?? Math.max(0, stock.onHand(variant.id));
    priced.backordered = Math.max(0, priced.line.quantity - onHand);
    left.set(variant.id, Math.max(0, onHand - priced.line.quantity));
  }
}

const money = (cents: number) => formatMoney(cents);

/** Prices a checkout now and says what is missing or wrong, each naming its field. */
export function viewCheckout(record: CheckoutRecord, lookup: VariantLookup, stock: StockLevels, config: CheckoutConfig, now: Date): CheckoutView {
  const lines = record.lines.map((line) => priceLine(line, lookup));
  markBackorders(lines, stock);
  const messages: CheckoutMessage[] = [];
  const blockers: Refusal[] = [];
  const block = (message: CheckoutMessage) => {
    messages.push(message);
    const { type: _type, severity: _severity, ...refusal } = message;
    blockers.push(refusal);
  };

  if (lines.length === 0) block({ type: 'error', code: 'empty_checkout', content: 'The checkout has no items.', severity: 'recoverable', field: ['lines'] });
  const demand = new Map<number, number>();
  for (const priced of lines) demand.set(priced.line.variantId, (demand.get(priced.line.variantId) ?? 0) + priced.line.quantity);
  lines.forEach((priced, index) => {
    const field: FieldPath = ['lines', index];
    const title = priced.title;
    if (!priced.item) {
      const variantId = priced.line.variantId;
      block({ type: 'error', code: 'item_unavailable', content: `Variant ${variantId} is no longer sold; remove the line.`, severity: 'recoverable', field, params: { variantId } });
      return;
    }
    const sellable = sellableQuantity(priced.item.variant, stock);
    const wanted = demand.get(priced.line.variantId) ?? 0;
    if (sellable <= 0) {
      block({ type: 'error', code: 'out_of_stock', content: `${title} is sold out; remove the line.`, severity: 'recoverable', field, params: { title } });
    } else if (wanted > sellable) {
      block({
        type: 'error',
        code: 'insufficient_stock',
        content: `Only ${sellable} of ${title} left; lower the quantity.`,
        severity: 'recoverable',
        field,
        params: { title, available: sellable },
      });
    }
    if (priced.backordered > 0) {
      messages.push({
        type: 'warning',
        code: 'backordered',
        content: `${priced.backordered} of ${priced.line.quantity} ${title} ship later: they are sold beyond the stock on hand (backordered).`,
        field,
        params: { title, backordered: priced.backordered, quantity: priced.line.quantity },
      });
    }
    if (priced.line.quotedPrice !== null && priced.line.quotedPrice !== priced.unitPrice) {
      messages.push({
        type: 'warning',
        code: 'price_changed',
        content: `The price of ${title} changed from ${money(priced.line.quotedPrice)} to ${money(priced.unitPrice)}.`,
        field,
        params: { title, from: priced.line.quotedPrice, to: priced.unitPrice },
      });
    }
  });

  const email = record.buyer.email;
  if (!email) block({ type: 'error', code: 'missing', content: "The buyer's email is needed for the order confirmation.", severity: 'recoverable', field: ['buyer', 'email'] });
  // Refused at entry since the one email rule; a checkout stored before then may still hold one the mailer cannot use.
  else if (parseMailbox(email) === undefined) {
    const given = email.slice(0, 80);
    block({ type: 'error', code: 'invalid', content: `"${given}" is not an email address.`, severity: 'recoverable', field: ['buyer', 'email'], params: { email: given } });
  }
  // Likewise a phone stored before the phone rule (src/fields/phone.ts).
  const phone = record.buyer.phoneNumber?.trim();
  if (phone && parsePhone(phone) === undefined) {
    block({ type: 'error', code: 'invalid', content: "The buyer's phone is not a phone number (such as (415) 555-0100).", severity: 'recoverable', field: ['buyer', 'phoneNumber'] });
  }

  let address: PostalAddress | undefined;
  if (!record.destination) {
    block({ type: 'error', code: 'missing', content: 'A US shipping address is needed.', severity: 'recoverable', field: ['destination'] });
  } else {
    // The recipient is the address's name, or the buyer's when the address names nobody.
    const read = readUsAddress(record.destination, record.buyer);
    address = read.address;
    for (const problem of read.problems) {
      const { field, ...fact } = problem;
      block({ type: 'error', ...fact, severity: 'recoverable', field: ['destination', field] });
    }
  }

  const subtotal = lines.reduce((sum, priced) => sum + priced.lineTotal, 0);
  const options = shippingOptions(config, subtotal);
  let selectedOption: ShippingOption | undefined;
  if (record.shippingOption === null) {
    // The options themselves are the view's `options`: each door names them its own way.
    block({
      type: 'error',
      code: 'missing',
      content: `Choose a shipping option: ${options.map((o) => `${o.title} (${money(o.amount)})`).join(' or ')}.`,
      severity: 'recoverable',
      field: ['shippingOption'],
    });
  } else {
    selectedOption = options.find((option) => option.id === record.shippingOption);
    if (!selectedOption) {
      const given = record.shippingOption.slice(0, 40);
      block({
        type: 'error',
        code: 'invalid',
        content: `"${given}" is not a shipping option; choose ${options.map((o) => o.title).join(' or ')}.`,
        severity: 'recoverable',
        field: ['shippingOption'],
        params: { option: given },
      });
    }
  }

  const expired = now.getTime() >= record.expiresAt.getTime();
  const totals = checkoutTotals(subtotal, selectedOption?.amount, address ? config.taxRatesBps[address.region] ?? 0 : undefined);
  return { record, lines, address, options, selectedOption, totals, messages, blockers, expired };
}

const NOTHING_ORDERED = 'Nothing was ordered or charged.';

const CANCELED_BY: Record<Actor, string> = {
  agent: 'The agent canceled this checkout.',
  buyer: 'The buyer canceled this checkout.',
  merchant: 'The store canceled this checkout.',
  system: 'The store canceled this checkout.',
};

/**
 * What a client is told of the checkout's latest move, when it must be: why the checkout is canceled (declined by the
 * buyer, expired, canceled by someone), or that the buyer's approval placed nothing because items sold out meanwhile.
 * A canceled checkout always says why (a cancel recorded without a code: by its actor).
 */
export function moveNotice(move: { to: CheckoutStatus; code?: MoveCode | null; actor: Actor }): CheckoutMessage | undefined {
  const by = move.actor;
  switch (move.code ?? (move.to === 'canceled' ? 'checkout_canceled' : undefined)) {
    case 'checkout_declined':
      return { type: 'info', code: 'checkout_declined', content: `The buyer declined this order on the approval page. ${NOTHING_ORDERED}`, params: { by } };
    case 'checkout_expired':
      return { type: 'info', code: 'checkout_expired', content: `This checkout expired before an order was placed. ${NOTHING_ORDERED}`, params: { by } };
    case 'checkout_canceled':
      return { type: 'info', code: 'checkout_canceled', content: `${CANCELED_BY[by]} ${NOTHING_ORDERED}`, params: { by } };
    case 'sold_out_at_approval':
      return {
        type: 'warning',
        code: 'sold_out_at_approval',
        content: `Items sold out while the checkout waited for the buyer's approval, so ${NOTHING_ORDERED.toLowerCase()} That approval no longer works.`,
        params: { by },
      };
    default:
      return undefined;
  }
}

/** What a client is told of a completed checkout whose order the merchant canceled afterwards. */
export function orderCanceledNotice(order: { number: number; reason: string | null }): CheckoutMessage {
  const why = order.reason ? `: ${order.reason.replace(/[.\s]+$/, '')}` : '';
  return { type: 'info', code: 'order_canceled', content: `The store canceled order #${order.number} after it was placed${why}.`, params: { number: order.number, reason: order.reason ?? '' } };
}

/** Whether some of the checkout's items are sold out, or fewer are left than it asks for (what blocks it is stock). */
export function itemsSoldOut(view: Pick<CheckoutView, 'blockers'>): boolean {
  return view.blockers.some((blocker) => blocker.code === 'out_of_stock' || blocker.code === 'insufficient_stock');
}

/** Where information alone puts this checkout (ready or incomplete). */
export function informationStatus(view: CheckoutView): 'incomplete' | 'ready_for_complete' {
  return statusForInformation(view.blockers);
}

/** What the buyer approves: every line with its price, the address, the option and the totals. */
export interface ApprovalSummary {
  lines: {
    id: string;
    title: string;
    sku: string | null;
    quantity: number;
    unitPrice: number;
    lineTotal: number;
    sellingPlanId: number | null;
    /** The plan in words (name, interval, saving), when the line is a subscription. */
    plan?: string;
    properties: Record<string, string>;
  }[];
  email: string;
  address: string[];
  shipping: { id: string; title: string; amount: number };
  totals: CheckoutTotals;
  /** The cart's note and attributes, when it has any. */
  note?: string;
  attributes?: Record<string, string>;
}

export function approvalSummary(view: CheckoutView): ApprovalSummary {
  return {
    lines: view.lines.map((priced) => ({
      id: priced.line.id,
      title: priced.title,
      sku: priced.sku,
      quantity: priced.line.quantity,
      unitPrice: priced.unitPrice,
      lineTotal: priced.lineTotal,
      sellingPlanId: priced.line.sellingPlanId,
      ...(priced.plan ? { plan: planWords(priced.plan) } : {}),
      properties: priced.line.properties,
    })),
    email: view.record.buyer.email ?? '',
    address: view.address ? formatAddress(view.address) : [],
    shipping: view.selectedOption ? { id: view.selectedOption.id, title: view.selectedOption.title, amount: view.selectedOption.amount } : { id: '', title: '', amount: 0 },
    totals: view.totals,
    ...(view.record.note ? { note: view.record.note } : {}),
    ...(Object.keys(view.record.attributes ?? {}).length > 0 ? { attributes: view.record.attributes } : {}),
  };
}

/** The digest of what the buyer approves: any change to lines, quantities, prices, address, option or totals changes it. */
export function checkoutDigest(summary: ApprovalSummary): string {
  return createHash('sha256').update(JSON.stringify(summary)).digest('base64url');
}

/** Summary lines by title and turn: two lines of one variant share a title and must not hide each other. */
function linesByTitle(lines: ApprovalSummary['lines']): Map<string, ApprovalSummary['lines'][number]> {
  const turns = new Map<string, number>();
  return new Map(
    lines.map((line) => {
      const turn = (turns.get(line.title) ?? 0) + 1;
      turns.set(line.title, turn);
      return [JSON.stringify([line.title, turn]), line];
    }),
  );
}

/** What differs between what the buyer was shown and the checkout now, in words. */
export function describeChanges(before: ApprovalSummary, after: ApprovalSummary): string[] {
  const changes: string[] = [];
  const afterLines = linesByTitle(after.lines);
  const beforeLines = linesByTitle(before.lines);
  for (const [key, line] of beforeLines) {
    const { title } = line;
    const now = afterLines.get(key);
    if (!now) changes.push(`${title} was removed.`);
    else {
      if (now.quantity !== line.quantity) changes.push(`The quantity of ${title} changed from ${line.quantity} to ${now.quantity}.`);
      if (now.unitPrice !== line.unitPrice) changes.push(`The price of ${title} changed from ${money(line.unitPrice)} to ${money(now.unitPrice)}.`);
    }
  }
  for (const [key, line] of afterLines) if (!beforeLines.has(key)) changes.push(`${line.title} (${line.quantity}) was added.`);
  if (before.address.join('\n') !== after.address.join('\n')) changes.push('The shipping address changed.');
  if (before.email !== after.email) changes.push('The email address changed.');
  if ((before.note ?? '') !== (after.note ?? '') || JSON.stringify(before.attributes ?? {}) !== JSON.stringify(after.attributes ?? {})) {
    changes.push('The note changed.');
  }
  if (before.shipping.id !== after.shipping.id || before.shipping.amount !== after.shipping.amount) {
    changes.push(`Shipping changed from ${before.shipping.title || 'none'} (${money(before.shipping.amount)}) to ${after.shipping.title || 'none'} (${money(after.shipping.amount)}).`);
  }
  if (before.totals.total !== after.totals.total) changes.push(`The total changed from ${money(before.totals.total)} to ${money(after.totals.total)}.`);
  if (changes.length === 0) changes.push('The checkout changed.');
  return changes;
}
