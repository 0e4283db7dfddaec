/**
 * The parts the shop's pages share: a product card and grid, a price with its compare-at price, the availability
 * badge, pagination, image sources the pages' policy allows, and the merchant's description HTML made safe to show.
 * Money is integer cents in, text out; nothing here computes a price.
 */
import { absoluteUrl, formatMoney, type Product, type ProductImage, type Variant } from '../../catalog/types.js';
import { isProductAvailable, type StockLevels } from '../../inventory/stock.js';
import { escapeHtml, html, Html } from './html.js';

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

/** Tags kept (without attributes, except those in KEPT_ATTRIBUTES). */
const KEPT_TAGS = new Set([
  'p', 'br', 'hr', 'div', 'span', 'strong', 'b', 'em', 'i', 'u', 's', 'small', 'sub', 'sup', 'mark', 'code', 'pre',
  'blockquote', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'a',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
]);
const VOID_TAGS = new Set(['br', 'hr', 'img', 'input', 'meta', 'link', 'source', 'track', 'wbr', 'area', 'base', 'col', 'embed', 'param', 'keygen']);
/** Elements dropped with everything inside them. */
const DROPPED_WITH_CONTENT = new Set([
  'script', 'style', 'iframe', 'object', 'embed', 'applet', 'template', 'noscript', 'noembed', 'noframes', 'frameset',
  'frame', 'svg', 'math', 'title', 'head', 'textarea', 'select', 'option', 'xmp', 'plaintext', 'canvas', 'audio', 'video',
]);
/** Their content is text to the browser's parser: it ends at the first matching end tag. */
const RAW_TEXT = new Set(['script', 'style', 'iframe', 'noscript', 'noembed', 'noframes', 'title', 'textarea', 'xmp', 'plaintext']);

const TAG = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>/;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
/** A character reference the browser would decode; anything else after `&` is a literal ampersand. */
const REFERENCE = /^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});/;

const ATTRIBUTE_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", colon: ':', sol: '/', tab: '\t', newline: '\n', nbsp: ' ', period: '.', num: '#', quest: '?', equals: '=' };

/** An attribute value as the browser reads it; undefined when it holds a named reference not known here. */
function decodeAttribute(value: string): string | undefined {
  let unknown = false;
  const decoded = value.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);?/g, (whole, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
    }
    const known = ATTRIBUTE_ENTITIES[body.toLowerCase()];
    if (known === undefined) unknown = true;
    return known ?? whole;
  });
  return unknown ? undefined : decoded;
}

/** A link target that cannot run script: http(s), mailto, tel, or a relative URL. */
function safeHref(raw: string): string | undefined {
  const decoded = decodeAttribute(raw);
  if (decoded === undefined || decoded.trim() === '') return undefined;
  // Browsers drop leading and trailing C0 controls and spaces, and tabs and newlines anywhere, before the scheme.
  const href = decoded.replace(/[\t\n\r]/g, '').replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');
  if (/[\x00-\x1f]/.test(href)) return undefined;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href)?.[1]?.toLowerCase();
  if (scheme === undefined) return href.startsWith('//') ? `https:${href}` : href;
  return scheme === 'http' || scheme === 'https' || scheme === 'mailto' || scheme === 'tel' ? href : undefined;
}

function keptAttributes(tag: string, source: string): string {
  let kept = '';
  for (const match of source.matchAll(ATTRIBUTE)) {
    const name = match[1]!.toLowerCase();
    const value = match[2] ?? match[3] ?? match[4] ?? '';
    if (tag === 'a' && name === 'href') {
      const href = safeHref(value);
      if (href !== undefined) kept += ` href="${escapeHtml(href)}" rel="nofollow noopener noreferrer"`;
    } else if ((tag === 'td' || tag === 'th') && (name === 'colspan' || name === 'rowspan') && /^[1-9][0-9]?$/.test(value)) {
      kept += ` ${name}="${value}"`;
    } else if (tag === 'ol' && name === 'start' && /^[0-9]{1,6}$/.test(value)) {
      kept += ` start="${value}"`;
    }
  }
  return kept;
}

