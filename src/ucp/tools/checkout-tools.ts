/**
 * The checkout and order tools of the UCP MCP binding (dev.ucp.shopping.checkout with the fulfillment
 * extension, dev.ucp.shopping.order): adapters over the checkout service. An agent may do everything but pay:
 * `complete_checkout` never places an order. It answers the checkout in `requires_escalation` with a
 * `continue_url` to the store's approval page, where the buyer approves (or declines) at that moment. No tool,
 * argument or header completes a checkout.
 */
import { CheckoutNotFound, CheckoutRefused, type CheckoutAnswer, type CheckoutInput, type LineInput } from '../../checkout/checkout-service.js';
import type { AddressInput } from '../../checkout/shipping.js';
import { parseId } from '../../catalog/ids.js';
import { readOrder } from '../../orders/orders.js';
import { POSTAL_ADDRESS_MEMBERS, ucpCheckout, ucpOrder } from '../checkout/ucp-checkout.js';
import { ucpPath, ucpRefusal, ucpTextPath } from '../checkout/ucp-messages.js';
import { CheckoutFieldRefused, type FieldPath } from '../../checkout/fields.js';
import { fieldFaultSentence } from '../../fields/person-fields.js';
import { rememberRelease } from '../webhooks/agent-releases.js';
import { Capability } from '../protocol.js';
import { defineTool, errorOutcome, outcome, runIdempotently, type KeyedMeta, type ToolContext, type ToolOutcome } from './tool.js';
import {
  cancelCheckoutInput,
  checkoutOutput,
  completeCheckoutInput,
  createCheckoutInput,
  getCheckoutInput,
  getOrderInput,
  invalidArguments,
  orderOutput,
  updateCheckoutInput,
} from './tool-schemas.js';

type Json = Record<string, unknown>;


