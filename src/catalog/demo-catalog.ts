/** The demo catalog seeded on first start: the store's drink sticks and capsules. Prices in cents. */
import type { CatalogDocument, VariantInput } from './import/catalog-document.js';

const image = (handle: string, alt: string) => [{ src: `/assets/demo/${handle}.svg`, alt, width: 600, height: 600 }];

function stickVariants(
  prefix: string,
  flavours: string[],
  packs: { name: string; price: number; compareAt?: number }[],
  stock: (flavour: string, pack: string) => number,
): VariantInput[] {
  return flavours.flatMap((flavour) =>
    packs.map((pack) => ({
      sku: `${prefix}-${flavour.toUpperCase().replace(/[^A-Z]+/g, '')}-${pack.name.replace(/\D+/g, '')}`,
      options: [flavour, pack.name],
      price: pack.price,
      compare_at_price: pack.compareAt ?? null,
      inventory_quantity: stock(flavour, pack.name),
      weight_grams: Number(pack.name.replace(/\D+/g, '')) * 12,
    })),
  );
}

const monthlySubscription = {
  name: 'Subscribe & save',
  plans: [
    { name: 'Delivery every month', description: 'Save 10% on every delivery. Skip or cancel any time.', discount_percent: 10 },
    {
      name: 'Delivery every 2 months',
      description: 'Save 10% on every delivery. Skip or cancel any time.',
      discount_percent: 10,
      interval_count: 2,
    },
  ],
};

export const demoCatalog: CatalogDocument = {
  products: [
    {
      handle: 'hydration-drink-stick',
      title: 'Hydration Drink Stick',
      description_html:
        '<p>An electrolyte drink mix in a single-serve stick: sodium, potassium and magnesium for fast hydration, ' +
        'with no added sugar. Tear, pour into 500 ml of water, shake.</p><ul><li>Vegan</li><li>Caffeine-free</li></ul>',
      vendor: 'Stick & Capsule Co.',
      product_type: 'Drink Stick',
      tags: ['electrolytes', 'hydration', 'sugar-free', 'vegan'],
      options: ['Flavour', 'Pack size'],
      images: image('hydration-drink-stick', 'Hydration Drink Stick'),
      variants: stickVariants(
        'HYD',
        ['Lemon-Lime', 'Mixed Berry', 'Watermelon'],
        [
          { name: '10 sticks', price: 1499 },
          { name: '30 sticks', price: 3999, compareAt: 4497 },
        ],
        (flavour, pack) => (flavour === 'Watermelon' && pack === '30 sticks' ? 0 : 120),
      ),
      selling_plan_groups: [monthlySubscription],
      complementary: ['energy-drink-stick', 'sleep-capsules'],
    },
    {
      handle: 'energy-drink-stick',
      title: 'Energy Drink Stick',
      description_html:
        '<p>80 mg of caffeine from green tea with B vitamins, in a stick you can carry anywhere. ' +
        'Mix with 330 ml of cold water.</p>',
      vendor: 'Stick & Capsule Co.',
      product_type: 'Drink Stick',
      tags: ['caffeine', 'energy', 'b-vitamins'],
      options: ['Flavour', 'Pack size'],
      images: image('energy-drink-stick', 'Energy Drink Stick'),
      variants: stickVariants(
        'NRG',
        ['Citrus', 'Cherry Cola'],
        [{ name: '12 sticks', price: 1999, compareAt: 2499 }],
        () => 80,
      ),
      complementary: ['hydration-drink-stick'],
    },
    {
      handle: 'espresso-capsules',
      title: 'Espresso Capsules',
      description_html:
        '<p>Single-origin and blended espresso in home-compostable capsules compatible with Nespresso® Original machines.</p>' +
        '<p>Roasted in small batches every week.</p>',
      vendor: 'Stick & Capsule Co.',
      product_type: 'Coffee Capsule',
      tags: ['coffee', 'espresso', 'compostable'],
      options: ['Roast', 'Pack size'],
      images: image('espresso-capsules', 'Espresso Capsules'),
      variants: [
        ['Ristretto', 'RIS'],
        ['Classico', 'CLA'],
        ['Lungo', 'LUN'],
      ].flatMap(([roast, code]) => [
        { sku: `ESP-${code}-10`, options: [roast!, '10 capsules'], price: 650, inventory_quantity: 400, weight_grams: 60 },
        { sku: `ESP-${code}-50`, options: [roast!, '50 capsules'], price: 2900, compare_at_price: 3250, inventory_quantity: 90, weight_grams: 300 },
      ]),
      selling_plan_groups: [monthlySubscription],
      complementary: ['decaf-capsules'],
    },
    {
      handle: 'decaf-capsules',
      title: 'Decaf Espresso Capsules',
      description_html: '<p>Swiss-water decaffeinated espresso: all the crema, 99.9% caffeine-free.</p>',
      vendor: 'Stick & Capsule Co.',
      product_type: 'Coffee Capsule',
      tags: ['coffee', 'decaf', 'compostable'],
      images: image('decaf-capsules', 'Decaf Espresso Capsules'),
      variants: [{ sku: 'ESP-DEC-10', price: 690, inventory_quantity: 150, weight_grams: 60 }],
      complementary: ['espresso-capsules'],
    },
    {
      handle: 'sleep-capsules',
      title: 'Magnesium Sleep Capsules',
      description_html:
        '<p>Magnesium glycinate with L-theanine to wind down in the evening. Take two capsules an hour before bed.</p>' +
        '<p>Back-ordered items ship within 10 days.</p>',
      vendor: 'Stick & Capsule Co.',
      product_type: 'Supplement Capsule',
      tags: ['sleep', 'magnesium', 'vegan'],
      options: ['Count'],
      images: image('sleep-capsules', 'Magnesium Sleep Capsules'),
      variants: [
        { sku: 'SLP-60', options: ['60 capsules'], price: 2400, inventory_quantity: 3, inventory_policy: 'continue', weight_grams: 90 },
        { sku: 'SLP-120', options: ['120 capsules'], price: 4200, compare_at_price: 4800, inventory_quantity: 25, weight_grams: 170 },
      ],
      complementary: ['hydration-drink-stick'],
    },
    {
      handle: 'cold-brew-capsules',
      title: 'Cold Brew Capsules',
      description_html: '<p>Coming soon: slow-steeped cold brew in a capsule.</p>',
      vendor: 'Stick & Capsule Co.',
      product_type: 'Coffee Capsule',
      tags: ['coffee', 'coming-soon'],
      published: false,
      images: image('cold-brew-capsules', 'Cold Brew Capsules'),
      variants: [{ sku: 'CBR-10', price: 790, inventory_quantity: 0 }],
    },
  ],
  collections: [
    {
      handle: 'drink-sticks',
      title: 'Drink Sticks',
      description_html: '<p>Single-serve drink mixes for hydration and energy.</p>',
      products: ['hydration-drink-stick', 'energy-drink-stick'],
    },
    {
      handle: 'capsules',
      title: 'Capsules',
      description_html: '<p>Coffee and supplement capsules.</p>',
      products: ['espresso-capsules', 'decaf-capsules', 'sleep-capsules', 'cold-brew-capsules'],
    },
    {
      handle: 'subscribe-and-save',
      title: 'Subscribe & Save',
      description_html: '<p>Save 10% on every delivery with a subscription.</p>',
      products: ['hydration-drink-stick', 'espresso-capsules'],
    },
  ],
};
