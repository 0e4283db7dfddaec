/**
 * The catalog tools of the UCP MCP binding: search_catalog (dev.ucp.shopping.catalog.search), and
 * lookup_catalog and get_product (dev.ucp.shopping.catalog.lookup). Adapters over the catalog view:
 * read the UCP request, call one query, shape the UCP response.
 */
import { catalogIndex, lookupCatalog, productDetail, searchCatalog, type CatalogFilters } from '../../catalog/catalog-queries.js';
import { STORE_CURRENCY } from '../../catalog/types.js';
import { ucpProduct } from '../catalog/ucp-product.js';
import { invalidParams } from '../jsonrpc-errors.js';
import { Capability } from '../protocol.js';
import { defineTool, errorOutcome, JsonTextBuilder, outcome, ucpEnvelope, type UcpMessage } from './tool.js';
import { getProductInput, getProductOutput, lookupCatalogInput, lookupCatalogOutput, searchCatalogInput, searchCatalogOutput } from './tool-schemas.js';

const DEFAULT_PAGE_SIZE = 10;
const MAX_PAGE_SIZE = 50;
const MAX_LOOKUP_IDS = 50;
/** Search reads this much of a query (the storefront search caps `q` too); the rest is not worth ranking on. */
const MAX_QUERY_LENGTH = 1000;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

interface RequestFilters {
  categories?: string[];
  price?: { min?: number; max?: number };
}
interface RequestContext {
  currency?: string;
}

/** UCP filters -> catalog filters. A price filter in another currency cannot apply here: say so instead. */
function catalogFilters(filters: RequestFilters | undefined, context: RequestContext | undefined, messages: UcpMessage[]): CatalogFilters {
  const result: CatalogFilters = {};
  if (filters?.categories?.length) result.categories = filters.categories;
  if (filters?.price) {
    if (context?.currency && context.currency.toUpperCase() !== STORE_CURRENCY) {
      messages.push({
        type: 'warning',
        code: 'price_filter_ignored',
        content: `Prices here are in ${STORE_CURRENCY}; the price filter in ${context.currency} was not applied.`,
        path: '$.catalog.filters.price',
      });
    } else {
      if (filters.price.min !== undefined) result.priceMin = filters.price.min;
      if (filters.price.max !== undefined) result.priceMax = filters.price.max;
    }
  }
  return result;
}

/** The cursor is the offset of the next page, opaque to clients. */
function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const offset = /^o(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))?.[1];
  if (offset === undefined) throw invalidParams('Invalid params: catalog.pagination.cursor is not a cursor this store issued.', { path: '/catalog/pagination/cursor' });
  return Number(offset);
}
const encodeCursor = (offset: number) => Buffer.from(`o${offset}`, 'latin1').toString('base64url');

/** search_catalog's description; `storeName` names whose products it searches (tools/list names the store's). */
export const catalogSearchDescription = (storeName?: string) =>
  `Search ${storeName ? `the products of ${storeName}` : "the store's products"} by free text, with optional filters (categories: a product ` +
  'type or collection title; price: min/max in US cents) and cursor pagination (default 10, at most 50 per page). ' +
  'Without a query, lists every product. Each product lists its variants; a variant\'s `id` is the `item.id` to put in a cart.';

