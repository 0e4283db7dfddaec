/**
 * The pages of a cart's link (`/cart/c/{token}`, the continue_url an agent hands its buyer). Opening the link shows
 * what the cart holds and one button that takes it over: a link preview (a chat app fetching the link before the
 * buyer clicks) only reads, and the cart changes hands only when a person presses the button, a form post.
 */
import type { PricedCart } from '../../cart/cart.js';
import { cartDisplayLines } from './browser-checkout-page.js';
import { html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { messagePage } from './message-page.js';
import { formatMoney, linesTable } from './purchase-parts.js';

/**
 * What the cart holds (items, quantities, total) and the button that takes it over into this browser; the form has
 * no action, so it posts back to the link it was opened from, and works without a script.
 */
export function cartLinkPage(context: PageContext, cart: PricedCart): string {
  const { totals } = cart;
  const body = html`<h1>A cart for you</h1>
<p>This cart was put together for you, perhaps by an assistant shopping on your behalf. Open it here to change it and check out.</p>
${cart.lines.length === 0 ? html`<p>The cart is empty.</p>` : linesTable('Items', cartDisplayLines(cart))}
<dl class="totals">
${totals.totalDiscount > 0 ? html`<dt>Discount</dt><dd>−${formatMoney(totals.totalDiscount)}</dd>` : ''}
<dt class="grand">Total</dt><dd class="grand">${formatMoney(totals.totalPrice)}</dd>
</dl>
<p class="detail">Shipping and sales tax are added at checkout.</p>
<form method="post" class="actions">
<button type="submit" class="primary">Open this cart here</button>
</form>
<p class="detail">Once you open it here, the cart is yours in this browser: the link stops working anywhere else, and whoever gave it to you can no longer see or change the cart.</p>`;
  return layout(context, { title: 'A cart for you', body, personal: true, shop: true });
}

/** The page of a cart link whose cart another browser took: it says so, and shows nothing of the cart. */
export function cartHandedOverPage(context: PageContext): string {
  return messagePage(context, {
    title: 'This cart was handed over',
    tone: 'problem',
    paragraphs: [
      'This cart link was already opened in another browser, which now holds the cart. A cart link works once.',
      'If you opened it yourself, continue in that browser. Otherwise ask whoever gave you the link for a new one.',
    ],
  });
}

/** A form post to take the cart that did not come from this store's page: nothing was taken. */
export function cartLinkRefusedPage(context: PageContext): string {
  return messagePage(context, {
    title: 'Nothing was done',
    tone: 'problem',
    paragraphs: [
      'This form was sent from another website, so it was not accepted. The cart was not opened here.',
      'Open the cart link you were given and press the button on this store’s page.',
    ],
  });
}
