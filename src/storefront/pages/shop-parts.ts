/**
 * The parts the shop's pages share: a product card and grid, a price with its compare-at price, the availability
 * badge, pagination, image sources the pages' policy allows, and the merchant's description HTML made safe to show.
 * Money is integer cents in, text out; nothing here computes a price.
 */
import { absoluteUrl, formatMoney, type Product, type ProductImage, type Variant } from '../../catalog/types.js';
import { isProductAvailable, type StockLevels } from '../../inventory/stock.js';
import { naughtyHref } from 'launder';
import sanitizeHtml from 'sanitize-html';
import { html, unsafeHtml, type Html } from '../../markup/html.js';

/** Products per page on a collection or search page. */
export const PRODUCTS_PER_PAGE = 24;

/** `?page=N` as a page number: a positive whole number in decimal digits, else undefined (the caller answers 404). */
export function pageNumber(raw: unknown): number | undefined {
  if (raw === undefined) return 1;
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,5}$/.test(raw)) return undefined;
  return Number(raw);
}

/** How many pages `count` products fill (an empty list is one empty page). */
export function pageCount(count: number, perPage = PRODUCTS_PER_PAGE): number {
  return Math.max(1, Math.ceil(count / perPage));
}

/**
 * Where a page loads a catalog image from: a path on this store as it is (so it loads from whatever host serves the
 * page), an https URL (its origin is in the pages' img-src), this store's own URL; nothing else (a plain-http image
 * elsewhere would be blocked by the policy, so none is shown).
 */
