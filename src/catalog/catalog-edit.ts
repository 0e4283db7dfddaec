/**
 * The merchant's edit of one product (the admin's product page): its title, description, whether it is published,
 * its images by URL, and per variant its price, compare-at price, SKU and units on hand. A field may hold exactly
 * what an import may write there: the edited product is checked by the import's own checks (productEntryFault:
 * bounds, one text rule per field, images as https addresses on a named host or paths on this store), the
 * description kept as the merchant wrote it and reduced to an allow-list when a page shows it, as an imported one is.
 *
 * One transaction: the product locked, every check, the writes, stock through the inventory (never below zero, and
 * refused when a sale moved it since the form was read), and the audit entries. A refusal changes nothing. The
 * catalog's version moves as an import moves it, so every instance reloads at once (on PostgreSQL by NOTIFY, here
 * by refreshing after commit).
 */
import { recordAudit, type Actor } from '../audit/audit-log.js';
import type { Database, Queryable } from '../db/database.js';
import { StockChangedMeanwhile, type Inventory } from '../inventory/inventory.js';
import type { Catalog } from './catalog.js';
import { bumpCatalogVersion } from './catalog-store.js';
import type { ProductInput } from './import/catalog-document.js';
import { changedFields, imageChanges, type FieldValue } from './import/import-changes.js';
import { productEntryFault } from './import/import-catalog.js';
import { formatMoney } from './types.js';

/** The most units on hand a variant may hold (as the import's inventory_quantity). */
export const MAX_ON_HAND = 1_000_000_000;

export interface EditableImage {
  src: string;
  alt: string | null;
}

export interface EditableVariant {
  id: number;
  title: string;
  sku: string | null;
  priceCents: number;
  compareAtCents: number | null;
  /** Units on hand (0 when the variant has no level yet). */
  onHand: number;
  inventoryTracked: boolean;
}

/** A product as its edit page shows it (published or not): its variants that are still sold, in their order. */
export interface EditableProduct {
  id: number;
  handle: string;
  title: string;
  descriptionHtml: string;
  published: boolean;
  vendor: string;
  updatedAt: Date;
  images: EditableImage[];
  variants: EditableVariant[];
}

/** What an edit changes of a variant; a field left out stays as it is. */
export interface VariantEdit {
  variantId: number;
  priceCents?: number;
  /** null: no compare-at price. */
  compareAtCents?: number | null;
  /** null: no SKU. */
  sku?: string | null;
  onHand?: number;
  /** The units on hand the merchant saw: a level moved since (a sale) refuses the edit rather than undo the sale. */
  onHandWas?: number;
}

/** What an edit changes of a product; a field left out stays as it is. `images` is the whole list, in order. */
export interface ProductEdit {
  title?: string;
  descriptionHtml?: string;
  published?: boolean;
  images?: { src: string; alt?: string | null }[];
  variants?: VariantEdit[];
}

/** Which part of the product a change is: its catalog (text, prices, images, published), or its stock. */
export type EditPart = 'catalog' | 'stock';

/** One change an edit made. `field`: title, description_html, published, image, image.alt, price, compare_at_price, sku, on_hand. */
export interface EditChange {
  part: EditPart;
  field: string;
  from: FieldValue;
  to: FieldValue;
  /** The variant's id and how a person names it (its SKU, else its title), for a variant's field. */
  variantId?: number;
  variant?: string;
}

export interface ProductEdited {
  product: EditableProduct;
  /** Nothing when the edit changed nothing (then nothing was written, no audit entry either). */
  changes: EditChange[];
}

/**
 * Why an edit was refused, nothing changed. `field` names the form's field: title, description_html, published,
 * images.N.src, images.N.alt, or variants.ID.price, variants.ID.compare_at_price, variants.ID.sku, variants.ID.on_hand.
 */
export class ProductEditRefused extends Error {
  constructor(
    readonly code: 'not_found' | 'invalid' | 'sku_taken' | 'not_allowed' | 'stock_changed',
    readonly field: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ProductEditRefused';
  }
}

/** What an edit refreshes after it commits: this instance's catalog and stock (other instances hear NOTIFY). */
export interface EditParts {
  catalog: Pick<Catalog, 'refresh'>;
  inventory: Pick<Inventory, 'setLevels' | 'refresh'>;
}

type ProductRow = { id: number; handle: string; title: string; description_html: string; published: boolean; vendor: string; updated_at: Date | string };
type VariantRow = { id: number; title: string; sku: string | null; price_cents: number; compare_at_cents: number | null; on_hand: number | null; inventory_tracked: boolean };

