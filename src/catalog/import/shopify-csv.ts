/**
 * Reads the product CSV that Shopify admin exports (Products → Export) into the CatalogDocument form.
 * A product spans every row with its Handle: the first carries the product and its first variant,
 * later rows add variants and/or images. Rows are numbered as a spreadsheet shows them: the header is row 1.
 * A file is read a row at a time: a product is handed over once its rows are read, so the file is never held whole,
 * and in the order the handles first appear, as the whole file read at once gives them. An export never carries selling
 * plans (Shopify's subscription apps keep them) nor complementary products: its products are marked FIELDS_NOT_CARRIED
 * with both, and the import keeps what a product already has of them.
 */
import { pipeline } from 'node:stream';
import { parse as parseStream } from 'csv-parse';
import { parse, CsvError } from 'csv-parse/sync';
import { textFault, textFaultSentence, type TextRule } from '../../fields/text.js';
import { catalogUrlFault, MAX_CATALOG_URL_LENGTH } from '../catalog-urls.js';
import { FIELDS_NOT_CARRIED, ImportError, type CatalogDocument, type ImportedProduct, type ProductInput, type UncarriedField, type VariantInput } from './catalog-document.js';
import { CATALOG_TEXT } from './catalog-fields.js';

const OPTIONS = [
  { name: 'Option1 Name', value: 'Option1 Value' },
  { name: 'Option2 Name', value: 'Option2 Value' },
  { name: 'Option3 Name', value: 'Option3 Value' },
] as const;

type OptionValueColumn = (typeof OPTIONS)[number]['value'];
type Column =
  | (typeof OPTIONS)[number]['name']
  | OptionValueColumn
  | 'Handle' | 'Title' | 'Body (HTML)' | 'Vendor' | 'Type' | 'Tags' | 'Published' | 'Status'
  | 'Variant SKU' | 'Variant Grams' | 'Variant Inventory Tracker' | 'Variant Inventory Qty'
  | 'Variant Inventory Policy' | 'Variant Price' | 'Variant Compare At Price'
  | 'Variant Requires Shipping' | 'Variant Taxable' | 'Variant Barcode'
  | 'Image Src' | 'Image Position' | 'Image Alt Text' | 'Variant Image';

const REQUIRED: Column[] = ['Handle', 'Title', 'Variant Price'];
const HANDLE = /^[a-z0-9-]+$/;
const MAX_CENTS = 100_000_000;
const MAX_COUNT = 1_000_000_000;
const MAX_ITEMS = 250;

class Row {
  constructor(
    readonly number: number,
    private readonly cells: string[],
    private readonly columns: Map<string, number>,
  ) {}

  /**
   * The trimmed cell, refused (naming the row, the column and the product) when its text breaks `rule`: the catalog's
   * text rule (catalog-fields.ts), here so that the row is named. An optional column the file lacks reads as empty.
   */
  get(column: Column, rule: TextRule = CELL): string {
    const index = this.columns.get(column.toLowerCase());
    const value = (index === undefined ? '' : (this.cells[index] ?? '')).trim();
    const fault = textFault(value, rule);
    if (fault) throw this.refused(column, textFaultSentence(fault, rule));
    return value;
  }

  /** A cell holding an address (an image's): empty, or one the catalog may carry. */
  url(column: Column): string {
    const value = this.get(column, URL_CELL);
    const problem = value === '' ? undefined : catalogUrlFault(value);
    if (problem) throw this.refused(column, problem);
    return value;
  }

  error(column: Column, problem: string): ImportError {
    return new ImportError(`row ${this.number}, column "${column}"`, problem);
  }

  /** A cell's text or address refused: its row and column, and its product when the row's handle is one. */
  private refused(column: Column, problem: string): ImportError {
    const index = this.columns.get('handle');
    const handle = (index === undefined ? '' : (this.cells[index] ?? '')).trim();
    return new ImportError(`row ${this.number}, column "${column}"${HANDLE.test(handle) ? ` (product "${handle}")` : ''}`, problem);
  }
}

