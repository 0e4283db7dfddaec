/**
 * A small published catalog for this store: drink sticks (electrolyte, energy, hydration) and capsules
 * (coffee and supplements), plus a few accessories. Words placed on purpose:
 * - "watermelon": title of the only sold-out product, and the description of the sampler box;
 * - "chamomile": only in a description; "barista": only in tags; "ltd": only in a SKU;
 * - "Café Crème": accents in a title.
 */
import type { Collection, Product, Variant } from '../../src/catalog/types.js';
import type { StockLevels } from '../../src/inventory/stock.js';

/** Units on hand of each variant made here, kept beside it: stock lives apart from the catalog. */
const onHand = new WeakMap<Variant, number>();

/** The stock levels of some fixture products (tests reuse ids, so levels belong to the products given). */
export function stockFor(products: readonly Product[]): StockLevels {
  const levels = new Map(products.flatMap((product) => product.variants.map((variant) => [variant.id, onHand.get(variant) ?? 0] as const)));
  return { onHand: (variantId) => levels.get(variantId) ?? 0 };
}

interface VariantSpec {
  title: string;
  sku: string | null;
  inventoryQuantity?: number;
}

interface ProductSpec {
  id: number;
  handle: string;
  title: string;
  productType: string;
  vendor: string;
  tags: string[];
  descriptionHtml: string;
  variants: VariantSpec[];
  complementaryHandles?: string[];
}

export function makeProduct(spec: ProductSpec): Product {
  const variants = spec.variants.map((variant, position): Variant => {
    const made: Variant = {
      id: spec.id * 100 + position + 1,
      productId: spec.id,
      position: position + 1,
      title: variant.title,
      sku: variant.sku,
      optionValues: [variant.title],
      priceCents: 1990,
      compareAtCents: null,
      inventoryTracked: true,
      inventoryPolicy: 'deny',
      requiresShipping: true,
      taxable: true,
      barcode: null,
      weightGrams: 100,
    };
    onHand.set(made, variant.inventoryQuantity ?? 25);
    return made;
  });
  return {
    id: spec.id,
    handle: spec.handle,
    title: spec.title,
    descriptionHtml: spec.descriptionHtml,
    vendor: spec.vendor,
    productType: spec.productType,
    tags: spec.tags,
    optionNames: ['Size'],
    published: true,
    complementaryHandles: spec.complementaryHandles ?? [],
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '2024-01-01T00:00:00Z',
    publishedAt: '2024-01-01T00:00:00Z',
    variants,
    images: [],
    sellingPlanGroups: [],
  };
}

const STICKS = { productType: 'Drink Sticks', vendor: 'Stickwell' };
const COFFEE = { productType: 'Coffee Capsules', vendor: 'Crema & Co' };
const SUPPLEMENT = { productType: 'Supplement Capsules', vendor: 'NightOwl Labs' };