/** A product as its edit page shows it; undefined when there is none. With `lock`, its row is locked until the transaction ends. */
export async function editableProduct(db: Queryable, productId: number, options: { lock?: boolean } = {}): Promise<EditableProduct | undefined> {
  if (!Number.isSafeInteger(productId) || productId <= 0) return undefined;
  const [row] = await db.query<ProductRow>(
    `select id, handle, title, description_html, published, vendor, updated_at from products where id = $1${options.lock ? ' for update' : ''}`,
    [productId],
  );
  if (!row) return undefined;
  const variants = await db.query<VariantRow>(
    `select v.id, v.title, v.sku, v.price_cents, v.compare_at_cents, i.on_hand, v.inventory_tracked
       from variants v left join inventory_levels i on i.variant_id = v.id
      where v.product_id = $1 and v.archived_at is null order by v.position, v.id`,
    [productId],
  );
  const images = await db.query<{ src: string; alt: string | null }>('select src, alt from product_images where product_id = $1 order by position', [productId]);
  return {
    id: row.id,
    handle: row.handle,
    title: row.title,
    descriptionHtml: row.description_html,
    published: row.published,
    vendor: row.vendor,
    updatedAt: row.updated_at instanceof Date ? row.updated_at : new Date(row.updated_at),
    images,
    variants: variants.map((v) => ({
      id: v.id,
      title: v.title,
      sku: v.sku,
      priceCents: v.price_cents,
      compareAtCents: v.compare_at_cents,
      onHand: v.on_hand ?? 0,
      inventoryTracked: v.inventory_tracked,
    })),
  };
}

export interface ProductListing {
  id: number;
  handle: string;
  title: string;
  published: boolean;
  variants: Pick<EditableVariant, 'id' | 'title' | 'sku' | 'priceCents' | 'onHand' | 'inventoryTracked'>[];
}

/**
 * Products by title (then id), published or not, with their variants still sold: a page of them, and how many there
 * are. `search` finds a product by words of its title, its handle, or a variant's SKU.
 */
export async function listProducts(db: Queryable, options: { search?: string; offset?: number; limit: number }): Promise<{ products: ProductListing[]; total: number }> {
  const search = options.search?.trim() ?? '';
  const pattern = search === '' ? null : `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const where = `($1::text is null or p.title ilike $1 or p.handle ilike $1
    or exists (select 1 from variants s where s.product_id = p.id and s.archived_at is null and s.sku ilike $1))`;
  const [count] = await db.query<{ total: number }>(`select count(*)::int as total from products p where ${where}`, [pattern]);
  const rows = await db.query<{ id: number; handle: string; title: string; published: boolean; variants: string }>(
    `select p.id, p.handle, p.title, p.published,
       (select coalesce(json_agg(json_build_array(v.id, v.title, v.sku, v.price_cents, coalesce(i.on_hand, 0), v.inventory_tracked) order by v.position, v.id), '[]')
          from variants v left join inventory_levels i on i.variant_id = v.id where v.product_id = p.id and v.archived_at is null)::text as variants
       from products p where ${where}
      order by lower(p.title), p.id offset $2 limit $3`,
    [pattern, Math.max(0, options.offset ?? 0), options.limit],
  );
  return {
    total: count?.total ?? 0,
    products: rows.map((row) => ({
      id: row.id,
      handle: row.handle,
      title: row.title,
      published: row.published,
      variants: (JSON.parse(row.variants) as [number, string, string | null, number, number, boolean][]).map(([id, title, sku, priceCents, onHand, inventoryTracked]) => ({
        id,
        title,
        sku,
        priceCents,
        onHand,
        inventoryTracked,
      })),
    })),
  };
}

/** How a person names a variant: its SKU, else its title. */
const variantName = (variant: Pick<EditableVariant, 'sku' | 'title'>) => variant.sku ?? variant.title;

/** The edit's field a fault of the checked product names: `variants.2.price` is the third variant's, by its id. */
function editField(fault: string, product: EditableProduct): string {
  const variant = /^variants\.(\d+)\.(.+)$/.exec(fault);
  if (!variant) return fault;
  const id = product.variants[Number(variant[1])]?.id;
  return `variants.${id}.${variant[2]}`;
}

/** A field's name in a sentence. */
function fieldLabel(field: string, product: EditableProduct): string {
  const variant = /^variants\.(\d+)\.(.+)$/.exec(field);
  if (variant) {
    const named = product.variants.find((v) => v.id === Number(variant[1]));
    return `${VARIANT_FIELD_LABELS[variant[2]!] ?? variant[2]} of ${named ? variantName(named) : 'a variant'}`;
  }
  const image = /^images\.(\d+)\.(src|alt)$/.exec(field);
  if (image) return `image ${Number(image[1]) + 1}'s ${image[2] === 'src' ? 'address' : 'alt text'}`;
  return PRODUCT_FIELD_LABELS[field] ?? field;
}