const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
// What is not text, or blank, is not given; a text's length and characters are the checkout's to refuse (src/fields).
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** Arguments the checkout cannot be given as they are: the field (in the domain's names) and what is wrong. */
class InputProblem extends Error {
  constructor(
    message: string,
    readonly field: FieldPath,
  ) {
    super(message);
  }
}

function lineInputs(raw: unknown): LineInput[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new InputProblem('line_items must be a list of {item: {id}, quantity}.', ['lines']);
  return raw.map((line: unknown, index) => {
    const item = isObject(line) && isObject(line.item) ? line.item : undefined;
    const variantId = typeof item?.id === 'string' ? parseId(item.id) : undefined;
    if (variantId === undefined) {
      throw new InputProblem(
        `Cannot find variant ${JSON.stringify(String(item?.id ?? '').slice(0, 40))}: an item id is a variant id (products[].variants[].id from search_catalog or lookup_catalog).`,
        ['lines', index, 'variant'],
      );
    }
    return { variantId, quantity: (line as Json).quantity as number };
  });
}

function buyerInput(raw: unknown): CheckoutInput['buyer'] {
  if (!isObject(raw)) return undefined;
  const buyer = { email: text(raw.email), firstName: text(raw.first_name), lastName: text(raw.last_name), phoneNumber: text(raw.phone_number) };
  return Object.fromEntries(Object.entries(buyer).filter(([, value]) => value !== undefined));
}

/** A UCP postal address (its members' names) as the domain's address input; what is not a string is left out. */
function addressInput(raw: Json): AddressInput {
  const input: AddressInput = {};
  for (const [key, member] of Object.entries(POSTAL_ADDRESS_MEMBERS) as [keyof AddressInput, string][]) {
    const value = raw[member];
    if (typeof value === 'string') input[key] = value;
  }
  return input;
}

/** The shipping method's chosen destination (by selected_destination_id, else the only or first one) and option. */
function fulfillmentInput(raw: unknown): { destination: AddressInput | null; shippingOption: string | null } {
  const methods = isObject(raw) && Array.isArray(raw.methods) ? raw.methods.filter(isObject) : [];
  const method = methods.find((m) => m.type === 'shipping') ?? methods[0];
  if (!method) return { destination: null, shippingOption: null };
  const destinations = Array.isArray(method.destinations) ? method.destinations.filter(isObject) : [];
  const selectedId = typeof method.selected_destination_id === 'string' ? method.selected_destination_id : undefined;
  const chosen = (selectedId && destinations.find((d) => d.id === selectedId)) || destinations[0];
  const destination: AddressInput | null = chosen ? addressInput(chosen) : null;
  const groups = Array.isArray(method.groups) ? method.groups.filter(isObject) : [];
  const option = groups.map((g) => g.selected_option_id).find((id): id is string => typeof id === 'string' && id !== '');
  return { destination, shippingOption: option ?? null };
}

function checkoutInput(checkout: Json): CheckoutInput {
  return { lines: lineInputs(checkout.line_items), buyer: buyerInput(checkout.buyer), ...fulfillmentInput(checkout.fulfillment) };
}

function mapping(context: ToolContext) {
  const { config, payments, buyerProof } = context.store;
  return {
    release: context.release,
    baseUrl: config.baseUrl,
    policies: config.checkout.policies,
    payments,
    versions: context.capabilities,
    approvalProof: buyerProof.mode,
    captureOn: config.payment.captureOn,
  };
}

/**
 * The checkout as the agent wrote it. The release its platform hears the order's events in goes with the webhook URL:
 * the creating agent's, and another agent's only when that one's order webhook replaces it.
 */
async function written(answer: CheckoutAnswer, context: ToolContext, options: { created: boolean }): Promise<ToolOutcome> {
  if (options.created || context.orderWebhookUrl !== undefined) await rememberRelease(context.store.db, answer.view.record.id, context.release);
  return checkoutOutcome(answer, context);
}

function checkoutOutcome(answer: CheckoutAnswer, context: ToolContext): ToolOutcome {
  return outcome(ucpCheckout(answer, mapping(context)));
}

function notFound(id: string, context: ToolContext, what = 'checkout'): ToolOutcome {
  return errorOutcome(
    context.release,
    [{ type: 'error', code: 'not_found', content: `No ${what} has the id "${id.slice(0, 64)}".`, severity: 'unrecoverable' }],
    `${context.store.config.baseUrl}/`,
  );
}

/** The checkout, when the buyer's approval has placed (or is placing) its order. */
async function completingCheckout(id: string, context: ToolContext): Promise<CheckoutAnswer | undefined> {
  const answer = await context.store.checkouts.get(context.store.db, id);
  const status = answer?.view.record.status;
  return status === 'completed' || status === 'complete_in_progress' ? answer : undefined;
}

/**
 * Runs a checkout operation; refusals and unknown ids become UCP error results, never JSON-RPC errors. A text that
 * breaks its field's rule is invalid params (-32602) naming the argument, as the tool's schema would.
 */
async function refusing(tool: string, id: string, context: ToolContext, run: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof CheckoutFieldRefused) {
      const path = `$.checkout${ucpTextPath(error.field, context.release).slice(1)}`;
      throw invalidArguments(tool, [{ path, message: `${path} ${fieldFaultSentence(error.fault)}.` }]);
    }
    if (error instanceof CheckoutNotFound) return notFound(error.id === id ? id : error.id, context, error.id === id ? 'checkout' : 'cart');
    if (error instanceof InputProblem) {
      return errorOutcome(context.release, [{ type: 'error', code: 'invalid', content: error.message, severity: 'recoverable', path: ucpPath(error.field, context.release) }]);
    }
    if (error instanceof CheckoutRefused) return errorOutcome(context.release, [ucpRefusal(error.reason, context.release)]);
    throw error;
  }
}

const CHECKOUT_DESCRIPTION =
  'Line items name variants by `item.id` (a variant id from search_catalog or lookup_catalog) with a quantity. Shipping: ' +
  '`fulfillment.methods[0]` of type "shipping" with one US address in `destinations` (its recipient in `first_name` and ' +
  '`last_name`, else the buyer\'s name) and the chosen option in `groups[0].selected_option_id` (the answer lists the ' +
  'options). A `phone_number` is one phone number, stored in E.164. Amounts are integer US cents. `messages` say what is ' +
  'missing, each with the JSONPath of its field; status becomes ready_for_complete when nothing is.';

