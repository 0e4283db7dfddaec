/**
 * The cart page: the shopper's lines, each changeable and removable with a form, the totals, how far the cart is from
 * free standard shipping, and the way to the checkout. Every change is a plain form post that lands back here, so
 * the page works without a script. Also the page for a cart link (an agent's hand-off) that opens no cart.
 */
import type { PricedCart, PricedLine } from '../../cart/cart.js';
import { html, type Html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { formatMoney, productThumbnail, propertyDetail } from './purchase-parts.js';

export const CART_PATH = '/cart';
export const CHECKOUT_PATH = '/checkout';
const ALL_PRODUCTS = '/collections/all';

export interface CartPageFacts {
  /** The browser's cart; undefined when it holds none. */
  cart: PricedCart | undefined;
  /** Standard shipping is free from this subtotal, in cents (0: never). */
  freeShippingOverCents: number;
  /** The most one line may hold (the quantity inputs' max). */
  maxLineQuantity: number;
  /** Why the last change was refused, in the shopper's words; the cart is as it was. */
  problem?: string;
}

export const productPath = (handle: string) => `/products/${encodeURIComponent(handle)}`;

/** A product without options sells one variant whose title says nothing ("Default Title"): only the product is named. */
export const variantTitleOf = (priced: PricedLine): string | undefined =>
  priced.item.product.optionNames.length > 0 ? priced.item.variant.title : undefined;

/** What else makes the line (its selling plan, the properties a shopper sees: Shopify hides names starting with `_`). */
export function lineDetails(priced: PricedLine): (Html | string)[] {
  return [
    ...(priced.sellingPlan ? [priced.sellingPlan.plan.name] : []),
    ...Object.entries(priced.line.properties)
      .filter(([name]) => !name.startsWith('_'))
      .map(([name, value]) => propertyDetail(name, value)),
  ];
}

function lineEntry(priced: PricedLine, index: number, maxLineQuantity: number): Html {
  const { product } = priced.item;
  const image = productThumbnail(product);
  const variant = variantTitleOf(priced);
  const quantityId = `cart-quantity-${index + 1}`;
  // The item's name (product, then variant) tells two lines of one product apart in the controls' names.
  const name = priced.title;
  return html`<li class="cart-line">
${
  image
    ? // The product's name is the link beside it: the picture says only what the name does not.
      html`<img class="cart-thumb" src="${image.src}" alt="${image.alt === product.title ? '' : image.alt}" width="80" height="80" loading="lazy">`
    : html`<span class="cart-thumb" aria-hidden="true"></span>`
}
<div class="cart-line-about">
<p class="cart-line-title"><a href="${productPath(product.handle)}">${product.title}</a></p>
${variant ? html`<span class="variant">${variant}</span>` : ''}
${lineDetails(priced).map((detail) => html`<span class="detail">${detail}</span>`)}
<p class="cart-line-price">${priced.price !== priced.originalPrice ? html`<del><span class="visually-hidden">Was </span>${formatMoney(priced.originalPrice)}</del> ` : ''}${formatMoney(priced.price)} each</p>
</div>
<div class="cart-line-controls">
<form method="post" action="/cart/change" class="cart-quantity">
<input type="hidden" name="id" value="${priced.line.key}">
<label for="${quantityId}">Quantity<span class="visually-hidden"> for ${name}</span></label>
<input id="${quantityId}" name="quantity" type="number" min="0" max="${maxLineQuantity}" step="1" inputmode="numeric" value="${priced.line.quantity}" required>
<button type="submit" class="secondary">Update</button>
</form>
<form method="post" action="/cart/change" class="cart-remove">
<input type="hidden" name="id" value="${priced.line.key}">
<input type="hidden" name="quantity" value="0">
<button type="submit" class="link-button">Remove<span class="visually-hidden"> ${name}</span></button>
</form>
</div>
<p class="cart-line-total"><span class="visually-hidden">Total for ${name}: </span>${formatMoney(priced.linePrice)}</p>
</li>
`;
}

/** How far the cart is from free standard shipping, in words and as a progress bar. */
function freeShippingProgress(total: number, threshold: number): Html | string {
  if (threshold <= 0) return '';
  const left = threshold - total;
  const words = left > 0 ? `Spend ${formatMoney(left)} more for free standard shipping.` : 'Your order ships free with standard shipping.';
  return html`<div class="free-shipping">
<p id="free-shipping-status">${words}</p>
<progress max="${threshold}" value="${Math.min(total, threshold)}" aria-labelledby="free-shipping-status">${Math.floor((Math.min(total, threshold) * 100) / threshold)}%</progress>
</div>`;
}

function cartSummary(cart: PricedCart, freeShippingOverCents: number): Html {
  const { totals } = cart;
  return html`<section class="cart-summary" aria-labelledby="cart-summary-title">
<h2 id="cart-summary-title">Order summary</h2>
<dl class="totals">
<dt>Subtotal</dt><dd>${formatMoney(totals.originalTotalPrice)}</dd>
${totals.totalDiscount > 0 ? html`<dt>Discount</dt><dd>−${formatMoney(totals.totalDiscount)}</dd>` : ''}
<dt class="grand">Total</dt><dd class="grand">${formatMoney(totals.totalPrice)}</dd>
</dl>
<p class="detail">Shipping and sales tax are added at checkout.</p>
${freeShippingProgress(totals.totalPrice, freeShippingOverCents)}
<form method="get" action="${CHECKOUT_PATH}" class="actions">
<button type="submit" class="primary">Check out</button>
</form>
<p><a href="${ALL_PRODUCTS}">Continue shopping</a></p>
</section>`;
}

export function cartPage(context: PageContext, facts: CartPageFacts): string {
  const { cart, problem } = facts;
  const lines = cart?.lines ?? [];
  const count = lines.reduce((sum, priced) => sum + priced.line.quantity, 0);
  const body = html`<h1>Your cart</h1>
${problem ? html`<div class="problem" role="alert"><p>${problem}</p><p>Your cart was not changed.</p></div>` : ''}
${
  lines.length === 0
    ? html`<p>Your cart is empty.</p>
<p><a href="${ALL_PRODUCTS}">Browse all products</a></p>`
    : html`<h2 class="visually-hidden">Items</h2>
<p class="detail">${count} ${count === 1 ? 'item' : 'items'}</p>
<ul class="cart-lines">
${lines.map((priced, index) => lineEntry(priced, index, facts.maxLineQuantity))}</ul>
${cartSummary(cart!, facts.freeShippingOverCents)}`
}`;
  return layout(context, {
    title: 'Your cart',
    body,
    path: CART_PATH,
    description: `Your cart at ${context.storeName}.`,
    personal: true,
    shop: true,
  });
}

/** The page of a cart link (`/cart/c/{token}`) that opens no cart: never made, expired, or already bought. */
export function cartLinkNotFoundPage(context: PageContext): string {
  const body = html`<h1>This cart link does not work</h1>
<p class="problem">The cart link is not valid or has expired. A cart is kept for a while after its last change, and a cart whose order was placed is closed.</p>
<p><a href="/">Go to ${context.storeName}</a> or <a href="${ALL_PRODUCTS}">browse all products</a>.</p>`;
  return layout(context, { title: 'Cart link not valid', body, personal: true, shop: true });
}