const PRODUCT_FIELD_LABELS: Record<string, string> = { title: 'the title', description_html: 'the description', published: 'published', images: 'the images' };
const VARIANT_FIELD_LABELS: Record<string, string> = { price: 'the price', compare_at_price: 'the compare-at price', sku: 'the SKU', on_hand: 'units on hand' };

const invalid = (field: string, product: EditableProduct, problem: string) =>
  new ProductEditRefused('invalid', field, `${capitalised(fieldLabel(field, product))} ${problem}.`.replace(/\.\.$/, '.'));

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The edited product as an import entry, checked by the import's checks (only what the edit can change, and what an entry needs). */
function checkAsImported(product: EditableProduct, edit: ProductEdit, variants: Map<number, VariantEdit>): void {
  const entry: ProductInput = {
    handle: product.handle,
    title: edit.title ?? product.title,
    ...(edit.descriptionHtml === undefined ? {} : { description_html: edit.descriptionHtml }),
    ...(edit.images === undefined ? {} : { images: edit.images.map((image) => ({ src: image.src, ...(image.alt ? { alt: image.alt } : {}) })) }),
    variants: product.variants.map((variant) => {
      const change = variants.get(variant.id);
      return {
        sku: change?.sku === undefined ? variant.sku : change.sku,
        price: change?.priceCents ?? variant.priceCents,
        compare_at_price: change?.compareAtCents === undefined ? variant.compareAtCents : change.compareAtCents,
      };
    }),
  };
  const fault = productEntryFault(entry);
  if (fault) {
    const field = editField(fault.field || 'title', product);
    throw invalid(field, product, fault.problem);
  }
}

/** Every change the edit asks for, compared with the product as it is; refusals for what the import's checks do not cover. */
function changesOf(product: EditableProduct, edit: ProductEdit, variants: Map<number, VariantEdit>): EditChange[] {
  const changes: EditChange[] = changedFields([
    ['title', product.title, edit.title ?? product.title],
    ['description_html', product.descriptionHtml, edit.descriptionHtml ?? product.descriptionHtml],
    ['published', product.published, edit.published ?? product.published],
  ]).map((change) => ({ part: 'catalog', ...change }));
  if (edit.images) {
    const before = product.images.map((image, index) => ({ ...image, position: index + 1, width: null, height: null }));
    for (const image of imageChanges(before, edit.images.map((i) => ({ src: i.src, alt: i.alt ?? null })))) {
      if (image.change === 'added') changes.push({ part: 'catalog', field: 'image', from: null, to: image.src });
      else if (image.change === 'removed') changes.push({ part: 'catalog', field: 'image', from: image.src, to: null });
      else for (const field of image.fields ?? []) changes.push({ part: 'catalog', field: `image.${field.field}`, from: field.from, to: field.to, variant: image.src });
    }
  }
  for (const variant of product.variants) {
    const change = variants.get(variant.id);
    if (!change) continue;
    const price = change.priceCents ?? variant.priceCents;
    const compareAt = change.compareAtCents === undefined ? variant.compareAtCents : change.compareAtCents;
    // As a Shopify export's: a compare-at price shows a sale only above the price (the CSV import drops one that is not).
    const pricesEdited = price !== variant.priceCents || compareAt !== variant.compareAtCents;
    if (pricesEdited && compareAt !== null && compareAt <= price) {
      throw invalid(`variants.${variant.id}.compare_at_price`, product, `(${formatMoney(compareAt)}) must be above the price (${formatMoney(price)}), or left empty`);
    }
    if (change.onHand !== undefined && (!Number.isInteger(change.onHand) || change.onHand < 0 || change.onHand > MAX_ON_HAND)) {
      throw invalid(`variants.${variant.id}.on_hand`, product, `must be a whole number from 0 to ${MAX_ON_HAND}`);
    }
    const name = variantName(variant);
    const fields: [EditPart, string, FieldValue, FieldValue][] = [
      ['catalog', 'price', variant.priceCents, price],
      ['catalog', 'compare_at_price', variant.compareAtCents, compareAt],
      ['catalog', 'sku', variant.sku, change.sku === undefined ? variant.sku : change.sku],
      ['stock', 'on_hand', change.onHandWas ?? variant.onHand, change.onHand ?? change.onHandWas ?? variant.onHand],
    ];
    for (const [part, field, from, to] of fields) {
      if (from !== to) changes.push({ part, field, from, to, variantId: variant.id, variant: name });
    }
  }
  return changes;
}