export const fixtureProducts: Product[] = [
  makeProduct({
    id: 1,
    handle: 'electrolyte-lemon-lime',
    title: 'Electrolyte Drink Sticks – Lemon-Lime',
    ...STICKS,
    tags: ['electrolyte', 'hydration', 'sugar-free'],
    descriptionHtml: '<p>Sodium, potassium &amp; magnesium for fast hydration. Tear, pour into 500&nbsp;ml of water, shake.</p>',
    variants: [
      { title: '12 sticks', sku: 'DS-EL-LL-12' },
      { title: '24 sticks', sku: 'DS-EL-LL-24' },
    ],
  }),
  makeProduct({
    id: 2,
    handle: 'electrolyte-mixed-berry',
    title: 'Electrolyte Drink Sticks – Mixed Berry',
    ...STICKS,
    tags: ['electrolyte', 'hydration', 'sugar-free'],
    descriptionHtml: '<p>Sodium, potassium &amp; magnesium with a ripe berry taste.</p>',
    variants: [
      { title: '12 sticks', sku: 'DS-EL-MB-12' },
      { title: '24 sticks', sku: 'DS-EL-MB-24' },
    ],
  }),
  makeProduct({
    id: 3,
    handle: 'electrolyte-watermelon',
    title: 'Electrolyte Drink Sticks – Watermelon',
    ...STICKS,
    tags: ['electrolyte', 'hydration'],
    descriptionHtml: '<p>Summer favourite, back soon.</p>',
    variants: [{ title: '12 sticks', sku: 'DS-EL-WM-12', inventoryQuantity: 0 }],
  }),
  makeProduct({
    id: 4,
    handle: 'energy-mixed-berry',
    title: 'Energy Drink Sticks – Mixed Berry',
    ...STICKS,
    tags: ['energy', 'caffeine'],
    descriptionHtml: '<p>80&nbsp;mg of natural caffeine from green tea, B vitamins and no sugar.</p>',
    variants: [{ title: '10 sticks', sku: 'DS-EN-MB-10' }],
  }),
  makeProduct({
    id: 5,
    handle: 'energy-lemon-lime',
    title: 'Energy Drink Sticks – Lemon-Lime',
    ...STICKS,
    tags: ['energy', 'caffeine'],
    descriptionHtml: '<p>80&nbsp;mg of natural caffeine from green tea.</p>',
    variants: [{ title: '10 sticks', sku: 'DS-EN-LL-10' }],
  }),
  makeProduct({
    id: 6,
    handle: 'hydration-sampler',
    title: 'Hydration Sampler Box',
    ...STICKS,
    tags: ['bundle', 'hydration'],
    descriptionHtml: '<p>Three of each flavour: <b>lemon-lime</b>, mixed berry and watermelon.</p>',
    variants: [{ title: '30 sticks', sku: 'DS-SAMPLER-30' }],
  }),
  makeProduct({
    id: 7,
    handle: 'kids-hydration-orange',
    title: 'Kids Hydration Sticks – Orange',
    ...STICKS,
    tags: ['kids', 'hydration'],
    descriptionHtml: '<p>Half the sodium, all of the fun.</p>',
    variants: [{ title: '12 sticks', sku: 'DS-KID-OR-12' }],
  }),
  makeProduct({
    id: 8,
    handle: 'espresso-intenso',
    title: 'Espresso Capsules – Intenso',
    ...COFFEE,
    tags: ['espresso', 'intensity-10'],
    descriptionHtml: '<p>Dark roast with notes of cocoa &amp; toasted almond.</p>',
    variants: [
      { title: '10 capsules', sku: 'CC-ESP-INT-10' },
      { title: '50 capsules', sku: 'CC-ESP-INT-50' },
    ],
  }),
  makeProduct({
    id: 9,
    handle: 'espresso-ristretto',
    title: 'Espresso Capsules – Ristretto',
    ...COFFEE,
    tags: ['espresso', 'intensity-12'],
    descriptionHtml: '<p>Short, syrupy and bold.</p>',
    variants: [{ title: '10 capsules', sku: 'CC-ESP-RIS-10' }],
  }),
  makeProduct({
    id: 10,
    handle: 'lungo-forte',
    title: 'Lungo Capsules – Forte',
    ...COFFEE,
    tags: ['lungo', 'intensity-8'],
    descriptionHtml: '<p>A long cup of 110&nbsp;ml with a gentle bitterness.</p>',
    variants: [{ title: '10 capsules', sku: 'CC-LUN-FOR-10' }],
  }),
  makeProduct({
    id: 11,
    handle: 'decaf-espresso',
    title: 'Decaf Espresso Capsules',
    ...COFFEE,
    tags: ['decaf', 'espresso', 'intensity-7'],
    descriptionHtml: '<p>Decaffeinated with the Swiss Water&reg; process.</p>',
    variants: [{ title: '10 capsules', sku: 'CC-ESP-DEC-10' }],
  }),
  makeProduct({
    id: 12,
    handle: 'cafe-creme',
    title: 'Café Crème Capsules',
    ...COFFEE,
    tags: ['mild', 'intensity-5'],
    descriptionHtml: '<p>A smooth blend that loves milk.</p>',
    variants: [{ title: '10 capsules', sku: 'CC-CRE-10' }],
  }),
  makeProduct({
    id: 13,
    handle: 'melatonin-sleep',
    title: 'Melatonin Sleep Capsules',
    ...SUPPLEMENT,
    tags: ['sleep', 'melatonin'],
    descriptionHtml: '<p>1&nbsp;mg melatonin to help you fall asleep.</p>',
    variants: [{ title: '60 capsules', sku: 'SUP-MEL-60' }],
  }),
  makeProduct({
    id: 14,
    handle: 'vitamin-d3',
    title: 'Vitamin D3 Capsules',
    ...SUPPLEMENT,
    tags: ['vitamins', 'immune'],
    descriptionHtml: '<p>1000 IU per capsule for the winter months.</p>',
    variants: [{ title: '90 capsules', sku: 'SUP-D3-90' }],
  }),
  makeProduct({
    id: 15,
    handle: 'magnesium-night',
    title: 'Magnesium Night Capsules',
    ...SUPPLEMENT,
    tags: ['sleep', 'magnesium'],
    descriptionHtml: '<p>Magnesium glycinate with <em>chamomile</em> &amp; lemon balm to unwind before bed.</p>',
    variants: [{ title: '60 capsules', sku: 'SUP-MAG-60' }],
  }),
  makeProduct({
    id: 16,
    handle: 'wild-berries-vitamin-c',
    title: 'Wild Berries Vitamin C Capsules',
    ...SUPPLEMENT,
    tags: ['vitamins', 'immune'],
    descriptionHtml: '<p>500 mg vitamin C with elderberry extract.</p>',
    variants: [{ title: '60 capsules', sku: 'SUP-VC-60' }],
  }),
  makeProduct({
    id: 17,
    handle: 'capsule-holder',
    title: 'Stainless Capsule Holder',
    productType: 'Accessories',
    vendor: 'Crema & Co',
    tags: ['storage'],
    descriptionHtml: '<p>Holds 40 coffee capsules on your counter.</p>',
    variants: [{ title: 'Default Title', sku: 'ACC-HOLD-40' }],
  }),
  makeProduct({
    id: 18,
    handle: 'milk-frother',
    title: 'Handheld Milk Frother',
    productType: 'Accessories',
    vendor: 'Crema & Co',
    tags: ['barista', 'latte'],
    descriptionHtml: '<p>Froths in 15 seconds. Runs on two AA batteries.</p>',
    variants: [{ title: 'Default Title', sku: 'ACC-FROTH' }],
  }),
  makeProduct({
    id: 19,
    handle: 'limited-edition-sticks',
    title: 'Limited Edition Sticks',
    ...STICKS,
    tags: ['seasonal'],
    descriptionHtml: '<p>A surprise flavour every season.</p>',
    variants: [{ title: 'Spring edition', sku: 'LTD-24-SPR' }],
  }),
  makeProduct({
    id: 20,
    handle: 'travel-shaker',
    title: 'Travel Shaker Bottle',
    productType: 'Accessories',
    vendor: 'Stickwell',
    tags: ['on-the-go'],
    descriptionHtml: '<p>Mixes one stick in seconds, no clumps.</p>',
    variants: [{ title: 'Default Title', sku: 'ACC-SHAKER-500' }],
  }),
  makeProduct({
    id: 21,
    handle: 'instant-espresso-sticks',
    title: 'Instant Espresso Sticks',
    ...STICKS,
    vendor: 'Crema & Co',
    tags: ['espresso', 'instant'],
    descriptionHtml: '<p>Just add hot water.</p>',
    variants: [{ title: '20 sticks', sku: 'DS-ESP-20' }],
  }),
];