/** Any other cell: a number, a word, a name. */
const CELL: TextRule = { max: 255, lines: 'single' };
const URL_CELL: TextRule = { max: MAX_CATALOG_URL_LENGTH, lines: 'single' };
/** The Tags cell is a list; each tag is held to the tag's rule on its own. */
const TAGS_CELL: TextRule = { max: Infinity, lines: 'single' };

interface Image {
  src: string;
  alt: string | null;
  position: number | undefined;
  row: number;
}

interface Draft {
  product: ProductInput;
  /** The real options: their names and the column holding each variant's value. */
  options: { name: string; column: OptionValueColumn }[];
  /** Each variant's option values (as JSON) → the row that introduced it. */
  variantRows: Map<string, number>;
  images: Image[];
  /** The product's last row so far. */
  lastRow: number;
}

/**
 * Reads the rows one at a time and hands each product over as soon as its rows have been read (when a row of
 * another handle comes), so a large export is never held whole. Products are handed over in the order their handles
 * first appear (the order they are listed in). Shopify writes a product's rows one after another; a product whose
 * rows are apart (`lastRowApart`, found by a first read of the file) is handed over after its last row, and the
 * products after its first row wait for it.
 */
class ShopifyCsvReader {
  private columns: Map<string, number> | undefined;
  /** The header was blank: whether that is an empty file or a header lacking every column, the rows tell. */
  private blankHeader = false;
  private rowNumber = 0;
  private rows = 0;
  /** Products not yet handed over, in the order their handles first appeared. */
  private readonly drafts = new Map<string, Draft>();
  private current: Draft | undefined;
  /** The last row of each product handed over. */
  private readonly finishedHandles = new Map<string, number>();
  private readonly skuRows = new Map<string, number>();

  /** `lastRowApart`: the last row of a product whose rows are apart; undefined for one whose rows are together. */
  constructor(private readonly lastRowApart: (handle: string) => number | undefined) {}

  /** The next record of the file (the header first); answers the products the record completed, if any. */
  record(cells: string[]): ImportedProduct[] {
    this.rowNumber += 1;
    if (this.columns === undefined && !this.blankHeader) {
      if (isBlank(cells)) this.blankHeader = true;
      else this.columns = headerColumns(cells);
      return [];
    }
    if (isBlank(cells)) return [];
    this.columns ??= headerColumns([]);
    this.rows += 1;
    this.addRow(new Row(this.rowNumber, cells, this.columns));
    return this.handOver();
  }

  /** The file has ended: answers the products still open, in the order their handles first appeared. */
  end(): ImportedProduct[] {
    if (this.rowNumber === 0 || (this.blankHeader && this.rows === 0)) throw new ImportError('file', 'the file is empty');
    if (this.rows === 0) throw new ImportError('file', 'the file has a header but no products');
    return [...this.drafts.values()].map(finishProduct);
  }

  private addRow(row: Row): void {
    const handle = row.get('Handle');
    if (!handle) throw row.error('Handle', 'every row needs the handle of its product');
    if (!HANDLE.test(handle)) {
      throw row.error('Handle', `expected lowercase letters, digits and hyphens, got "${handle}"`);
    }
    if (this.current?.product.handle !== handle) {
      const lastRow = this.finishedHandles.get(handle);
      if (lastRow !== undefined) throw row.error('Handle', `the rows of "${handle}" must follow each other; another product's rows come after row ${lastRow}`);
      let draft = this.drafts.get(handle);
      if (!draft) this.drafts.set(handle, (draft = startProduct(row, handle)));
      this.current = draft;
    }
    const draft = this.current;
    const isVariantRow = (['Option1 Value', 'Variant Price', 'Variant SKU'] as const).some((c) => row.get(c) !== '');
    // The first row always holds a variant, so a product never ends up with none.
    if (draft.product.variants.length === 0 || isVariantRow) addVariant(draft, row, this.skuRows);
    addImages(draft, row);
    draft.lastRow = row.number;
  }