/** The agent's platform (its profile's host), which the merchant's reports count orders by. */
const platformOf = (context: ToolContext) => (context.agentPlatform === undefined ? {} : { agentPlatform: context.agentPlatform });

type CreateArgs = { checkout: Json & { cart_id?: string }; meta?: KeyedMeta };

export const createCheckoutTool = defineTool<CreateArgs>({
  name: 'create_checkout',
  title: 'Create a checkout',
  description:
    `Start a checkout from line items, or from a cart with \`checkout.cart_id\` (the cart's lines are used; a cart's open checkout is returned rather than a second one). ${CHECKOUT_DESCRIPTION}`,
  capability: Capability.checkout,
  inputSchema: createCheckoutInput,
  outputSchema: checkoutOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args: CreateArgs, context) {
    const { checkouts, db } = context.store;
    const cartId = typeof args.checkout.cart_id === 'string' ? args.checkout.cart_id : undefined;
    return runIdempotently('create_checkout', args, '', context, () =>
      refusing('create_checkout', '', context, async () => {
        const input = checkoutInput(cartId === undefined ? args.checkout : { ...args.checkout, line_items: undefined });
        if (cartId === undefined && input.lines.length === 0) {
          throw new InputProblem('A checkout needs line items, or the cart_id of a cart to check out.', ['lines']);
        }
        // A checkout from line items is stored from nothing, as a new cart is: it counts against the cart-start budget.
        if (cartId === undefined) await context.admitCartStart();
        // The platform hears of the order at its profile's order webhook, when it declared one.
        const webhook = context.orderWebhookUrl === undefined ? {} : { webhookUrl: context.orderWebhookUrl };
        return written(await checkouts.create(db, { ...input, ...webhook, ...platformOf(context), ...(cartId === undefined ? {} : { cartToken: cartId }) }, 'agent', 'agent'), context, { created: true });
      }),
    );
  },
});

export const getCheckoutTool = defineTool<{ id: string }>({
  name: 'get_checkout',
  title: 'Get a checkout',
  description:
    'The checkout as it is now, with its status, totals and messages. Once the buyer approved, status is completed with the `order`. ' +
    'A checkout that placed no order says why in its first message: checkout_declined (the buyer declined on the approval page), ' +
    'checkout_expired, checkout_canceled (and by whom), or sold_out_at_approval (items sold out while the buyer was asked to ' +
    'approve; the checkout is open again, its link void); order_canceled when the store canceled the order afterwards. ' +
    CHECKOUT_DESCRIPTION,
  capability: Capability.checkout,
  inputSchema: getCheckoutInput,
  outputSchema: checkoutOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args: { id: string }, context) {
    const answer = await context.store.checkouts.get(context.store.db, args.id);
    return answer ? checkoutOutcome(answer, context) : notFound(args.id, context);
  },
});

type UpdateArgs = { id: string; checkout: Json; meta?: KeyedMeta };

export const updateCheckoutTool = defineTool<UpdateArgs>({
  name: 'update_checkout',
  title: 'Update a checkout',
  description:
    'Replace the checkout\'s writable state: line items, buyer, and the shipping destination and option (full replacement: ' +
    `what is left out is cleared). A checkout waiting for the buyer's approval goes back to them: its approval link is void. ${CHECKOUT_DESCRIPTION}`,
  capability: Capability.checkout,
  inputSchema: updateCheckoutInput,
  outputSchema: checkoutOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args: UpdateArgs, context) {
    const { checkouts, db } = context.store;
    const webhook = context.orderWebhookUrl === undefined ? {} : { webhookUrl: context.orderWebhookUrl };
    return runIdempotently('update_checkout', args, args.id, context, () =>
      refusing('update_checkout', args.id, context, async () => {
        try {
          return await written(await checkouts.update(db, args.id, { ...checkoutInput(args.checkout), ...webhook, ...platformOf(context) }, 'agent'), context, { created: false });
        } catch (error) {
          const completing = error instanceof CheckoutRefused && context.release !== '2026-04-08' ? await completingCheckout(args.id, context) : undefined;
          if (!completing || !(error instanceof CheckoutRefused)) throw error;
          // UCP 2026-08-25: an update after completion was accepted leaves the checkout unchanged and answers it with a
          // recoverable error (2026-04-08 answers the refusal alone).
          const answer = ucpCheckout(completing, mapping(context));
          return outcome({ ...answer, messages: [{ ...ucpRefusal(error.reason, context.release), severity: 'recoverable' }] });
        }
      }),
    );
  },
});

