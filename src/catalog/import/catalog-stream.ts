/**
 * A catalog to import, read as it streams: its products one at a time, then its collections, each handed to the
 * import unchecked. A file is never held whole: a JSON catalog's `products` and `collections` are read element by
 * element (@streamparser/json keeps nothing of an element once it is handed over), a Shopify CSV export row by row.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Tokenizer, TokenParser, TokenType, type ParsedTokenInfo } from '@streamparser/json';
import { ImportError } from './catalog-document.js';
import { readShopifyCsvLayout, shopifyCsvProducts, type ShopifyCsvLayout } from './shopify-csv.js';

/** One product or collection of a catalog, as the file gives it, with its place among the file's products or collections. */
export type CatalogEntry = { kind: 'product' | 'collection'; index: number; input: unknown };

export type CatalogFormat = 'json' | 'csv';

/** A Shopify export by its name (`.csv`), else the store's JSON catalog format. */
export function catalogFormatOf(file: string): CatalogFormat {
  return /\.csv$/i.test(file) ? 'csv' : 'json';
}

const CATALOG_FIELDS = ['products', 'collections'] as const;

type Entries = () => AsyncIterable<CatalogEntry>;

/** Entries that need nothing read ahead of them. */
const ready = (entries: Entries) => () => Promise.resolve(entries);

export class CatalogStream {
  private prepared: Promise<Entries> | undefined;

  private constructor(
    /** Reads what the entries need known of the whole file first (a Shopify export's first read); answers the entries. */
    private readonly readAhead: () => Promise<Entries>,
    /** The file read, when it is one (a running store is sent the file itself). */
    readonly file?: { path: string; format: CatalogFormat },
  ) {}

  /** A catalog document already in memory (the demo catalog, the tests' documents). */
  static ofDocument(document: unknown): CatalogStream {
    return new CatalogStream(
      ready(async function* () {
        yield* documentEntries(document);
      }),
    );
  }

  /** A catalog file's text already in memory (an upload in the admin, kept between its preview and its apply). */
  static ofText(text: string, format: CatalogFormat): CatalogStream {
    const read = () => Readable.from([Buffer.from(text, 'utf8')]);
    if (format === 'json') return new CatalogStream(ready(() => jsonEntries(read())));
    return new CatalogStream(async () => {
      const layout = await readShopifyCsvLayout(read());
      return () => csvEntries(read(), layout);
    });
  }

  /** A catalog file, opened when it is read (a Shopify export is read twice: a first read, then its products). */
  static ofFile(file: string, format: CatalogFormat = catalogFormatOf(file)): CatalogStream {
    const read = () => createReadStream(file);
    const origin = { path: file, format };
    if (format === 'json') return new CatalogStream(ready(() => jsonEntries(read())), origin);
    return new CatalogStream(async () => {
      const layout = await readShopifyCsvLayout(read()).catch((error: unknown) => {
        throw unreadable(error) ?? error;
      });
      return () => csvEntries(read(), layout);
    }, origin);
  }

  /**
   * Reads ahead what must be known of the whole file before its entries: a Shopify export's first read. An import
   * awaits it before its transaction opens: on the embedded database every other query waits for an open transaction.
   */
  async prepare(): Promise<void> {
    await this.opened();
  }

  /** The entries one at a time, as the file is read (after prepare, which they await). */
  async *entries(): AsyncGenerator<CatalogEntry> {
    yield* (await this.opened())();
  }

  private opened(): Promise<Entries> {
    return (this.prepared ??= this.readAhead());
  }
}

/** A file the system cannot read (a directory, a disk fault) is refused in one line, as a bad file is. */
function unreadable(error: unknown): ImportError | undefined {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  return typeof code === 'string' && typeof syscall === 'string' ? new ImportError('file', `cannot be read (${(error as Error).message})`) : undefined;
}