  /** The products first in file order whose rows have all been read: another handle's row came, and their last row. */
  private handOver(): ImportedProduct[] {
    const finished: ImportedProduct[] = [];
    for (const draft of this.drafts.values()) {
      const { handle } = draft.product;
      if (draft === this.current || (this.lastRowApart(handle) ?? 0) > this.rowNumber) break;
      this.drafts.delete(handle);
      this.finishedHandles.set(handle, draft.lastRow);
      finished.push(finishProduct(draft));
    }
    return finished;
  }
}

const isBlank = (cells: string[]) => cells.every((cell) => cell.trim() === '');

function headerColumns(header: string[]): Map<string, number> {
  const columns = new Map<string, number>();
  header.forEach((name, index) => {
    const key = name.trim().toLowerCase();
    if (!columns.has(key)) columns.set(key, index);
  });
  const missing = REQUIRED.find((column) => !columns.has(column.toLowerCase()));
  if (missing) throw new ImportError('header', `missing the "${missing}" column`);
  return columns;
}

/** csv-parse's reading of an export: fewer cells than the header read as empty; more mean a stray delimiter, which it rejects. */
const CSV_OPTIONS = { bom: true, relax_column_count_less: true } as const;

/** The whole export in memory into one document, its products in the order their handles first appear. */
export function parseShopifyCsv(text: string): CatalogDocument {
  const reader = new ShopifyCsvReader(() => Infinity);
  for (const cells of readCsv(() => parse(text, CSV_OPTIONS))) reader.record(cells);
  return { products: reader.end() };
}

/**
 * The records of an export as its bytes come. An error of the bytes' stream reaches the reader (the pipeline destroys
 * the parser with it), and a reader that stops early, or a CSV error, destroys the bytes' stream: a file is closed.
 */
function csvRecords(chunks: AsyncIterable<Uint8Array | string>): AsyncIterable<string[]> {
  const parser = parseStream(CSV_OPTIONS);
  pipeline(chunks, parser, () => {}); // what failed, the reader hears from the parser
  return parser;
}

/** What the first read of an export finds: the last row of each product whose rows are apart, by handle. */
export type ShopifyCsvLayout = ReadonlyMap<string, number>;

/**
 * The first read of an export: the products whose rows are not all together, and the last row of each. What is wrong
 * with the file's CSV the second read names, at its row; a file that cannot be read rejects here.
 */