/** SKUs must be unique across the store, archived variants included (an import brings one back by its SKU). */
async function checkSkus(tx: Queryable, product: EditableProduct, changes: readonly EditChange[]): Promise<void> {
  const skuChanges = changes.filter((change) => change.field === 'sku' && change.to !== null);
  if (skuChanges.length === 0) return;
  const finalSku = new Map(product.variants.map((v) => [v.id, v.sku]));
  for (const change of skuChanges) finalSku.set(change.variantId!, change.to as string);
  for (const change of skuChanges) {
    const twice = [...finalSku].some(([variantId, sku]) => variantId !== change.variantId && sku === change.to);
    if (twice) throw new ProductEditRefused('sku_taken', `variants.${change.variantId}.sku`, `The SKU "${change.to as string}" is given to two variants of this product.`);
  }
  const wanted = skuChanges.map((change) => change.to as string);
  const [taken] = await tx.query<{ sku: string; title: string; archived: boolean }>(
    `select v.sku, p.title, v.archived_at is not null as archived from variants v join products p on p.id = v.product_id
      where v.sku = any($1::text[]) and not (v.id = any($2::bigint[])) limit 1`,
    [wanted, product.variants.map((v) => v.id)],
  );
  if (taken) {
    const variantId = skuChanges.find((change) => change.to === taken.sku)!.variantId!;
    const whose = taken.archived ? `a variant of "${taken.title}" no longer sold` : `"${taken.title}"`;
    throw new ProductEditRefused('sku_taken', `variants.${variantId}.sku`, `The SKU "${taken.sku}" is already used by ${whose}.`);
  }
}

/** A change as a person reads it, in the audit log and the admin's notice: `price of TEA-S $4.50 → $5.00`. */
export function editChangeSentence(change: EditChange): string {
  const value = (v: FieldValue) => {
    if (v === null) return 'none';
    if (change.field === 'price' || change.field === 'compare_at_price') return formatMoney(v as number);
    return typeof v === 'string' ? `"${v.length > 60 ? `${v.slice(0, 59)}…` : v}"` : String(v);
  };
  const of = change.variant === undefined ? '' : ` of ${change.variant}`;
  switch (change.field) {
    case 'description_html':
      return 'description changed';
    case 'published':
      return change.to ? 'published' : 'unpublished (hidden from the shop)';
    case 'image':
      return change.to === null ? `image removed ${change.from}` : `image added ${change.to}`;
    case 'on_hand':
      return `units on hand${of} ${change.from} → ${change.to}`;
    default:
      return `${change.field.replaceAll('_', ' ').replace('sku', 'SKU')}${of} ${value(change.from)} → ${value(change.to)}`;
  }
}

/** The audit summary of some changes: one line, the first few, then how many more. */
function summary(changes: readonly EditChange[]): string {
  const shown = changes.slice(0, 8).map(editChangeSentence).join('; ');
  return changes.length > 8 ? `${shown}; and ${changes.length - 8} more` : shown;
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown })?.code === '23505';

/**
 * Edits a product in one transaction, as `actor`, and answers it as it now is with what changed. `may` limits the parts
 * the actor may change (a person whose role allows stock alone): a change to another part refuses the edit. Throws
 * ProductEditRefused, nothing changed, when the product is not there, a field would hold what an import refuses, a
 * SKU is taken, stock would go below zero or moved since it was read.
 */
