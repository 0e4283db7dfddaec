/**
 * The cart tools of the UCP MCP binding (dev.ucp.shopping.cart): create_cart, get_cart, update_cart and
 * cancel_cart, adapters over the store's one cart service, the same carts /cart.js shows. A cart's UCP
 * id is its token; `continue_url` shows it to the buyer, who may take it over (then the id names no cart). Refusals (unknown variant, sold out, quantity
 * limit) are UCP error results with recoverable messages, never JSON-RPC errors.
 */
import { CartError, CartNotFound, type CartView, type ItemToAdd, type ReplacementItem } from '../../cart/cart-service.js';
import { parseId } from '../../catalog/ids.js';
import { cartContinueUrl, ucpCart } from '../cart/ucp-cart.js';
import { Capability, type UcpRelease } from '../protocol.js';
import { defineTool, errorOutcome, outcome, runIdempotently, type KeyedMeta, ucpEnvelope, type ToolContext, type ToolOutcome } from './tool.js';
import { cancelCartInput, cartOutput, createCartInput, getCartInput, updateCartInput } from './tool-schemas.js';

interface RequestLine {
  id?: string;
  item: { id: string };
  quantity: number;
}

/** UCP message codes for the cart's refusals. */
const REFUSAL_CODE: Record<CartError['reason'], string> = {
  unknown_variant: 'not_found',
  unavailable_product: 'item_unavailable',
  sold_out: 'out_of_stock',
  invalid_selling_plan: 'invalid_selling_plan',
  quantity_limit: 'quantity_limit',
  no_such_line: 'not_found',
  too_many_lines: 'too_many_lines',
  too_much_text: 'too_much_text',
  invalid_text: 'invalid',
};

function refusal(release: UcpRelease, error: CartError, continueUrl?: string): ToolOutcome {
  const hint = error.reason === 'unknown_variant' ? ' An item id is a variant id from search_catalog or lookup_catalog (products[].variants[].id).' : '';
  return errorOutcome(release, [{ type: 'error', code: REFUSAL_CODE[error.reason], content: error.description + hint, severity: 'recoverable' }], continueUrl);
}

function notFound(id: string, context: ToolContext): ToolOutcome {
  return errorOutcome(
    context.release,
    [{ type: 'error', code: 'not_found', content: `No live cart has the id "${id.slice(0, 64)}"; it may have expired or been canceled.`, severity: 'unrecoverable' }],
    `${context.store.config.baseUrl}/`,
  );
}

/** A cart whose order was placed: it names no cart any more, and the agent is told which checkout placed the order. */
function checkedOut(checkoutId: string, context: ToolContext): ToolOutcome {
  return errorOutcome(
    context.release,
    [
      {
        type: 'error',
        code: 'not_found',
        content:
          `This cart was checked out: the buyer approved its checkout ${checkoutId} and the order was placed, so the cart is closed. ` +
          'get_checkout with that id shows the checkout and its order; to buy more, create a new cart.',
        severity: 'unrecoverable',
      },
    ],
    `${context.store.config.baseUrl}/`,
  );
}

/** A cart the buyer took over through its continue_url: theirs now, in their browser; its id names nothing to the agent. */
function handedOver(context: ToolContext): ToolOutcome {
  return errorOutcome(
    context.release,
    [
      {
        type: 'error',
        code: 'not_found',
        content:
          'The buyer took this cart over in their browser (its continue_url): it is theirs now, and its id no longer names it. ' +
          'To prepare a purchase for them, create a new cart or checkout.',
        severity: 'unrecoverable',
      },
    ],
    `${context.store.config.baseUrl}/`,
  );
}

function cartOutcome(view: CartView, context: ToolContext, options: { continueUrl?: boolean } = {}): ToolOutcome {
  const { continue_url, ...cart } = ucpCart(view.cart, context.store.config.baseUrl);
  return outcome({ ucp: ucpEnvelope(context, Capability.cart), ...cart, ...(options.continueUrl === false ? {} : { continue_url }) });
}

/** Item ids are variant ids, in decimal; anything else names no variant. */
function variantId(line: RequestLine): number {
  return parseId(line.item.id) ?? Number.NaN;
}

/** An item id that is not a variant id is refused before the cart service is asked. */
function unknownItems(release: UcpRelease, lines: readonly RequestLine[], continueUrl?: string): ToolOutcome | undefined {
  const index = lines.findIndex((line) => parseId(line.item.id) === undefined);
  if (index < 0) return undefined;
  const id = lines[index]!.item.id.slice(0, 40);
  return refusal(release, new CartError('unknown_variant', `Cannot find variant "${id}": an item id is a variant id in decimal digits.`), continueUrl);
}

/** Runs a cart change; the cart's refusals become UCP error results, a missing cart the not-found result. */
async function refusing(id: string | undefined, context: ToolContext, change: () => Promise<ToolOutcome>, continueUrl?: string): Promise<ToolOutcome> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof CartError) return refusal(context.release, error, continueUrl);
    if (error instanceof CartNotFound) return notFound(id ?? '', context);
    throw error;
  }
}