/** The products of a Shopify export, each with its place in the file. */
async function* csvEntries(chunks: AsyncIterable<Uint8Array>, layout: ShopifyCsvLayout): AsyncGenerator<CatalogEntry> {
  let index = 0;
  try {
    for await (const input of shopifyCsvProducts(chunks, layout)) yield { kind: 'product', index: index++, input };
  } catch (error) {
    throw unreadable(error) ?? error;
  }
}

/** The entries of a document in memory; its shape around them is checked as a streamed file's is. */
function* documentEntries(document: unknown): Generator<CatalogEntry> {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new ImportError('document', 'must be object');
  const fields = document as Record<string, unknown>;
  for (const key of Object.keys(fields)) checkField(key);
  if (!('products' in fields)) throw missingProducts();
  for (const field of CATALOG_FIELDS) {
    const list = fields[field];
    if (list === undefined && field === 'collections') continue;
    if (!Array.isArray(list)) throw new ImportError(field, 'must be array');
    for (const [index, input] of list.entries()) yield { kind: field === 'products' ? 'product' : 'collection', index, input };
  }
}

function checkField(key: string): void {
  if (!(CATALOG_FIELDS as readonly string[]).includes(key)) throw new ImportError(key.slice(0, 100), `a catalog has only ${CATALOG_FIELDS.join(' and ')}`);
}

const missingProducts = () => new ImportError('document', 'must have required properties products');

/**
 * Watches the tokens of the document's outer object: it must be an object whose fields are `products` (an array,
 * required) and `collections` (an array); what is inside them the import checks entry by entry.
 */
class OuterObject {
  private started = false;
  private depth = 0;
  private expectingKey = false;
  private field: string | undefined;
  private readonly seen = new Set<string>();

  see({ token, value }: ParsedTokenInfo): void {
    if (this.depth === 0) {
      if (this.started) throw new Error('more after the end of the catalog');
      if (token !== TokenType.LEFT_BRACE) throw new ImportError('document', 'must be object');
      this.started = true;
    }
    if (this.depth === 1) this.atTopLevel(token, value);
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) this.depth += 1;
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) this.depth -= 1;
    if (this.depth === 1 && token === TokenType.LEFT_BRACE) this.expectingKey = true;
  }

  private atTopLevel(token: TokenType, value: unknown): void {
    if (this.expectingKey && token === TokenType.STRING) {
      const key = value as string;
      checkField(key);
      if (this.seen.has(key)) throw new ImportError(key, 'given twice');
      this.seen.add(key);
      this.field = key;
      this.expectingKey = false;
    } else if (token === TokenType.COMMA) {
      this.expectingKey = true;
    } else if (token !== TokenType.COLON && this.field !== undefined) {
      if (token !== TokenType.LEFT_BRACKET) throw new ImportError(this.field, 'must be array');
      this.field = undefined;
    }
  }

  end(): void {
    if (!this.started) throw new Error('the file holds no JSON');
    if (!this.seen.has('products')) throw missingProducts();
  }
}

/** The entries of a JSON catalog as its bytes come, each handed over as soon as it is complete. */
async function* jsonEntries(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<CatalogEntry> {
  const outer = new OuterObject();
  const tokenizer = new Tokenizer();
  const parser = new TokenParser({ paths: CATALOG_FIELDS.map((field) => `$.${field}.*`), keepStack: false });
  const complete: CatalogEntry[] = [];
  tokenizer.onToken = (token) => {
    outer.see(token);
    parser.write(token);
  };
  parser.onValue = ({ value, key, stack }) => {
    complete.push({ kind: stack[1]?.key === 'products' ? 'product' : 'collection', index: key as number, input: value });
  };
  const notJson = (error: unknown) =>
    error instanceof ImportError ? error : (unreadable(error) ?? new ImportError('file', `not valid JSON (${(error as Error).message})`));
  try {
    for await (const chunk of chunks) {
      tokenizer.write(chunk);
      yield* complete.splice(0);
    }
    tokenizer.end();
    if (!parser.isEnded) parser.end();
    outer.end();
  } catch (error) {
    throw notJson(error);
  }
  yield* complete.splice(0);
}
