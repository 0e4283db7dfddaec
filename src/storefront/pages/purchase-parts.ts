/**
 * The parts the approval, order and checkout pages share: the table of lines (with the products' thumbnails), the
 * totals, the address. Money is integer cents in, dollars out; nothing here computes a price.
 */
import { findSellingPlan } from '../../cart/cart.js';
import type { CheckoutView } from '../../checkout/checkout.js';
import type { PostalAddress } from '../../checkout/shipping.js';
import type { CheckoutTotals } from '../../checkout/totals.js';
import type { OrderLine } from '../../orders/orders.js';
import { formatMoney, type Product, type ProductImage } from '../../catalog/types.js';
import { html, typed, type Html } from '../../markup/html.js';

export { formatMoney };

/** A product's picture as a page may load it: a path on this store, or an https URL (its origin in the page's img-src). */
export interface Thumbnail {
  src: string;
  alt: string;
}

/** One line as a page shows it: the product, the variant (when the product has options), and what else was chosen. */
export interface DisplayLine {
  product: string;
  variant: string | undefined;
  details: (Html | string)[];
  quantity: number;
  unitPrice: number;
  lineTotal: number;
  /** The product's first image, when the catalog has one a page can load. */
  image?: Thumbnail;
}

/** The product's first image, if a page may load it (this store's path or https; never plain http or another scheme). */
export function productThumbnail(product: Pick<Product, 'title' | 'images'> | undefined): Thumbnail | undefined {
  const image: ProductImage | undefined = product?.images[0];
  if (!image) return undefined;
  const loadable = (image.src.startsWith('/') && !image.src.startsWith('//')) || /^https:\/\//i.test(image.src);
  return loadable ? { src: image.src, alt: image.alt || product!.title } : undefined;
}

/** A small square picture; `alt` empty when the text beside it names the product already. */
export function thumbnailImage(image: Thumbnail, alt = image.alt): Html {
  return html`<img class="thumb" src="${image.src}" alt="${alt}" width="48" height="48">`;
}

/** A product without options sells one variant whose title says nothing ("Default Title"): only the product is shown. */
const variantOf = (title: string, productTitle: string, variantTitle: string) =>
  productTitle !== '' && title !== productTitle && variantTitle !== '' ? variantTitle : undefined;

export function checkoutLines(view: CheckoutView): DisplayLine[] {
  return view.lines.map((priced) => {
    const plan = priced.item && priced.line.sellingPlanId !== null ? findSellingPlan(priced.item.product, priced.line.sellingPlanId) : undefined;
    return {
      product: priced.productTitle || priced.title,
      variant: variantOf(priced.title, priced.productTitle, priced.variantTitle),
      details: [
        ...(plan ? [plan.plan.name] : []),
        ...Object.entries(priced.line.properties).map(([name, value]) => propertyDetail(name, value)),
        ...(priced.backordered > 0 ? [shipLater(priced.backordered, priced.line.quantity)] : []),
      ],
      quantity: priced.line.quantity,
      unitPrice: priced.unitPrice,
      lineTotal: priced.lineTotal,
      image: productThumbnail(priced.item?.product),
    };
  });
}

/** A line property ("Engraving: For Sam") as the buyer or agent typed its name and value, each isolated. */
export const propertyDetail = (name: string, value: string): Html => html`${typed(name)}: ${typed(value)}`;

/** Units sold beyond the stock on hand (backordered): they ship when the store has them again. */
const shipLater = (units: number, quantity: number) => `${units} of ${quantity} ship later (backordered)`;

/** `productOf`: the product a line was bought as, from the catalog now (for its picture), when it is still sold. */
export function orderLines(lines: readonly OrderLine[], productOf: (productId: number) => Product | undefined = () => undefined): DisplayLine[] {
  return lines.map((line) => ({
    product: line.productTitle || line.title,
    variant: variantOf(line.title, line.productTitle, line.variantTitle),
    details: [
      ...Object.entries(line.properties).map(([name, value]) => propertyDetail(name, value)),
      ...(line.backordered > 0 && line.fulfilled + line.canceled < line.quantity ? [shipLater(Math.min(line.backordered, line.quantity - line.fulfilled - line.canceled), line.quantity)] : []),
      ...(line.fulfilled > 0 ? [`${line.fulfilled} of ${line.quantity} shipped`] : []),
      ...(line.canceled > 0 ? [`${line.canceled} of ${line.quantity} canceled`] : []),
    ],
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    lineTotal: line.lineTotal,
    image: productThumbnail(productOf(line.productId)),
  }));
}

export function linesTable(caption: string, lines: readonly DisplayLine[]): Html {
  return html`<table>
<caption>${caption}</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="n">Quantity</th><th scope="col" class="n">Price</th><th scope="col" class="n">Total</th></tr></thead>
<tbody>
${lines.map(
  (line) => html`<tr><th scope="row">${line.image ? thumbnailImage(line.image, '') : ''}${line.product}${line.variant ? html`<span class="variant">${line.variant}</span>` : ''}${line.details.map(
    (detail) => html`<span class="detail">${detail}</span>`,
  )}</th><td class="n">${line.quantity}</td><td class="n">${formatMoney(line.unitPrice)}</td><td class="n">${formatMoney(line.lineTotal)}</td></tr>
`,
)}</tbody>
</table>`;
}

/** Items, shipping, tax and total; shipping and tax that are not known yet say so. */
export function totalsList(totals: CheckoutTotals, shippingTitle?: string): Html {
  const known = (cents: number | undefined, missing: string) => (cents === undefined ? missing : formatMoney(cents));
  return html`<dl class="totals">
<dt>Items</dt><dd>${formatMoney(totals.subtotal)}</dd>
<dt>Shipping${shippingTitle ? html` (${shippingTitle})` : ''}</dt><dd>${known(totals.shipping, 'not chosen yet')}</dd>
<dt>Sales tax</dt><dd>${known(totals.tax, 'after the address')}</dd>
<dt class="grand">Total</dt><dd class="grand">${formatMoney(totals.total)}</dd>
</dl>`;
}

/**
 * A US address as a page shows it, line by line (as formatAddress writes it for mail and the terminal), each part the
 * buyer or agent typed isolated in <bdi>.
 */
export function addressLines(address: Omit<PostalAddress, 'country'>): (Html | string)[] {
  const name = [address.firstName, address.lastName].filter((part) => part !== undefined && part !== '');
  return [
    ...(name.length > 0 ? [html`${name.map((part, index) => html`${index > 0 ? ' ' : ''}${typed(part)}`)}`] : []),
    typed(address.streetAddress),
    ...(address.extendedAddress ? [typed(address.extendedAddress)] : []),
    // The state and ZIP code are only ever one of the US codes and digits (shipping.ts refuses anything else).
    html`${typed(address.locality)}, ${address.region} ${address.postalCode}`,
    'United States',
  ];
}

export function addressBlock(lines: readonly (Html | string)[]): Html {
  return html`<address>${lines.map((line, index) => html`${index > 0 ? html`<br>` : ''}${line}`)}</address>`;
}