export async function readShopifyCsvLayout(chunks: AsyncIterable<Uint8Array | string>): Promise<ShopifyCsvLayout> {
  const lastRows = new Map<string, number>();
  const apart = new Set<string>();
  let handleColumn: number | undefined;
  let last: string | undefined;
  let rowNumber = 0;
  try {
    for await (const cells of csvRecords(chunks)) {
      rowNumber += 1;
      if (handleColumn === undefined) {
        handleColumn = cells.findIndex((name) => name.trim().toLowerCase() === 'handle');
        continue;
      }
      const handle = cells[handleColumn]?.trim();
      if (!handle) continue;
      if (handle !== last && lastRows.has(handle)) apart.add(handle);
      lastRows.set(handle, rowNumber);
      last = handle;
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
  }
  return new Map([...apart].map((handle) => [handle, lastRows.get(handle)!]));
}

/**
 * The products of an export as its bytes stream in (a second read, after readShopifyCsvLayout), in the order their
 * handles first appear, each as soon as its rows, and those of the products before it, have been read.
 */
export async function* shopifyCsvProducts(chunks: AsyncIterable<Uint8Array | string>, layout: ShopifyCsvLayout): AsyncGenerator<ImportedProduct> {
  const reader = new ShopifyCsvReader((handle) => layout.get(handle));
  try {
    for await (const cells of csvRecords(chunks)) yield* reader.record(cells);
  } catch (error) {
    throw importErrorOf(error);
  }
  yield* reader.end();
}

function readCsv(read: () => string[][]): string[][] {
  try {
    return read();
  } catch (error) {
    throw importErrorOf(error);
  }
}

function importErrorOf(error: unknown): unknown {
  // csv-parse counts the records before the bad one, header and blank lines included: one per spreadsheet row.
  if (error instanceof CsvError && typeof error.records === 'number') return new ImportError(`row ${error.records + 1}`, error.message);
  return error;
}

function startProduct(row: Row, handle: string): Draft {
  const title = row.get('Title', CATALOG_TEXT.title);
  if (!title) throw row.error('Title', `the first row of "${handle}" needs the product's title`);
  // Shopify writes a product without options as the single option "Title" with the value "Default Title".
  const optionless = row.get('Option1 Name') === 'Title' && row.get('Option1 Value') === 'Default Title';
  const options = optionless
    ? []
    : OPTIONS.map(({ name, value }) => ({ name: row.get(name, CATALOG_TEXT.optionName), column: value })).filter((option) => option.name !== '');
  const status = row.get('Status').toLowerCase();
  return {
    product: {
      handle,
      title,
      description_html: row.get('Body (HTML)', CATALOG_TEXT.descriptionHtml),
      vendor: row.get('Vendor', CATALOG_TEXT.vendor),
      product_type: row.get('Type', CATALOG_TEXT.productType),
      tags: readTags(row),
      published: row.get('Published').toLowerCase() !== 'false' && status !== 'draft' && status !== 'archived',
      options: options.map((option) => option.name),
      variants: [],
    },
    options,
    variantRows: new Map(),
    images: [],
    lastRow: row.number,
  };
}

function readTags(row: Row): string[] {
  const tags = [...new Set(row.get('Tags', TAGS_CELL).split(',').map((tag) => tag.trim()).filter((tag) => tag !== ''))];
  if (tags.length > MAX_ITEMS || tags.some((tag) => tag.length > CATALOG_TEXT.tag.max)) {
    throw row.error('Tags', `expected at most ${MAX_ITEMS} tags of at most ${CATALOG_TEXT.tag.max} characters each`);
  }
  return tags;
}

function addVariant(draft: Draft, row: Row, skuRows: Map<string, number>): void {
  const options = draft.options.map(({ name, column }) => {
    const value = row.get(column, CATALOG_TEXT.optionValue);
    if (!value) throw row.error(column, `expected a value for the option "${name}"`);
    return value;
  });
  const title = options.length > 0 ? options.join(' / ') : 'Default Title';
  const key = JSON.stringify(options);
  const earlier = draft.variantRows.get(key);
  if (earlier !== undefined) {
    const column = draft.options[0]?.column ?? 'Option1 Value';
    throw row.error(column, `duplicate variant: "${title}" is already on row ${earlier}`);
  }
  if (draft.variantRows.size === MAX_ITEMS) throw row.error('Handle', `a product has at most ${MAX_ITEMS} variants`);
  draft.variantRows.set(key, row.number);

  const sku = row.get('Variant SKU', CATALOG_TEXT.sku);
  if (sku) {
    const skuRow = skuRows.get(sku);
    if (skuRow !== undefined) throw row.error('Variant SKU', `the SKU "${sku}" is already used on row ${skuRow}`);
    skuRows.set(sku, row.number);
  }

  const price = readCents(row, 'Variant Price');
  const compareAt = row.get('Variant Compare At Price') ? readCents(row, 'Variant Compare At Price') : null;
  const variant: VariantInput = {
    sku: sku || null,
    title,
    options,
    price,
    // A compare-at price not above the price shows no sale, so it is dropped.
    compare_at_price: compareAt !== null && compareAt > price ? compareAt : null,
    // "shopify", or a fulfilment app's name: either way the stock is counted.
    inventory_tracked: row.get('Variant Inventory Tracker') !== '',
    barcode: row.get('Variant Barcode', CATALOG_TEXT.barcode) || null,
  };
  // Empty cells stay out of the variant so the importer's defaults apply.
  const quantity = readWholeNumber(row, 'Variant Inventory Qty', /^-?\d+$/, 'a whole number such as 12');
  // Shopify exports an oversold variant's stock as negative; nothing is left to sell.
  if (quantity !== undefined) variant.inventory_quantity = Math.max(0, quantity);
  const policy = row.get('Variant Inventory Policy').toLowerCase();
  if (policy === 'deny' || policy === 'continue') variant.inventory_policy = policy;
  else if (policy) throw row.error('Variant Inventory Policy', `expected "deny" or "continue", got "${policy}"`);
  // Shopify may write grams with decimals after converting from ounces or pounds.
  const grams = readWholeNumber(row, 'Variant Grams', /^\d+(\.\d+)?$/, 'a weight in grams such as 250');
  if (grams !== undefined) variant.weight_grams = grams;
  const requiresShipping = readBoolean(row, 'Variant Requires Shipping');
  if (requiresShipping !== undefined) variant.requires_shipping = requiresShipping;
  const taxable = readBoolean(row, 'Variant Taxable');
  if (taxable !== undefined) variant.taxable = taxable;
  draft.product.variants.push(variant);
}

/** "19.99" → 1999 read from the digits, because 19.99 * 100 in floating point is not 1999. */
function readCents(row: Row, column: Column): number {
  const text = row.get(column);
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) throw row.error(column, `expected a price such as 19.99, got "${text}"`);
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (cents > MAX_CENTS) throw row.error(column, `expected a price up to 1000000.00, got "${text}"`);
  return cents;
}