/** The page's own headings come first: the description's headings start below the section's h2. */
function shownTag(tag: string): string {
  const level = /^h([1-6])$/.exec(tag)?.[1];
  return level === undefined ? tag : `h${Math.min(6, Number(level) + 2)}`;
}

/** Text as written, with `<`, `>` and bare ampersands escaped (character references are kept: the browser decodes them into text). */
function safeText(text: string): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    const next = text.slice(at).search(/[&<>"]/);
    if (next < 0) {
      out += text.slice(at);
      break;
    }
    out += text.slice(at, at + next);
    at += next;
    const char = text[at]!;
    if (char === '&') {
      const reference = REFERENCE.exec(text.slice(at, at + 40))?.[0];
      out += reference ?? '&amp;';
      at += reference?.length ?? 1;
    } else {
      out += char === '<' ? '&lt;' : char === '>' ? '&gt;' : '&quot;';
      at += 1;
    }
  }
  return out;
}

/** Where the dropped element that starts at `from` (after its start tag) ends: after its end tag, or the end of input. */
function endOfDropped(source: string, from: number, tag: string): number {
  const lower = source.toLowerCase();
  if (RAW_TEXT.has(tag)) {
    const close = lower.indexOf(`</${tag}`, from);
    if (close < 0) return source.length;
    const end = source.indexOf('>', close);
    return end < 0 ? source.length : end + 1;
  }
  // Other dropped elements may nest (an svg in an svg): count their start and end tags.
  const tags = new RegExp(`<(/?)${tag}(?=[\\s/>])[^>]*>`, 'gi');
  tags.lastIndex = from;
  let depth = 1;
  for (let match = tags.exec(source); match; match = tags.exec(source)) {
    depth += match[1] ? -1 : match[0].endsWith('/>') ? 0 : 1;
    if (depth === 0) return match.index + match[0].length;
  }
  return source.length;
}

/**
 * The merchant's description HTML reduced to an allow-list: text, the tags of KEPT_TAGS (headings moved below the
 * page's own), links to http(s), mailto and tel only (nofollow); every other tag is dropped (its text kept),
 * scripts, styles, frames, forms' fields and embedded media with their content; comments go. Every element left
 * open is closed, so nothing it holds reaches the rest of the page.
 */
export function merchantHtml(source: string): Html {
  let out = '';
  const open: string[] = [];
  let at = 0;
  while (at < source.length) {
    const lt = source.indexOf('<', at);
    if (lt < 0) {
      out += safeText(source.slice(at));
      break;
    }
    out += safeText(source.slice(at, lt));
    at = lt;
    const rest = source.slice(at, at + 4096);
    if (rest.startsWith('<!--')) {
      const end = source.indexOf('-->', at + 4);
      at = end < 0 ? source.length : end + 3;
      continue;
    }
    if (rest.startsWith('<!') || rest.startsWith('<?') || rest.startsWith('</ ')) {
      const end = source.indexOf('>', at);
      at = end < 0 ? source.length : end + 1;
      continue;
    }
    const match = TAG.exec(rest);
    if (!match) {
      out += '&lt;';
      at += 1;
      continue;
    }
    at += match[0].length;
    const closing = match[1] === '/';
    const tag = match[2]!.toLowerCase();
    if (!closing && DROPPED_WITH_CONTENT.has(tag)) {
      if (!VOID_TAGS.has(tag) && match[4] !== '/') at = endOfDropped(source, at, tag);
      continue;
    }
    if (!KEPT_TAGS.has(tag)) continue;
    const shown = shownTag(tag);
    if (closing) {
      const index = open.lastIndexOf(shown);
      if (index < 0) continue;
      while (open.length > index) out += `</${open.pop()!}>`;
      continue;
    }
    out += `<${shown}${keptAttributes(tag, match[3] ?? '')}>`;
    if (!VOID_TAGS.has(tag)) open.push(shown);
  }
  while (open.length > 0) out += `</${open.pop()!}>`;
  return new Html(out);
}