type KeyedArgs = { id: string; meta: { 'idempotency-key': string }; checkout?: Json };

export const completeCheckoutTool = defineTool<KeyedArgs>({
  name: 'complete_checkout',
  title: 'Ask the buyer to approve and place the order',
  description:
    'Completing a checkout needs the buyer\'s explicit approval at that moment: this never places an order or charges anyone. ' +
    'When the checkout has everything it needs, the answer has status requires_escalation, a message with code ' +
    'buyer_approval_required and a `continue_url`: give that link to the buyer. On that page the buyer reviews the order, ' +
    'proves who they are and approves it, or declines it; then pays as the store takes payment. The message says exactly what ' +
    'this store asks: which proof (a passkey or an emailed code) and how the buyer pays (by the store\'s payment instructions ' +
    'after the order is placed, or by card on a hosted payment page before it is placed). The link is single-use and expires. ' +
    'Then get_checkout shows status completed and the `order`, or a message saying why there is none. When something is ' +
    'missing, the checkout is answered with messages saying what. Payment data sent here is ignored and never stored. ' +
    '`meta["idempotency-key"]` (a UUID) is required.',
  capability: Capability.checkout,
  inputSchema: completeCheckoutInput,
  outputSchema: checkoutOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(args: KeyedArgs, context) {
    const { checkouts, db } = context.store;
    // The whole arguments bind the key (payment data and signals too, though neither is used nor kept).
    return runIdempotently('complete_checkout', args, args.id, context, () =>
      refusing('complete_checkout', args.id, context, async () => checkoutOutcome(await checkouts.requestCompletion(db, args.id, 'agent'), context)),
    );
  },
});

export const cancelCheckoutTool = defineTool<KeyedArgs>({
  name: 'cancel_checkout',
  title: 'Cancel a checkout',
  description:
    'Cancel a checkout that is not completed; a pending approval link stops working. Answers the canceled checkout. ' +
    '`meta["idempotency-key"]` (a UUID) is required: a retry with the same key gets the same answer.',
  capability: Capability.checkout,
  inputSchema: cancelCheckoutInput,
  outputSchema: checkoutOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args: KeyedArgs, context) {
    const { checkouts, db } = context.store;
    return runIdempotently('cancel_checkout', args, args.id, context, () =>
      refusing('cancel_checkout', args.id, context, async () => checkoutOutcome(await checkouts.cancel(db, args.id, 'agent', 'canceled by the agent'), context)),
    );
  },
});

export const getOrderTool = defineTool<{ id: string }>({
  name: 'get_order',
  title: 'Get an order',
  description: 'An order placed when the buyer approved a checkout: its lines, shipping expectation, totals and payment state.',
  capability: Capability.order,
  inputSchema: getOrderInput,
  outputSchema: orderOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args: { id: string }, context) {
    // Only the unguessable id names an order here (never its short number).
    const order = args.id.startsWith('ord_') ? await readOrder(context.store.db, args.id) : undefined;
    return order ? outcome(ucpOrder(order, mapping(context))) : notFound(args.id, context, 'order');
  },
});

export const checkoutTools = [createCheckoutTool, getCheckoutTool, updateCheckoutTool, completeCheckoutTool, cancelCheckoutTool, getOrderTool];