function makeCollection(id: number, handle: string, title: string, descriptionHtml = ''): Collection {
  return {
    id,
    handle,
    title,
    descriptionHtml,
    published: true,
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '2024-01-01T00:00:00Z',
    productIds: [],
  };
}

export const fixtureCollections: Collection[] = [
  makeCollection(101, 'drink-sticks', 'Drink Sticks'),
  makeCollection(102, 'coffee-capsules', 'Coffee Capsules'),
  makeCollection(103, 'supplement-capsules', 'Supplement Capsules'),
  makeCollection(104, 'sleep-wellness', 'Sleep & Wellness'),
  makeCollection(105, 'best-sellers', 'Best Sellers', '<p>Our most loved espresso and hydration picks.</p>'),
  makeCollection(106, 'cafe-favourites', 'Café Favourites'),
];

/** The stock of the fixture catalog. */
export const fixtureStock = stockFor(fixtureProducts);

/** `count` generated teas (ids from 9000): a catalog large enough that its index is built in more than one step. */
export function teaProducts(count: number): Product[] {
  return Array.from({ length: count }, (_, n) =>
    makeProduct({
      id: 9000 + n,
      handle: `tea-${n}`,
      title: `${['Green', 'Black', 'Mint', 'Rooibos'][n % 4]} Tea No. ${n}`,
      productType: 'Tea',
      vendor: 'Leaf & Co.',
      tags: ['tea', n % 2 ? 'loose' : 'bags'],
      descriptionHtml: `<p>Tea number ${n}, picked by hand.</p>`,
      variants: [{ title: 'Default Title', sku: `TEA-${n}`, inventoryQuantity: n % 7 }],
    }),
  );
}