export function imageSource(baseUrl: string, src: string): string | undefined {
  if (src.startsWith('/') && !src.startsWith('//')) return src;
  if (/^https:\/\//i.test(src)) return src;
  if (src.startsWith(`${baseUrl}/`)) return src.slice(baseUrl.length);
  return undefined;
}

/** The product's images a page can show, in order. */
export function shownImages(product: Product, baseUrl: string): { image: ProductImage; src: string }[] {
  return product.images.flatMap((image) => {
    const src = imageSource(baseUrl, image.src);
    return src === undefined ? [] : [{ image, src }];
  });
}

/** The absolute URLs of the product's images, for Open Graph and JSON-LD. */
export function absoluteImageUrls(product: Product, baseUrl: string): string[] {
  return product.images.map((image) => absoluteUrl(baseUrl, image.src)).filter((url) => /^https?:\/\//i.test(url));
}

export function productImage(image: ProductImage, src: string, alt: string, extra: { className?: string; lazy?: boolean } = {}): Html {
  return html`<img${extra.className ? html` class="${extra.className}"` : ''} src="${src}" alt="${image.alt || alt}"${
    image.width && image.height ? html` width="${image.width}" height="${image.height}"` : ''
  }${extra.lazy ? html` loading="lazy" decoding="async"` : ''}>`;
}

/** Cents as the decimal text schema.org and feeds expect: 1250 -> "12.50" (no float arithmetic). */
export function decimalAmount(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const whole = Math.trunc(Math.abs(cents) / 100);
  return `${sign}${whole}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
}

/** A meta description from plain text: at most about 160 characters, cut at a word. */
export function metaDescription(text: string, fallback: string): string {
  const plain = text.replace(/\s+/g, ' ').trim();
  if (plain === '') return fallback;
  if (plain.length <= 160) return plain;
  const cut = plain.slice(0, 157);
  const atWord = cut.lastIndexOf(' ');
  return `${(atWord > 100 ? cut.slice(0, atWord) : cut).replace(/[\s,.;:–—-]+$/, '')}…`;
}

/**
 * A price as shown: the price, and when a compare-at price is higher, that one struck through ("Sale price" and
 * "Regular price" said to screen readers, which do not announce strike-through). `ids` name the two parts so the
 * product page's script can update them.
 */
export function priceLine(priceCents: number, compareAtCents: number | null, options: { from?: boolean; ids?: boolean; className?: string } = {}): Html {
  const onSale = compareAtCents !== null && compareAtCents > priceCents;
  const id = (name: string) => (options.ids ? html` id="${name}"` : '');
  // The product page keeps an empty, hidden compare-at price for its script to fill when another variant is chosen.
  const was =
    onSale || options.ids
      ? html` <s class="price-was"${id('price-was')}${onSale ? '' : html` hidden`}><span class="visually-hidden">Regular price: </span><span${id('price-was-amount')}>${onSale ? formatMoney(compareAtCents) : ''}</span></s>`
      : '';
  return html`<p class="${options.className ?? 'price'}">${options.from ? 'From ' : ''}<span class="price-now${onSale ? ' sale' : ''}"${id('price-now')}><span class="visually-hidden"${id('price-label')}>${onSale ? 'Sale price: ' : 'Price: '}</span><span${id('price-amount')}>${formatMoney(priceCents)}</span></span>${was}</p>`;
}

/** The variant a card's price comes from: the cheapest (as the storefront JSON's `price`), and whether prices vary. */
function cardPrice(product: Product): { variant: Variant; varies: boolean } {
  let cheapest = product.variants[0]!;
  for (const variant of product.variants) if (variant.priceCents < cheapest.priceCents) cheapest = variant;
  return { variant: cheapest, varies: product.variants.some((v) => v.priceCents !== cheapest.priceCents) };
}

export const SOLD_OUT = 'Sold out';

/**
 * One product in a grid: its image, its title linking to its page (the link's name is the title; the whole card is
 * its target), its price and, when nothing can be bought, "Sold out".
 */
export function productCard(product: Product, stock: StockLevels, baseUrl: string): Html {
  const [first] = shownImages(product, baseUrl);
  const { variant, varies } = cardPrice(product);
  const available = isProductAvailable(product, stock);
  return html`<li class="card">
${first ? productImage(first.image, first.src, product.title, { className: 'card-image', lazy: true }) : html`<div class="card-image no-image" role="img" aria-label="${product.title}: no image"></div>`}
<h3 class="card-title"><a href="/products/${product.handle}">${product.title}</a></h3>
${priceLine(variant.priceCents, variant.compareAtCents, { from: varies })}
${available ? '' : html`<p class="badge sold-out">${SOLD_OUT}</p>`}
</li>
`;
}

export function productGrid(products: readonly Product[], stock: StockLevels, baseUrl: string): Html {
  return html`<ul class="product-grid" role="list">
${products.map((product) => productCard(product, stock, baseUrl))}</ul>`;
}

/**
 * Links to the previous and next pages and where the shopper is ("Page 2 of 5"); nothing when there is one page.
 * `href(n)` is the URL of page n.
 */
export function pagination(page: number, pages: number, href: (page: number) => string): Html | '' {
  if (pages <= 1) return '';
  return html`<nav class="pagination" aria-label="Pagination">
<ul>
${page > 1 ? html`<li><a href="${href(page - 1)}" rel="prev">Previous page</a></li>` : ''}
<li><span aria-current="page">Page ${page} of ${pages}</span></li>
${page < pages ? html`<li><a href="${href(page + 1)}" rel="next">Next page</a></li>` : ''}
</ul>
</nav>`;
}

/** The shop's 404: the shop's layout, saying what was not found and where to go instead. */
export function notFoundBody(what: string): Html {
  return html`<div class="shop">
<h1>Page not found</h1>
<p class="problem">${what}</p>
<p>It may have been renamed or removed. <a href="/collections/all">Browse all products</a> or search the store:</p>
${searchForm('not-found-q', '')}
</div>`;
}

/** A search form in the page (the header has one too: each has its own field id). */
export function searchForm(id: string, query: string): Html {
  return html`<form class="search-form" method="get" action="/search" aria-label="Search products">
<label for="${id}">Search for</label>
<div class="search-row">
<input id="${id}" name="q" type="search" value="${query}" maxlength="200" autocomplete="off">
<button type="submit" class="secondary">Search</button>
</div>
</form>`;
}

// ---------------------------------------------------------------------------------------------------------------
// The merchant's description HTML. The catalog stores it as imported (a Shopify CSV's "Body (HTML)", the JSON
// catalog's description_html) and the storefront JSON passes it on as it is; a page that shows it keeps only an
// allow-list of tags and attributes, so nothing in a catalog runs script, loads anything or restyles the page.

const LINK_SCHEMES = ['http', 'https', 'mailto', 'tel'];
const LINK_REL = 'nofollow noopener noreferrer';

/** An attribute kept only while its value has the shape the tag expects (a table span, a list's first number). */
function keepWhen(shape: RegExp, ...names: string[]): sanitizeHtml.Transformer {
  return (tagName, attribs) => ({
    tagName,
    attribs: Object.fromEntries(Object.entries(attribs).filter(([name, value]) => !names.includes(name) || shape.test(value))),
  });
}

/** The page's own headings come first: the description's headings start below the section's h2. */
const headingsBelowThePage = Object.fromEntries(
  [1, 2, 3, 4, 5, 6].map((level) => [`h${level}`, sanitizeHtml.simpleTransform(`h${Math.min(6, level + 2)}`, {}, true)]),
);

const MERCHANT_HTML: sanitizeHtml.IOptions = {
  allowedTags: [
    'p', 'br', 'hr', 'div', 'span', 'strong', 'b', 'em', 'i', 'u', 's', 'small', 'sub', 'sup', 'mark', 'code', 'pre',
    'blockquote', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'a',
    'h3', 'h4', 'h5', 'h6',
  ],
  allowedAttributes: { a: ['href', 'rel'], td: ['colspan', 'rowspan'], th: ['colspan', 'rowspan'], ol: ['start'] },
  allowedSchemes: LINK_SCHEMES,
  allowedSchemesAppliedToAttributes: ['href'],
  // Dropped with everything inside them, not just their tags.
  nonTextTags: [
    'script', 'style', 'iframe', 'object', 'embed', 'applet', 'template', 'noscript', 'noembed', 'noframes', 'frameset',
    'frame', 'svg', 'math', 'title', 'head', 'textarea', 'select', 'option', 'xmp', 'plaintext', 'canvas', 'audio', 'video',
  ],
  transformTags: {
    ...headingsBelowThePage,
    // The merchant's own rel goes; a link the allow-list keeps (the same href check sanitize-html runs) gets ours.
    a: (tagName, { rel: _merchantRel, ...attribs }) => ({
      tagName,
      attribs: attribs.href !== undefined && attribs.href !== '' && !naughtyHref(attribs.href, { allowedSchemes: LINK_SCHEMES }) ? { ...attribs, rel: LINK_REL } : attribs,
    }),
    td: keepWhen(/^[1-9][0-9]?$/, 'colspan', 'rowspan'),
    th: keepWhen(/^[1-9][0-9]?$/, 'colspan', 'rowspan'),
    ol: keepWhen(/^[0-9]{1,6}$/, 'start'),
  },
};

/**
 * The merchant's description HTML reduced to an allow-list (sanitize-html): text, the tags above (headings moved
 * below the page's own), links to http(s), mailto, tel and relative URLs only (nofollow); every other tag is dropped
 * (its text kept), scripts, styles, frames, forms' fields and embedded media with their content; comments go. Every
 * element left open is closed, so nothing it holds reaches the rest of the page.
 */
export function merchantHtml(source: string): Html {
  return unsafeHtml(sanitizeHtml(source, MERCHANT_HTML));
}
