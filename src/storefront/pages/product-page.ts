/**
 * A product's page: its images, title, price (and compare-at price), availability, the form that adds it to the cart
 * (variant, purchase option, quantity), its description, and the products shown with it. Without JavaScript the form
 * lists every variant in one select; the shop's script (assets/storefront.js) turns a product with several options
 * into one select per option, kept in sync with that one, and updates the price and availability shown. Each selling
 * plan's label says its price and saving for the selected variant; the script keeps them, and the price shown, following
 * the variant and the purchase option chosen.
 */
import { formatMoney, optionValues, plainDescription, sellingPlanPrice, STORE_CURRENCY, type Product, type SellingPlan, type Variant } from '../../catalog/types.js';
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

/** A plan's price for one unit of a variant, as its label and the price line say it. */
interface PlanOffer {
  /** The plan's price: "$5.85". */
  price: string;
  /** The price it is less than (the one-time price), or '' when it saves nothing. */
  was: string;
  /** The label's words after the plan's name: "$5.85, save $0.65 (10%)". */
  offer: string;
  /** The sentence under the price when the plan is chosen: "Delivery every month: save $0.65 (10%)"; '' without a saving. */
  saving: string;
}

function planOffer(variant: Variant, plan: SellingPlan): PlanOffer {
  const price = sellingPlanPrice(variant, plan);
  const saved = variant.priceCents - price;
  const saving = saved > 0 ? `save ${formatMoney(saved)} (${plan.discountPercent}%)` : '';
  return {
    price: formatMoney(price),
    was: saved > 0 ? formatMoney(variant.priceCents) : '',
    offer: saving ? `${formatMoney(price)}, ${saving}` : formatMoney(price),
    saving: saving ? `${plan.name}: ${saving}` : '',
  };
}

/** The plans a product offers, in their groups' order (a group without plans offers nothing). */
const offeredPlans = (product: Product) => product.sellingPlanGroups.flatMap((group) => group.plans.map((plan) => ({ group, plan })));

/**
 * What the script needs to show a variant without asking the store: its options, price and availability as text, and
 * for a product with plans, its title and each plan's price for it (by plan id).
 */
function variantData(product: Product, variant: Variant, status: AvailabilityStatus): Html {
  const plans = offeredPlans(product);
  const offers =
    plans.length > 0
      ? html` data-title="${variant.title}" data-plans="${JSON.stringify(Object.fromEntries(plans.map(({ plan }) => [plan.id, planOffer(variant, plan)])))}"`
      : '';
  return html` data-options="${JSON.stringify(variant.optionValues)}" data-price="${formatMoney(variant.priceCents)}" data-compare-at="${
    variant.compareAtCents !== null && variant.compareAtCents > variant.priceCents ? formatMoney(variant.compareAtCents) : ''
  }" data-status="${AVAILABILITY_TEXT[status]}"${offers} data-available="${status === 'out_of_stock' ? 'false' : 'true'}"`;
}

function variantField(product: Product, selected: Variant, stock: StockLevels): Html {
  if (product.variants.length === 1) {
    const [only] = product.variants as [Variant];
    return html`<input type="hidden" name="id" id="variant-id" value="${only.id}"${variantData(product, only, availabilityStatus(only, stock))}>`;
  }
  return html`<div class="field" id="variant-field">
<label for="variant-id">Variant</label>
<select id="variant-id" name="id">
${product.variants.map((variant) => {
  const status = availabilityStatus(variant, stock);
  const soldOut = status === 'out_of_stock';
  return html`<option value="${variant.id}"${variantData(product, variant, status)}${variant === selected ? html` selected` : ''}${soldOut ? html` disabled` : ''}>${
    variant.title
  } – ${formatMoney(variant.priceCents)}${soldOut ? ` – ${SOLD_OUT}` : ''}</option>
`;
})}</select>
</div>`;
}

/** The plan a link chose (`?selling_plan=`), when the product offers it. */
const chosenPlan = (product: Product, chosen: number | null) => offeredPlans(product).find(({ plan }) => plan.id === chosen)?.plan;

/**
 * One-time purchase, then each plan with its price and saving for the selected variant (the script keeps them
 * following the variant chosen; without it, a product with several variants says which one the prices are for).
 */
function sellingPlans(product: Product, selected: Variant, chosen: SellingPlan | undefined): Html | '' {
  const groups = product.sellingPlanGroups.filter((group) => group.plans.length > 0);
  if (groups.length === 0) return '';
  return html`<fieldset class="plans">
<legend>Purchase options</legend>
${product.variants.length > 1 ? html`<p class="plans-variant">Prices for <span id="plans-variant">${selected.title}</span></p>
` : ''}<label class="choice"><input type="radio" name="selling_plan" value=""${chosen ? '' : html` checked`}> <span>One-time purchase</span></label>
${groups.map((group) =>
  group.plans.map(
    (plan) => html`<label class="choice"><input type="radio" name="selling_plan" value="${plan.id}"${plan === chosen ? html` checked` : ''}> <span>${
      groups.length > 1 ? `${group.name}: ` : ''
    }${plan.name} — <span class="plan-offer" id="plan-offer-${plan.id}">${planOffer(selected, plan).offer}</span>${plan.description ? html`<span class="hint">${plan.description}</span>` : ''}</span></label>
`,
  ),
)}</fieldset>`;
}

/**
 * The price line: the selected variant's, or with a plan chosen the plan's price (the one-time price struck); then, for
 * a product with plans, the chosen plan's saving (hidden while it is a one-time purchase; the script fills it).
 */
function priceStatus(product: Product, selected: Variant, plan: SellingPlan | undefined): Html {
  const offer = plan && planOffer(selected, plan);
  const line = offer
    ? priceLine(sellingPlanPrice(selected, plan), offer.was ? selected.priceCents : null, { ids: true, className: 'price product-price' })
    : priceLine(selected.priceCents, selected.compareAtCents, { ids: true, className: 'price product-price' });
  if (offeredPlans(product).length === 0) return line;
  return html`${line}
<p class="plan-saving" id="plan-saving"${offer?.saving ? '' : html` hidden`}>${offer?.saving ?? ''}</p>`;
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
  const plan = chosenPlan(product, parts.sellingPlanId);
  const body = html`<div class="shop">
<div class="product">
${gallery(product, baseUrl)}
<div class="product-details">
<h1>${product.title}</h1>
${product.vendor ? html`<p class="vendor">${product.vendor}</p>` : ''}
<div class="status" id="product-status" aria-live="polite">
${priceStatus(product, selected, plan)}
<p class="availability ${buyable ? 'in-stock' : 'sold-out'}" id="product-availability">${AVAILABILITY_TEXT[status]}</p>
</div>
${parts.requestedSoldOut ? html`<p class="notice">${hasOptions(product) ? `${parts.requestedSoldOut.title} is sold out.` : 'This variant is sold out.'}${anyAvailable ? ' Another is chosen below.' : ''}</p>` : ''}
<form method="post" action="/cart/add" class="product-form" id="product-form">
${optionPickers(product, selected)}
${variantField(product, selected, stock)}
${sellingPlans(product, selected, plan)}
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