export const searchCatalogTool = defineTool<{ catalog: { query?: string; filters?: RequestFilters; context?: RequestContext; pagination?: { cursor?: string; limit?: number } } }>({
  name: 'search_catalog',
  title: 'Search the catalog',
  description: catalogSearchDescription(),
  capability: Capability.catalogSearch,
  inputSchema: searchCatalogInput,
  outputSchema: searchCatalogOutput,
  annotations: READ_ONLY,
  async run(args: { catalog: { query?: string; filters?: RequestFilters; context?: RequestContext; pagination?: { cursor?: string; limit?: number } } }, context) {
    const { catalog } = args;
    const messages: UcpMessage[] = [];
    const filters = catalogFilters(catalog.filters, catalog.context, messages);
    const offset = decodeCursor(catalog.pagination?.cursor);
    const limit = Math.min(catalog.pagination?.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const { store, products } = context;
    const page = searchCatalog(store.catalog.snapshot, store.inventory, (catalog.query ?? '').slice(0, MAX_QUERY_LENGTH), filters, offset, limit);
    const pagination = {
      has_next_page: page.hasNextPage,
      ...(page.hasNextPage ? { cursor: encodeCursor(offset + limit) } : {}),
      ...(page.total !== undefined ? { total_count: page.total } : {}),
    };
    const json = new JsonTextBuilder().add(`{"ucp":${JSON.stringify(ucpEnvelope(context, Capability.catalogSearch))},"products":[`);
    page.products.forEach((product, i) => {
      const { text, escaped } = products.serialised(product);
      if (i > 0) json.add(',');
      json.add(text, escaped);
    });
    json.add(`],"pagination":${JSON.stringify(pagination)}`);
    if (messages.length) json.add(`,"messages":${JSON.stringify(messages)}`);
    return json.add('}').outcome();
  },
});

export const lookupCatalogTool = defineTool<{ catalog: { ids: string[]; filters?: RequestFilters; context?: RequestContext } }>({
  name: 'lookup_catalog',
  title: 'Look up products by identifier',
  description:
    `Batch lookup (up to ${MAX_LOOKUP_IDS} identifiers) of products and variants by product id, variant id, handle or SKU. ` +
    'A variant id or SKU returns that variant (match "exact"); a product id or handle returns the product with its featured ' +
    'variant (match "featured"). Unknown identifiers are left out and reported in `messages` (info, not_found).',
  capability: Capability.catalogLookup,
  inputSchema: lookupCatalogInput,
  outputSchema: lookupCatalogOutput,
  annotations: READ_ONLY,
  async run(args: { catalog: { ids: string[]; filters?: RequestFilters; context?: RequestContext } }, context) {
    const { catalog } = args;
    if (catalog.ids.length > MAX_LOOKUP_IDS) {
      throw invalidParams(`Invalid params: catalog.ids lists ${catalog.ids.length} identifiers; at most ${MAX_LOOKUP_IDS} per call.`, {
        path: '/catalog/ids',
      });
    }
    const messages: UcpMessage[] = [];
    const filters = catalogFilters(catalog.filters, catalog.context, messages);
    const { store } = context;
    const snapshot = store.catalog.snapshot;
    const { matches, notFound } = lookupCatalog(snapshot, store.inventory, catalog.ids, filters);
    const products = matches.map(({ product, variants }) => {
      const titles = catalogIndex(snapshot).collectionTitles(product);
      const shaped = ucpProduct(product, snapshot.baseUrl, store.inventory, titles, store.config.cartMaxLineQuantity, variants.map((v) => v.variant));
      return { ...shaped, variants: shaped.variants.map((variant, i) => ({ ...variant, inputs: variants[i]!.inputs })) };
    });
    for (const id of notFound) messages.push({ type: 'info', code: 'not_found', content: id.slice(0, 200) });
    return {
      json: `{"ucp":${JSON.stringify(ucpEnvelope(context, Capability.catalogLookup))},"products":${JSON.stringify(products)}${messages.length ? `,"messages":${JSON.stringify(messages)}` : ''}}`,
      isError: false,
    };
  },
});

export const getProductTool = defineTool<{ catalog: { id: string; selected?: { name: string; label: string }[]; preferences?: string[]; filters?: RequestFilters; context?: RequestContext } }>({
  name: 'get_product',
  title: 'Get one product in detail',
  description:
    'One product with all its variants, by product id, variant id, handle or SKU. `selected` options (e.g. Flavour: ' +
    'Lemon-Lime) narrow to a variant, listed first; each option value says whether a matching variant exists and is ' +
    'available. `preferences` names the options to relax first when no variant matches every selection.',
  capability: Capability.catalogLookup,
  inputSchema: getProductInput,
  outputSchema: getProductOutput,
  annotations: READ_ONLY,
  async run(
    args: { catalog: { id: string; selected?: { name: string; label: string }[]; preferences?: string[]; filters?: RequestFilters; context?: RequestContext } },
    context,
  ) {
    const { catalog } = args;
    const messages: UcpMessage[] = [];
    const filters = catalogFilters(catalog.filters, catalog.context, messages);
    const { store } = context;
    const snapshot = store.catalog.snapshot;
    const detail = productDetail(snapshot, store.inventory, catalog.id, { selected: catalog.selected, preferences: catalog.preferences, filters });
    if (!detail) {
      return errorOutcome(context.release, [
        { type: 'error', code: 'not_found', content: `No product or variant has the identifier "${catalog.id.slice(0, 100)}".`, severity: 'unrecoverable' },
      ]);
    }
    const titles = catalogIndex(snapshot).collectionTitles(detail.product);
    const product = ucpProduct(detail.product, snapshot.baseUrl, store.inventory, titles, context.store.config.cartMaxLineQuantity, detail.variants);
    return outcome({
      ucp: ucpEnvelope(context, Capability.catalogLookup),
      product: {
        ...product,
        ...(detail.selected.length ? { selected: detail.selected } : {}),
        ...(detail.options.length ? { options: detail.options } : {}),
      },
      ...(messages.length ? { messages } : {}),
    });
  },
});

export const catalogTools = [searchCatalogTool, lookupCatalogTool, getProductTool];
