/**
 * Products in the admin: the list (published or not, each variant with its SKU, price and units on hand; a search by
 * title, handle or SKU; pages of 50) and a product's edit page: title, description, published, images by URL, and per
 * variant price, compare-at price, SKU and units on hand, as one plain form. Saving calls editProduct as the signed-in
 * person (one transaction, audited, live on every instance at once); a refusal is the page again with the refusal
 * beside its field and nothing changed (400 for what a field may not hold, 409 for a SKU taken or stock moved
 * meanwhile, 403 for what the role may not change); success is 303 back with a notice. An owner edits everything;
 * staff see the catalog's fields and change units on hand only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditOfProduct } from '../audit/audit-log.js';
import { editableProduct, editProduct, listProducts, MAX_ON_HAND, ProductEditRefused, type EditableProduct, type EditPart, type ProductEdit, type VariantEdit } from '../catalog/catalog-edit.js';
import { parseDollars } from '../fields/money-amount.js';
import { html, typed, type Html } from '../markup/html.js';
import { staffMay, type StaffSession } from '../staff/staff.js';
import { actorOf, allowed, csrfField, field, money, notice, seeOther, sendPage, staffOf, SECTIONS, type AdminContext, doneOf } from './admin-kit.js';

const PRODUCTS = SECTIONS.products.path;
const PAGE_SIZE = 50;
/** Blank image rows the form offers for adding images. */
const NEW_IMAGE_ROWS = 2;
/** The most image rows a form may send (the import's 250 images, and the blank rows). */
const MAX_IMAGE_ROWS = 260;
/** An edit form with a long description (100,000 characters, percent-encoded) is larger than the admin's usual forms. */
const EDIT_BODY_LIMIT = 1024 * 1024;
/** Entries of the product's history the page shows. */
const HISTORY_SHOWN = 20;

const productPath = (id: number) => `${PRODUCTS}/${id}`;
const productId = (text: string): number | undefined => (/^[1-9][0-9]{0,17}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined);

const DONE: Record<string, string> = {
  saved: 'Saved: the change is live on the shop, its JSON and the commerce door.',
  unchanged: 'Nothing was changed: the form held what the product already had.',
};

/** A refusal shown beside its field (and above the form), nothing changed. */
interface Refusal {
  field: string | undefined;
  text: string;
}

/** Input the form should not have sent (a price that is no amount): 400, beside its field. */
class BadInput extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the person may change: the catalog's fields (owner), units on hand (owner and staff). */
function partsFor(staff: StaffSession): Set<EditPart> {
  const parts = new Set<EditPart>();
  if (staffMay(staff.role, 'catalog')) parts.add('catalog');
  if (staffMay(staff.role, 'stock')) parts.add('stock');
  return parts;
}

// ---------------------------------------------------------------------------------------------------------------
// The list