/** A number the pattern accepts, rounded to a whole one; undefined when the cell is empty. */
function readWholeNumber(row: Row, column: Column, pattern: RegExp, example: string): number | undefined {
  const text = row.get(column);
  if (!text) return undefined;
  const value = Math.round(Number(text));
  if (!pattern.test(text) || Math.abs(value) > MAX_COUNT) throw row.error(column, `expected ${example}, got "${text}"`);
  return value;
}

function readBoolean(row: Row, column: Column): boolean | undefined {
  const text = row.get(column).toLowerCase();
  if (text === 'true' || text === 'false') return text === 'true';
  if (text) throw row.error(column, `expected true or false, got "${text}"`);
  return undefined;
}

function addImages(draft: Draft, row: Row): void {
  const src = row.url('Image Src');
  if (src) {
    const position = readWholeNumber(row, 'Image Position', /^[1-9]\d*$/, 'a position such as 1');
    draft.images.push({ src, alt: row.get('Image Alt Text', CATALOG_TEXT.imageAlt) || null, position, row: row.number });
  }
  // In Shopify a variant's image is always one of the product's images; keep it even if no Image Src lists it.
  const variantImage = row.url('Variant Image');
  if (variantImage) draft.images.push({ src: variantImage, alt: null, position: undefined, row: row.number });
}

/** What an export never holds of a product: the import keeps what the store has of these. */
const NOT_IN_AN_EXPORT: readonly UncarriedField[] = Object.freeze(['selling_plan_groups', 'complementary']);

function finishProduct(draft: Draft): ImportedProduct {
  const seen = new Set<string>();
  // Positioned images first by position; the sort is stable, so the rest keep file order.
  const images = draft.images
    .sort((a, b) => (a.position ?? MAX_COUNT + 1) - (b.position ?? MAX_COUNT + 1))
    .filter((image) => {
      if (seen.has(image.src)) return false;
      seen.add(image.src);
      return true;
    });
  const extra = images[MAX_ITEMS];
  if (extra) throw new ImportError(`row ${extra.row}, column "Image Src"`, `a product has at most ${MAX_ITEMS} images`);
  return { ...draft.product, images: images.map(({ src, alt }) => ({ src, alt })), [FIELDS_NOT_CARRIED]: NOT_IN_AN_EXPORT };
}