const CART_DESCRIPTION =
  'Line items name variants by `item.id` (a variant id from search_catalog or lookup_catalog) with a quantity. ' +
  'Prices and totals are integer US cents. The answer carries the cart `id` for the other cart tools and a ' +
  '`continue_url` for the buyer: it shows them the cart, and once they take it over there (to change it and check out ' +
  'in their browser) the cart is theirs and its `id` answers not_found to you. Hand it over when you are done with the cart.';

export const createCartTool = defineTool<{ cart: { line_items: RequestLine[] } }>({
  name: 'create_cart',
  title: 'Create a cart',
  description: `Create a cart with line items (at least one). ${CART_DESCRIPTION}`,
  capability: Capability.cart,
  inputSchema: createCartInput,
  outputSchema: cartOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args: { cart: { line_items: RequestLine[] }; meta?: KeyedMeta }, context) {
    return runIdempotently('create_cart', args, '', context, async () => {
      const lines = args.cart.line_items;
      if (lines.length === 0) {
        return errorOutcome(context.release, [{ type: 'error', code: 'empty_cart', content: 'A cart needs at least one line item.', severity: 'recoverable', path: '$.line_items' }]);
      }
      const unknown = unknownItems(context.release, lines);
      if (unknown) return unknown;
      const items: ItemToAdd[] = lines.map((line) => ({ variantId: variantId(line), quantity: line.quantity }));
      const { carts, db } = context.store;
      // A new cart every time: counted against the client's cart-start budget (shared with /cart), before it is stored.
      await context.admitCartStart();
      return refusing(undefined, context, async () => cartOutcome(await carts.addItems(db, undefined, items), context));
    });
  },
});

export const getCartTool = defineTool<{ id: string }>({
  name: 'get_cart',
  title: 'Get a cart',
  description:
    'The cart as it is now. A cart that was checked out (its order placed) answers not_found naming the checkout that placed ' +
    `the order; one the buyer took over in their browser answers not_found saying so. ${CART_DESCRIPTION}`,
  capability: Capability.cart,
  inputSchema: getCartInput,
  outputSchema: cartOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args: { id: string }, context) {
    const { carts, checkouts, db } = context.store;
    const view = await carts.findCart(db, args.id);
    if (view) return cartOutcome(view, context);
    const ordered = await checkouts.checkedOutCart(db, args.id);
    if (ordered) return checkedOut(ordered.id, context);
    if ((await carts.cartLink(db, args.id, undefined)).kind === 'handed_over') return handedOver(context);
    return notFound(args.id, context);
  },
});

/**
 * UCP update is a full replacement of the lines, made by the cart service as one change (so a line another
 * door adds meanwhile cannot survive it half-way). A requested line with the `id` of a cart line of its
 * variant stands for that line (keeping its key, properties and selling plan); without one it is the plain
 * line of its variant. Requested lines for one line add up. All of it applies, or none.
 */
function replacementItems(lines: readonly RequestLine[]): ReplacementItem[] {
  return lines.map((line) => ({ variantId: variantId(line), quantity: line.quantity, key: line.id }));
}

export const updateCartTool = defineTool<{ id: string; cart: { line_items: RequestLine[] } }>({
  name: 'update_cart',
  title: 'Replace the lines of a cart',
  description:
    'Replace the cart\'s line items with the ones given (full replacement: a line left out is removed; an empty list ' +
    `empties the cart). Send a line's \`id\` to keep it, or just \`item.id\` and \`quantity\`. ${CART_DESCRIPTION}`,
  capability: Capability.cart,
  inputSchema: updateCartInput,
  outputSchema: cartOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args: { id: string; cart: { line_items: RequestLine[] }; meta?: KeyedMeta }, context) {
    return runIdempotently('update_cart', args, args.id, context, async () => {
      const { carts, db } = context.store;
      const continueUrl = cartContinueUrl(context.store.config.baseUrl, args.id);
      const unknown = unknownItems(context.release, args.cart.line_items, continueUrl);
      if (unknown) return unknown;
      // mustExist: an unknown or canceled cart is not_found, never a new cart.
      return refusing(
        args.id,
        context,
        async () => cartOutcome(await carts.replaceLines(db, args.id, replacementItems(args.cart.line_items), { mustExist: true }), context),
        continueUrl,
      );
    });
  },
});

export const cancelCartTool = defineTool<{ id: string; meta: { 'idempotency-key': string } }>({
  name: 'cancel_cart',
  title: 'Cancel a cart',
  description:
    'Delete the cart; its id then names no cart. Answers the cart as it was before deletion. `meta["idempotency-key"]` ' +
    '(a UUID) is required: a retry with the same key gets the same answer.',
  capability: Capability.cart,
  inputSchema: cancelCartInput,
  outputSchema: cartOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args: { id: string; meta: { 'idempotency-key': string } }, context) {
    const { carts, db } = context.store;
    return runIdempotently('cancel_cart', args, args.id, context, () =>
      refusing(args.id, context, async () => cartOutcome(await carts.cancel(db, args.id), context, { continueUrl: false })),
    );
  },
});

export const cartTools = [createCartTool, getCartTool, updateCartTool, cancelCartTool];