function listPage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, search: string, page: number, result: Awaited<ReturnType<typeof listProducts>>): FastifyReply {
  const pages = Math.max(1, Math.ceil(result.total / PAGE_SIZE));
  const link = (n: number) => `${PRODUCTS}?${new URLSearchParams({ ...(search ? { q: search } : {}), page: String(n) })}`;
  // One row group per product (its title, whether the shop shows it), then a row per variant: four columns read on a phone.
  const groups = result.products.map((product) => {
    const variants = product.variants.map(
      (variant) => html`<tr><th scope="row">${typed(variant.title)}</th><td>${variant.sku ? typed(variant.sku) : html`<span class="muted">none</span>`}</td><td class="n">${money(
        variant.priceCents,
      )}</td><td class="n">${variant.inventoryTracked ? variant.onHand : html`<span class="muted">not tracked</span>`}</td></tr>`,
    );
    return html`<tbody><tr><th scope="rowgroup" colspan="4"><a href="${productPath(product.id)}">${typed(product.title)}</a> · ${product.published ? 'Published' : html`<strong>Hidden</strong>`} <span class="muted">${product.handle}</span></th></tr>
${variants.length ? variants : html`<tr><td colspan="4" class="muted">No variant is sold.</td></tr>`}</tbody>`;
  });
  const caption = html`Products ${result.total > PAGE_SIZE ? html`(page ${page} of ${pages}, ${result.total} in all)` : html`(${result.total})`}`;
  const table = result.products.length
    ? html`<div class="scroll" role="region" aria-labelledby="products-caption" tabindex="0"><table>
<caption id="products-caption">${caption}</caption>
<thead><tr><th scope="col">Variant</th><th scope="col">SKU</th><th scope="col" class="n">Price</th><th scope="col" class="n">On hand</th></tr></thead>
${groups}
</table></div>`
    : html`<p>${search ? 'No product matches.' : 'No products yet: import a catalog.'}</p>`;
  const pagination =
    pages > 1
      ? html`<nav class="pages" aria-label="Pages of products"><ul>
${page > 1 ? html`<li><a href="${link(page - 1)}" rel="prev">Previous page</a></li>` : ''}
<li aria-current="page">Page ${page} of ${pages}</li>
${page < pages ? html`<li><a href="${link(page + 1)}" rel="next">Next page</a></li>` : ''}
</ul></nav>`
      : '';
  return sendPage(reply, ctx, request.staff, {
    title: 'Products',
    section: 'products',
    body: html`<h1>Products</h1>
<form method="get" action="${PRODUCTS}" class="filters" role="search" aria-label="Search products">
<div class="field"><label for="product-search">Title, handle or SKU</label><input id="product-search" name="q" type="search" value="${search}" maxlength="200" autocomplete="off"></div>
<button type="submit">Search</button>${search ? html` <a href="${PRODUCTS}">Show all</a>` : ''}
</form>
${table}
${pagination}`,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The edit page

/** What the form shows in each field: the product's values, or what the person typed (after a refusal). */
type FormValues = Record<string, string>;

function valuesOf(product: EditableProduct): FormValues {
  const values: FormValues = { title: product.title, description: product.descriptionHtml, published: product.published ? 'yes' : '' };
  product.images.forEach((image, i) => {
    values[`image_src_${i}`] = image.src;
    values[`image_alt_${i}`] = image.alt ?? '';
  });
  for (const variant of product.variants) {
    values[`price_${variant.id}`] = (variant.priceCents / 100).toFixed(2);
    values[`compare_${variant.id}`] = variant.compareAtCents === null ? '' : (variant.compareAtCents / 100).toFixed(2);
    values[`sku_${variant.id}`] = variant.sku ?? '';
    values[`stock_${variant.id}`] = String(variant.onHand);
    values[`stock_was_${variant.id}`] = String(variant.onHand);
  }
  return values;
}

/** The typed values of a refused form (never the CSRF token), over the product's own. */
function typedValues(product: EditableProduct, body: unknown): FormValues {
  const values = valuesOf(product);
  if (typeof body !== 'object' || body === null) return values;
  if (field(body, 'catalog') === '1') values.published = '';
  for (const [name, value] of Object.entries(body)) {
    if (name !== '_csrf' && typeof value === 'string') values[name] = value.slice(0, 200_000);
  }
  return values;
}

/** The form field a refusal names, from the edit's field (`variants.ID.price` is the form's `price_ID`). */
function formFieldOf(refusalField: string | undefined, imageRows: readonly number[]): string | undefined {
  if (refusalField === undefined) return undefined;
  const variant = /^variants\.(\d+)\.(price|compare_at_price|sku|on_hand)$/.exec(refusalField);
  if (variant) return `${{ price: 'price', compare_at_price: 'compare', sku: 'sku', on_hand: 'stock' }[variant[2]!]}_${variant[1]}`;
  const image = /^images\.(\d+)\.(src|alt)$/.exec(refusalField);
  if (image) return `image_${image[2]}_${imageRows[Number(image[1])] ?? 0}`;
  if (refusalField === 'description_html') return 'description';
  return refusalField;
}

interface FieldOptions {
  values: FormValues;
  refusal: Refusal | undefined;
  disabled: boolean;
}

/** The refusal beside a field, with the field pointing at it; nothing when the refusal is another field's. */
function besideField(name: string, options: FieldOptions): { attributes: Html; message: Html | '' } {
  if (options.refusal?.field !== name) return { attributes: html``, message: '' };
  return { attributes: html` aria-invalid="true" aria-describedby="error-${name}"`, message: html`<p class="problem" id="error-${name}">${options.refusal.text}</p>` };
}

function textInput(name: string, label: string, options: FieldOptions, extra: { maxlength?: number; inputmode?: string; hint?: string; size?: number } = {}): Html {
  const { attributes, message } = besideField(name, options);
  const hintId = extra.hint ? `hint-${name}` : undefined;
  return html`<div class="field"><label for="${name}">${label}</label>${extra.hint ? html`<div class="muted" id="${hintId}">${extra.hint}</div>` : ''}<input id="${name}" name="${name}" type="text" value="${options.values[name] ?? ''}"${
    extra.maxlength ? html` maxlength="${extra.maxlength}"` : ''
  }${extra.inputmode ? html` inputmode="${extra.inputmode}"` : ''}${extra.size ? html` size="${extra.size}"` : ''}${hintId && !message ? html` aria-describedby="${hintId}"` : ''}${
    options.disabled ? html` disabled` : ''
  } autocomplete="off"${attributes}>${message}</div>`;
}

function editForm(staff: StaffSession, product: EditableProduct, values: FormValues, refusal: Refusal | undefined): Html {
  const parts = partsFor(staff);
  const catalog: FieldOptions = { values, refusal, disabled: !parts.has('catalog') };
  const stock: FieldOptions = { values, refusal, disabled: !parts.has('stock') };
  // The rows holding an address (the product's, or what was typed), then a few blank ones to add images.
  const imageCount = Math.max(0, ...Object.entries(values).map(([name, value]) => (/^image_src_\d+$/.test(name) && value.trim() !== '' ? Number(name.slice(10)) + 1 : 0)));
  const rows = Array.from({ length: Math.min(MAX_IMAGE_ROWS, imageCount + NEW_IMAGE_ROWS) }, (_, i) => i);
  const description = besideField('description', catalog);
  const published = values.published === 'yes' || values.published === 'on';
  return html`<form method="post" action="${productPath(product.id)}" aria-label="Edit ${product.title}">
${csrfField(staff)}${parts.has('catalog') ? html`<input type="hidden" name="catalog" value="1">` : ''}
${parts.has('catalog') ? '' : html`<p class="muted">Your role changes units on hand only; the other fields are shown for reference.</p>`}
<fieldset><legend>Product</legend>
${textInput('title', 'Title', catalog, { maxlength: 255, size: 30 })}
<div class="field"><label for="description">Description (HTML)</label><div class="muted" id="hint-description">Shown on the shop reduced to safe tags (paragraphs, lists, links, tables): no scripts, styles or images.</div>
<textarea id="description" name="description" rows="8"${catalog.disabled ? html` disabled` : ''}${description.message ? description.attributes : html` aria-describedby="hint-description"`}>${values.description ?? ''}</textarea>${description.message}</div>
<div class="field"><label><input type="checkbox" name="published" value="yes"${published ? html` checked` : ''}${catalog.disabled ? html` disabled` : ''}> Published on the shop</label>${besideField('published', catalog).message}</div>
</fieldset>
<fieldset><legend>Images</legend>
<p class="muted" id="hint-images">Each image by its address: https:// on a named host, or a path on this store such as /assets/…. Empty an address to remove its image; fill an empty row to add one.</p>
${rows.map(
  (i) => html`<div class="filters">${textInput(`image_src_${i}`, `Image ${i + 1} address`, catalog, { maxlength: 2048, size: 30 })}${textInput(`image_alt_${i}`, `Image ${i + 1} alt text`, catalog, { maxlength: 512, size: 20 })}</div>`,
)}
</fieldset>
${product.variants.map(
  (variant) => html`<fieldset><legend>Variant: ${typed(variant.title)}${variant.sku ? html` (${typed(variant.sku)})` : ''}</legend>
<div class="filters">
${textInput(`price_${variant.id}`, 'Price', catalog, { inputmode: 'decimal', size: 10, maxlength: 14 })}
${textInput(`compare_${variant.id}`, 'Compare-at price', catalog, { inputmode: 'decimal', size: 10, maxlength: 14, hint: 'Empty: none' })}
${textInput(`sku_${variant.id}`, 'SKU', catalog, { maxlength: 255, size: 16 })}
${textInput(`stock_${variant.id}`, variant.inventoryTracked ? 'Units on hand' : 'Units on hand (not tracked)', stock, { inputmode: 'numeric', size: 8, maxlength: 10 })}
<input type="hidden" name="stock_was_${variant.id}" value="${values[`stock_was_${variant.id}`] ?? String(variant.onHand)}">
</div>
</fieldset>`,
)}
<button type="submit">Save changes</button>
</form>`;
}

async function editPage(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: AdminContext,
  product: EditableProduct,
  state: { status?: number; refusal?: Refusal; values?: FormValues } = {},
): Promise<FastifyReply> {
  const staff = staffOf(request);
  const done = doneOf(request, DONE);
  const history = (await auditOfProduct(ctx.store.db, String(product.id))).slice(-HISTORY_SHOWN).reverse();
  const shop = `/products/${product.handle}`;
  return sendPage(reply, ctx, staff, {
    title: `Edit ${product.title}`,
    section: 'products',
    status: state.status,
    body: html`<p><a href="${PRODUCTS}">All products</a></p>
<h1>${typed(product.title)}</h1>
${done ? notice('done', done) : ''}
${state.refusal ? notice('refused', html`Not saved, nothing was changed: ${state.refusal.text}`) : ''}
<p>${product.published ? html`Published: <a href="${shop}">see it on the shop</a>.` : 'Hidden: not on the shop.'} <span class="muted">Handle ${product.handle}${product.vendor ? html`, by ${typed(product.vendor)}` : ''}.</span></p>
<section class="panel" aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
${editForm(staff, product, state.values ?? valuesOf(product), state.refusal)}
</section>
<section aria-labelledby="history-heading">
<h2 id="history-heading">History</h2>
${
  history.length
    ? html`<ol class="timeline">${history.map((entry) => html`<li><strong>${ctx.moments.moment(entry.at)}</strong> · ${entry.actor}<br>${typed(entry.summary)}</li>`)}</ol>`
    : html`<p>No change from the admin or the terminal yet.</p>`
}
</section>`,
  });
}

/** The edit a form asks for, and which form row each image of it came from (a refusal names an image by its place). */
function editFromForm(body: unknown, product: EditableProduct): { edit: ProductEdit; imageRows: number[] } {
  const edit: ProductEdit = {};
  const imageRows: number[] = [];
  const sent = (name: string) => typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)[name] === 'string';
  const named = (variant: EditableProduct['variants'][number]) => variant.sku ?? variant.title;
  if (field(body, 'catalog') === '1') {
    edit.title = field(body, 'title').trim();
    // A browser sends a text area's line breaks as CRLF: one the product already has, written either way, is no change.
    const description = field(body, 'description').replace(/\r\n?/g, '\n');
    if (description !== product.descriptionHtml.replace(/\r\n?/g, '\n')) edit.descriptionHtml = description;
    edit.published = field(body, 'published') === 'yes';
    const images: { src: string; alt: string | null }[] = [];
    for (let row = 0; row < MAX_IMAGE_ROWS; row++) {
      const src = field(body, `image_src_${row}`).trim();
      if (src === '') continue;
      images.push({ src, alt: field(body, `image_alt_${row}`).trim() || null });
      imageRows.push(row);
    }
    edit.images = images;
  }
  const variants: VariantEdit[] = [];
  for (const variant of product.variants) {
    const change: VariantEdit = { variantId: variant.id };
    if (sent(`price_${variant.id}`)) {
      const text = field(body, `price_${variant.id}`).trim();
      const cents = parseDollars(text);
      if (cents === undefined) throw new BadInput(`price_${variant.id}`, `The price of ${named(variant)} must be dollars and cents, such as 12.50${text.startsWith('-') ? ' (not below zero)' : ''}.`);
      change.priceCents = cents;
    }
    if (sent(`compare_${variant.id}`)) {
      const text = field(body, `compare_${variant.id}`).trim();
      const cents = text === '' ? null : parseDollars(text);
      if (cents === undefined) throw new BadInput(`compare_${variant.id}`, `The compare-at price of ${named(variant)} must be dollars and cents, such as 15.00, or empty.`);
      change.compareAtCents = cents;
    }
    if (sent(`sku_${variant.id}`)) change.sku = field(body, `sku_${variant.id}`).trim() || null;
    if (sent(`stock_${variant.id}`)) {
      const text = field(body, `stock_${variant.id}`).trim();
      const was = field(body, `stock_was_${variant.id}`).trim();
      if (!/^[0-9]{1,10}$/.test(text) || Number(text) > MAX_ON_HAND) {
        throw new BadInput(`stock_${variant.id}`, `Units on hand of ${named(variant)} must be a whole number from 0${text.startsWith('-') ? ': stock never goes below zero' : ''}.`);
      }
      // Only a level the person changed is set, and only while it is still the one they saw: a sale meanwhile stays counted.
      if (/^[0-9]{1,10}$/.test(was) && Number(was) !== Number(text)) {
        change.onHand = Number(text);
        change.onHandWas = Number(was);
      } else if (!/^[0-9]{1,10}$/.test(was)) change.onHand = Number(text);
    }
    variants.push(change);
  }
  edit.variants = variants;
  return { edit, imageRows };
}

const REFUSAL_STATUS: Record<ProductEditRefused['code'], number> = { invalid: 400, sku_taken: 409, stock_changed: 409, not_allowed: 403, not_found: 409 };

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;

  admin.get(PRODUCTS, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'stock')) return reply;
    const query = (request.query ?? {}) as Record<string, unknown>;
    const search = typeof query.q === 'string' ? query.q.trim().slice(0, 200) : '';
    const page = typeof query.page === 'string' && /^[1-9][0-9]{0,5}$/.test(query.page) ? Number(query.page) : 1;
    const result = await listProducts(store.db, { search, offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE });
    return listPage(request, reply, ctx, search, page, result);
  });

  admin.get<{ Params: { id: string } }>(`${PRODUCTS}/:id`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'stock')) return reply;
    const id = productId(request.params.id);
    const product = id === undefined ? undefined : await editableProduct(store.db, id);
    if (!product) return sendPage(reply, ctx, request.staff, { title: 'No such product', section: 'products', status: 404, body: html`<h1>No such product</h1><p><a href="${PRODUCTS}">All products</a></p>` });
    return editPage(request, reply, ctx, product);
  });

  admin.post<{ Params: { id: string } }>(`${PRODUCTS}/:id`, { config: { rateLimit: 'admin' }, bodyLimit: EDIT_BODY_LIMIT }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'stock')) return reply;
    const staff = staffOf(request);
    const id = productId(request.params.id);
    const product = id === undefined ? undefined : await editableProduct(store.db, id);
    if (!product) return sendPage(reply, ctx, staff, { title: 'No such product', section: 'products', status: 404, body: html`<h1>No such product</h1><p><a href="${PRODUCTS}">All products</a></p>` });
    let imageRows: number[] = [];
    try {
      const asked = editFromForm(request.body, product);
      imageRows = asked.imageRows;
      const result = await editProduct(store.db, store, actorOf(request), product.id, asked.edit, { may: partsFor(staff) });
      return seeOther(reply, `${productPath(product.id)}?done=${result.changes.length ? 'saved' : 'unchanged'}`);
    } catch (error) {
      const values = typedValues(product, request.body);
      if (error instanceof BadInput) return editPage(request, reply, ctx, product, { status: 400, values, refusal: { field: error.field, text: error.message } });
      if (!(error instanceof ProductEditRefused)) throw error;
      // The page shows the product as it now is (a level moved by a sale), with what the person typed.
      const now = (await editableProduct(store.db, product.id)) ?? product;
      const refusal = { field: formFieldOf(error.field, imageRows), text: error.message };
      if (error.code === 'stock_changed' && refusal.field) values[refusal.field.replace('stock_', 'stock_was_')] = String(now.variants.find((v) => `stock_${v.id}` === refusal.field)?.onHand ?? '');
      return editPage(request, reply, ctx, now, { status: REFUSAL_STATUS[error.code], values, refusal });
    }
  });
}