export async function editProduct(
  db: Database,
  parts: EditParts,
  actor: Actor,
  productId: number,
  edit: ProductEdit,
  options: { may?: ReadonlySet<EditPart> } = {},
): Promise<ProductEdited> {
  let outcome: ProductEdited;
  try {
    outcome = await db.transaction(async (tx) => {
      const product = await editableProduct(tx, productId, { lock: true });
      if (!product) throw new ProductEditRefused('not_found', undefined, 'There is no such product.');
      const variants = new Map<number, VariantEdit>();
      for (const change of edit.variants ?? []) {
        if (!product.variants.some((v) => v.id === change.variantId) || variants.has(change.variantId)) {
          throw new ProductEditRefused('not_found', `variants.${change.variantId}`, 'A variant of the form is no longer sold (an import archived it): reload the page.');
        }
        variants.set(change.variantId, change);
      }
      checkAsImported(product, edit, variants);
      const changes = changesOf(product, edit, variants);
      const forbidden = options.may && changes.find((change) => !options.may!.has(change.part));
      if (forbidden) {
        const field = forbidden.variantId === undefined ? forbidden.field : `variants.${forbidden.variantId}.${forbidden.field}`;
        throw new ProductEditRefused('not_allowed', field, `Your role does not allow changing ${forbidden.part === 'stock' ? 'stock' : 'prices, text or images'}: ask an owner.`);
      }
      if (changes.length === 0) return { product, changes };
      await checkSkus(tx, product, changes);
      await writeEdit(tx, parts, product, edit, variants, changes);
      const catalogChanges = changes.filter((change) => change.part === 'catalog');
      const stockChanges = changes.filter((change) => change.part === 'stock');
      if (catalogChanges.length > 0) {
        await bumpCatalogVersion(tx);
        await recordAudit(tx, actor, { action: 'product.update', productId: String(product.id), summary: summary(catalogChanges) });
      }
      if (stockChanges.length > 0) await recordAudit(tx, actor, { action: 'stock.set', productId: String(product.id), summary: summary(stockChanges) });
      return { product: (await editableProduct(tx, productId))!, changes };
    });
  } catch (error) {
    if (error instanceof StockChangedMeanwhile) {
      const [variantId, now] = [...error.levels][0]!;
      throw new ProductEditRefused('stock_changed', `variants.${variantId}.on_hand`, `Units on hand changed since the page was shown (now ${now}, a sale or another edit): nothing was changed; look again and set it anew.`);
    }
    // Another edit or an import gave the SKU away between the check and the write.
    if (isUniqueViolation(error)) throw new ProductEditRefused('sku_taken', undefined, 'A SKU of the form was taken meanwhile: nothing was changed.');
    throw error;
  }
  // This instance takes the change in before answering (the next page shows it); others hear of it on commit.
  if (outcome.changes.some((change) => change.part === 'catalog')) await parts.catalog.refresh(db);
  if (outcome.changes.some((change) => change.part === 'stock')) await parts.inventory.refresh(db);
  return outcome;
}

async function writeEdit(
  tx: Queryable,
  parts: EditParts,
  product: EditableProduct,
  edit: ProductEdit,
  variants: Map<number, VariantEdit>,
  changes: readonly EditChange[],
): Promise<void> {
  const changed = (field: string) => changes.some((change) => change.field === field && change.variantId === undefined);
  if (changed('title') || changed('description_html') || changed('published')) {
    await tx.query(
      `update products set title = $2, description_html = $3, published = $4,
         published_at = case when $4 then coalesce(published_at, now()) end, updated_at = now() where id = $1`,
      [product.id, edit.title ?? product.title, edit.descriptionHtml ?? product.descriptionHtml, edit.published ?? product.published],
    );
  }
  if (edit.images && changes.some((change) => change.field === 'image' || change.field.startsWith('image.'))) {
    await tx.query('delete from product_images where product_id = $1', [product.id]);
    await tx.query(
      `insert into product_images (product_id, position, src, alt)
       select $1, position, src, nullif(alt, '') from unnest($2::text[], $3::text[]) with ordinality as i(src, alt, position)`,
      [product.id, edit.images.map((image) => image.src), edit.images.map((image) => image.alt ?? '')],
    );
    await tx.query('update products set updated_at = now() where id = $1', [product.id]);
  }
  const variantIds = [...new Set(changes.filter((change) => change.part === 'catalog' && change.variantId !== undefined).map((change) => change.variantId!))];
  // Two variants swapping SKUs would collide row by row: the SKUs are cleared first, then set.
  const skuIds = [...new Set(changes.filter((change) => change.field === 'sku').map((change) => change.variantId!))];
  if (skuIds.length > 1) await tx.query('update variants set sku = null where id = any($1::bigint[])', [skuIds]);
  for (const variantId of variantIds) {
    const variant = product.variants.find((v) => v.id === variantId)!;
    const change = variants.get(variantId)!;
    await tx.query('update variants set price_cents = $2, compare_at_cents = $3, sku = $4, updated_at = now() where id = $1', [
      variantId,
      change.priceCents ?? variant.priceCents,
      change.compareAtCents === undefined ? variant.compareAtCents : change.compareAtCents,
      change.sku === undefined ? variant.sku : change.sku,
    ]);
  }
  const stock = changes.filter((change) => change.part === 'stock');
  if (stock.length > 0) {
    const levels = new Map(stock.map((change) => [change.variantId!, change.to as number]));
    const expected = new Map(
      stock.flatMap((change) => {
        const was = variants.get(change.variantId!)?.onHandWas;
        return was === undefined ? [] : [[change.variantId!, was] as [number, number]];
      }),
    );
    await parts.inventory.setLevels(tx, levels, expected);
  }
}
