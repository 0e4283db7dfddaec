/**
 * A product's page: its images, title, price (and compare-at price), availability, the form that adds it to the cart
 * (variant, purchase option, quantity), its description, and the products shown with it. Without JavaScript the form
 * lists every variant in one select; the shop's script (assets/storefront.js) turns a product with several options
 * into one select per option, kept in sync with that one, and updates the price and availability shown.
 */
import { formatMoney, optionValues, plainDescription, STORE_CURRENCY, type Product, type Variant } from '../../catalog/types.js';
import { availabilityStatus, type AvailabilityStatus, type StockLevels } from '../../inventory/stock.js';
import { html, type Html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { absoluteImageUrls, decimalAmount, merchantHtml, metaDescription, priceLine, productGrid, productImage, shownImages, SOLD_OUT } from './shop-parts.js';

export interface ProductPageParts {
  product: Product;
  stock: StockLevels;
  /** The variant the form starts with (`?variant=` when it can be bought, else the first that can). */
  selected: Variant;
  /** A variant the link asked for (`?variant=`) that cannot be bought now: the page says so. */
  requestedSoldOut?: Variant;
  /** The purchase option the form starts with (`?selling_plan=`); null: one-time purchase. */
  sellingPlanId: number | null;
  related: readonly Product[];
  complementary: readonly Product[];
  /** The most units of one line a cart may hold (CART_MAX_LINE_QUANTITY). */
  maxQuantity: number;
}

export const AVAILABILITY_TEXT: Record<AvailabilityStatus, string> = {
  in_stock: 'In stock',
  backorder: 'Available on backorder: ships when back in stock',
  out_of_stock: SOLD_OUT,
};

const SCHEMA_AVAILABILITY: Record<AvailabilityStatus, string> = {
  in_stock: 'https://schema.org/InStock',
  backorder: 'https://schema.org/BackOrder',
  out_of_stock: 'https://schema.org/OutOfStock',
};

export const productPagePath = (handle: string) => `/products/${handle}`;

const hasOptions = (product: Product) => product.optionNames.length > 0;

function gallery(product: Product, baseUrl: string): Html {
  const [first, ...others] = shownImages(product, baseUrl);
  if (!first) return html`<div class="gallery"><div class="main-image no-image" role="img" aria-label="${product.title}: no image"></div></div>`;
  return html`<div class="gallery">
${productImage(first.image, first.src, product.title, { className: 'main-image' })}
${
  others.length > 0
    ? html`<ul class="thumbnails" role="list">
${others.map(({ image, src }, index) => html`<li>${productImage(image, src, `${product.title}, image ${index + 2}`, { lazy: true })}</li>`)}
</ul>`
    : ''
}
</div>`;
}

/** One select per option, for the script to show (hidden without it: the variant select below does the job). */
function optionPickers(product: Product, selected: Variant): Html | '' {
  if (product.optionNames.length < 2) return '';
  return html`<div class="option-pickers" id="option-pickers" hidden>
${product.optionNames.map(
  (name, index) => html`<label for="option-${index + 1}">${name}</label>
<select id="option-${index + 1}" data-option-index="${index}">
${optionValues(product, index).map((value) => html`<option value="${value}"${selected.optionValues[index] === value ? html` selected` : ''}>${value}</option>`)}
</select>
`,
)}</div>`;
}

/** What the script needs to show a variant without asking the store: its options, price and availability as text. */
function variantData(variant: Variant, status: AvailabilityStatus): Html {
  return html` data-options="${JSON.stringify(variant.optionValues)}" data-price="${formatMoney(variant.priceCents)}" data-compare-at="${
    variant.compareAtCents !== null && variant.compareAtCents > variant.priceCents ? formatMoney(variant.compareAtCents) : ''
  }" data-status="${AVAILABILITY_TEXT[status]}" data-available="${status === 'out_of_stock' ? 'false' : 'true'}"`;
}

function variantField(product: Product, selected: Variant, stock: StockLevels): Html {
  if (product.variants.length === 1) {
    const [only] = product.variants as [Variant];
    return html`<input type="hidden" name="id" id="variant-id" value="${only.id}"${variantData(only, availabilityStatus(only, stock))}>`;
  }
  return html`<div class="field" id="variant-field">
<label for="variant-id">Variant</label>
<select id="variant-id" name="id">
${product.variants.map((variant) => {
  const status = availabilityStatus(variant, stock);
  const soldOut = status === 'out_of_stock';
  return html`<option value="${variant.id}"${variantData(variant, status)}${variant === selected ? html` selected` : ''}${soldOut ? html` disabled` : ''}>${
    variant.title
  } – ${formatMoney(variant.priceCents)}${soldOut ? ` – ${SOLD_OUT}` : ''}</option>
`;
})}</select>
</div>`;
}

function sellingPlans(product: Product, chosen: number | null): Html | '' {
  const groups = product.sellingPlanGroups.filter((group) => group.plans.length > 0);
  if (groups.length === 0) return '';
  const known = groups.some((group) => group.plans.some((plan) => plan.id === chosen));
  return html`<fieldset class="plans">
<legend>Purchase options</legend>
<label class="choice"><input type="radio" name="selling_plan" value=""${known ? '' : html` checked`}> <span>One-time purchase</span></label>
${groups.map((group) =>
  group.plans.map(
    (plan) => html`<label class="choice"><input type="radio" name="selling_plan" value="${plan.id}"${plan.id === chosen ? html` checked` : ''}> <span>${
      groups.length > 1 ? `${group.name}: ` : ''
    }${plan.name}${plan.discountPercent > 0 ? ` (save ${plan.discountPercent}%)` : ''}${plan.description ? html`<span class="hint">${plan.description}</span>` : ''}</span></label>
`,
  ),
)}</fieldset>`;
}

function productSection(id: string, heading: string, products: readonly Product[], stock: StockLevels, baseUrl: string): Html | '' {
  if (products.length === 0) return '';
  return html`<section class="more-products" aria-labelledby="${id}">
<h2 id="${id}">${heading}</h2>
${productGrid(products, stock, baseUrl)}
</section>`;
}

/** schema.org Product with one Offer per variant (price as a decimal string, currency, availability, URL). */
export function productJsonLd(product: Product, stock: StockLevels, baseUrl: string, selected: Variant): object {
  const url = `${baseUrl}${productPagePath(product.handle)}`;
  const description = plainDescription(product);
  return {
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: product.title,
    ...(description ? { description } : {}),
    image: absoluteImageUrls(product, baseUrl),
    ...(selected.sku ? { sku: selected.sku } : {}),
    url,
    ...(product.vendor ? { brand: { '@type': 'Brand', name: product.vendor } } : {}),
    offers: product.variants.map((variant) => ({
      '@type': 'Offer',
      ...(hasOptions(product) ? { name: variant.title } : {}),
      ...(variant.sku ? { sku: variant.sku } : {}),
      price: decimalAmount(variant.priceCents),
      priceCurrency: STORE_CURRENCY,
      availability: SCHEMA_AVAILABILITY[availabilityStatus(variant, stock)],
      itemCondition: 'https://schema.org/NewCondition',
      url: product.variants.length > 1 ? `${url}?variant=${variant.id}` : url,
    })),
  };
}

export function productPage(context: PageContext, parts: ProductPageParts): string {
  const { product, stock, selected, maxQuantity } = parts;
  const baseUrl = context.baseUrl;
  const status = availabilityStatus(selected, stock);
  const anyAvailable = product.variants.some((variant) => availabilityStatus(variant, stock) !== 'out_of_stock');
  const buyable = status !== 'out_of_stock';
  const description = product.descriptionHtml.trim();
  const body = html`<div class="shop">
<div class="product">
${gallery(product, baseUrl)}
<div class="product-details">
<h1>${product.title}</h1>
${product.vendor ? html`<p class="vendor">${product.vendor}</p>` : ''}
<div class="status" id="product-status" aria-live="polite">
${priceLine(selected.priceCents, selected.compareAtCents, { ids: true, className: 'price product-price' })}
<p class="availability ${buyable ? 'in-stock' : 'sold-out'}" id="product-availability">${AVAILABILITY_TEXT[status]}</p>
</div>
${parts.requestedSoldOut ? html`<p class="notice">${hasOptions(product) ? `${parts.requestedSoldOut.title} is sold out.` : 'This variant is sold out.'}${anyAvailable ? ' Another is chosen below.' : ''}</p>` : ''}
<form method="post" action="/cart/add" class="product-form" id="product-form">
${optionPickers(product, selected)}
${variantField(product, selected, stock)}
${sellingPlans(product, parts.sellingPlanId)}
<div class="field">
<label for="quantity">Quantity</label>
<input id="quantity" name="quantity" type="number" min="1" max="${maxQuantity}" value="1" inputmode="numeric">
</div>
<button type="submit" class="add-to-cart" id="add-to-cart"${buyable ? '' : html` disabled`}>${buyable ? 'Add to cart' : SOLD_OUT}</button>
</form>
</div>
</div>
${description ? html`<section class="description-section" aria-labelledby="description-heading">
<h2 id="description-heading">Description</h2>
<div class="description">${merchantHtml(description)}</div>
</section>` : ''}
${productSection('complementary-heading', 'Goes well with', parts.complementary, stock, baseUrl)}
${productSection('related-heading', 'You may also like', parts.related, stock, baseUrl)}
</div>`;
  const [image] = absoluteImageUrls(product, baseUrl);
  return layout(context, {
    title: product.title,
    body,
    path: productPagePath(product.handle),
    description: metaDescription(plainDescription(product), `${product.title} at ${context.storeName}.`),
    openGraph: { type: 'product', image: image ?? null },
    jsonLd: productJsonLd(product, stock, baseUrl, selected),
    shop: true, wide: true,
  });
}
