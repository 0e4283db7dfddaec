import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Value } from 'typebox/value';
import { CatalogDocumentSchema, carries, FIELDS_NOT_CARRIED, ImportError, type ProductInput } from '../../src/catalog/import/catalog-document.js';
import { parseShopifyCsv, readShopifyCsvLayout, shopifyCsvProducts } from '../../src/catalog/import/shopify-csv.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const exported = parseShopifyCsv(fixture('shopify-products.csv'));

function product(handle: string, products = exported.products): ProductInput {
  const found = products.find((p) => p.handle === handle);
  assert.ok(found, `no product "${handle}"`);
  return found;
}

function variant(sku: string) {
  const found = exported.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  assert.ok(found, `no variant "${sku}"`);
  return found;
}

/** A small CSV: the header line, then one line per row. */
const csv = (...lines: string[]) => lines.join('\n') + '\n';
const HEADER = 'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price';

function assertImportError(text: string, where: string, problem?: RegExp): void {
  assert.throws(
    () => parseShopifyCsv(text),
    (error: unknown) => {
      assert.ok(error instanceof ImportError, `expected an ImportError, got ${String(error)}`);
      assert.equal(error.where, where);
      if (problem) assert.match(error.message, problem);
      return true;
    },
  );
}

describe('parseShopifyCsv on a Shopify product export', () => {
  it('imports into a document that validates against CatalogDocumentSchema', () => {
    const errors = [...Value.Errors(CatalogDocumentSchema, exported)].map((e) => JSON.stringify(e));
    assert.deepEqual(errors, []);
    assert.equal(Value.Check(CatalogDocumentSchema, exported), true);
  });

  it('marks every product as carrying no selling plans nor complementary products (an export has none: the import keeps the stored ones)', () => {
    assert.ok(exported.products.length > 0);
    for (const product of exported.products) {
      assert.equal(carries(product, 'selling_plan_groups'), false, product.handle);
      assert.equal(carries(product, 'complementary'), false, product.handle);
    }
    const json: ProductInput = { handle: 'json', title: 'JSON', variants: [{ price: 100 }] };
    assert.equal(carries(json, 'selling_plan_groups'), true, 'a JSON catalog’s product states its plans');
    assert.equal(carries(json, 'complementary'), true, 'and its complementary products');
    const copied = JSON.parse(JSON.stringify(exported.products[0]));
    assert.ok(carries(copied, 'selling_plan_groups') && carries(copied, 'complementary'), 'no file can carry the mark');
  });

  it('makes one product per handle, in the order the handles first appear', () => {
    assert.deepEqual(
      exported.products.map((p) => p.handle),
      [
        'electrolyte-drink-mix-sticks',
        'caffeine-energy-sticks',
        'lungo-coffee-capsules',
        'magnesium-night-capsules',
        'ginger-lemon-sticks-trial',
      ],
    );
    assert.equal(product('electrolyte-drink-mix-sticks').variants.length, 5);
    assert.equal(product('caffeine-energy-sticks').variants.length, 3);
  });

  it('takes the product fields from the first row of a handle, multi-line HTML body included', () => {
    const sticks = product('electrolyte-drink-mix-sticks');
    assert.equal(sticks.title, 'Electrolyte Drink Mix Sticks');
    assert.equal(sticks.vendor, 'Stickwell');
    assert.equal(sticks.product_type, 'Drink Sticks');
    assert.equal(
      sticks.description_html,
      '<p>Tear, pour, shake: one stick in 500 ml of water makes a crisp, lightly salted drink.</p>\n<ul>\n' +
        '<li>Sodium, potassium &amp; magnesium</li>\n<li>"Zero sugar", zero fuss</li>\n</ul>',
    );
    assert.equal(product('lungo-coffee-capsules').description_html?.startsWith('<h2>Long, smooth, "barista-style"</h2>\n'), true);
  });

  it('splits tags on commas and trims them', () => {
    assert.deepEqual(product('electrolyte-drink-mix-sticks').tags, ['electrolytes', 'hydration', 'vegan', 'sugar-free']);
  });

  it('gives a two-option product both option names and titles each variant "value / value"', () => {
    const sticks = product('electrolyte-drink-mix-sticks');
    assert.deepEqual(sticks.options, ['Flavour', 'Pack Size']);
    assert.deepEqual(
      sticks.variants.map((v) => [v.sku, v.title, v.options]),
      [
        ['ELX-CIT-10', 'Citrus / 10 sticks', ['Citrus', '10 sticks']],
        ['ELX-CIT-30', 'Citrus / 30 sticks', ['Citrus', '30 sticks']],
        ['ELX-BER-10', 'Berry / 10 sticks', ['Berry', '10 sticks']],
        ['ELX-BER-30', 'Berry / 30 sticks', ['Berry', '30 sticks']],
        ['ELX-WAT-10', 'Watermelon / 10 sticks', ['Watermelon', '10 sticks']],
      ],
    );
    assert.deepEqual(product('lungo-coffee-capsules').options, ['Intensity']);
    assert.deepEqual(variant('LUN-11-10').options, ['11']);
  });

  it('imports a "Title: Default Title" product with no options', () => {
    const trial = product('ginger-lemon-sticks-trial');
    assert.deepEqual(trial.options, []);
    assert.equal(trial.variants.length, 1);
    assert.equal(trial.variants[0]?.title, 'Default Title');
    assert.deepEqual(trial.variants[0]?.options, []);
  });

  it('turns prices into exact integer cents', () => {
    assert.equal(variant('LUN-06-10').price, 435); // 4.35 * 100 is 434.99999999999994 in floating point
    assert.equal(variant('LUN-11-10').price, 460);
    assert.equal(variant('MAG-NIGHT-30').price, 1999);
    assert.equal(variant('MAG-NIGHT-90').price, 4995);
    assert.equal(variant('ELX-CIT-10').price, 1290);
  });

  it('keeps a compare-at price above the price, and reads an equal or empty one as no sale', () => {
    assert.equal(variant('ELX-CIT-30').compare_at_price, 3870);
    assert.equal(variant('ELX-BER-10').compare_at_price, null);
    assert.equal(variant('ELX-CIT-10').compare_at_price, null);
  });

  it('tracks stock for the "shopify" tracker and not for an empty one', () => {
    assert.equal(variant('ELX-CIT-10').inventory_tracked, true);
    assert.equal(variant('ELX-CIT-10').inventory_quantity, 120);
    assert.equal(variant('ELX-CIT-10').inventory_policy, 'deny');
    assert.equal(variant('GLS-TRIAL-5').inventory_tracked, false);
  });

  it('imports a continue-policy variant that is oversold with a stock of 0', () => {
    const yuzu = variant('NRG-YUZU-20');
    assert.equal(yuzu.inventory_policy, 'continue');
    assert.equal(yuzu.inventory_quantity, 0);
  });

  it('carries grams, shipping, tax and barcode over to each variant', () => {
    const citrus = variant('ELX-CIT-10');
    assert.equal(citrus.weight_grams, 70);
    assert.equal(citrus.requires_shipping, true);
    assert.equal(citrus.taxable, true);
    assert.equal(citrus.barcode, '4006381333931');
    assert.equal(variant('ELX-BER-10').barcode, null);
    assert.equal(variant('MAG-NIGHT-90').taxable, false);
    assert.equal(variant('MAG-NIGHT-90').weight_grams, 120);
  });

  it('adds image-only rows to their product, in position order without duplicate variant images', () => {
    const cdn = 'https://cdn.shopify.com/s/files/1/0612/3456/7890/products/';
    assert.deepEqual(product('electrolyte-drink-mix-sticks').images, [
      { src: `${cdn}electrolyte-citrus.jpg?v=1714561200`, alt: 'Citrus electrolyte sticks, box of 10' },
      { src: `${cdn}electrolyte-citrus-30.jpg?v=1714561200`, alt: null },
      { src: `${cdn}electrolyte-glass.jpg?v=1714561200`, alt: 'A glass of citrus electrolyte drink, with ice' },
    ]);
    assert.deepEqual(product('ginger-lemon-sticks-trial').images, []);
  });

  it('imports a draft product unpublished and active ones published', () => {
    assert.equal(product('ginger-lemon-sticks-trial').published, false);
    assert.equal(product('electrolyte-drink-mix-sticks').published, true);
    assert.equal(product('magnesium-night-capsules').published, true);
  });
});

describe('parseShopifyCsv on hand-made files', () => {
  it('reads every decimal form of a price as exact cents', () => {
    const prices = ['0.07', '1.1', '4.35', '19.99', '0.29', '1005', '1000000.00'];
    const text = csv(
      'Handle,Title,Option1 Name,Option1 Value,Variant Price',
      ...prices.map((price, i) => `prices,${i === 0 ? 'Prices' : ''},${i === 0 ? 'Price' : ''},${price},${price}`),
    );
    const cents = parseShopifyCsv(text).products[0]?.variants.map((v) => v.price);
    assert.deepEqual(cents, [7, 110, 435, 1999, 29, 100500, 100_000_000]);
  });

  it('imports unpublished when Published is "false" or "FALSE", or Status is draft or archived', () => {
    const { products } = parseShopifyCsv(
      csv(
        'Handle,Title,Published,Status,Variant Price',
        'a,A,false,active,1.00',
        'b,B,FALSE,,1.00',
        'c,C,true,archived,1.00',
        'd,D,TRUE,Draft,1.00',
        'e,E,TRUE,active,1.00',
        'f,F,,,1.00',
      ),
    );
    assert.deepEqual(
      products.map((p) => [p.handle, p.published]),
      [['a', false], ['b', false], ['c', false], ['d', false], ['e', true], ['f', true]],
    );
  });

  it('matches columns in any order by trimmed, case-insensitive name and ignores unknown ones', () => {
    const { products } = parseShopifyCsv(
      csv(
        ' variant price ,Google Shopping / Gender,TITLE,Colour Swatch, Handle',
        '12.50,unisex,Cola Sticks,red,cola-sticks',
      ),
    );
    assert.deepEqual(products, [
      {
        handle: 'cola-sticks',
        title: 'Cola Sticks',
        description_html: '',
        vendor: '',
        product_type: '',
        tags: [],
        published: true,
        options: [],
        variants: [
          { sku: null, title: 'Default Title', options: [], price: 1250, compare_at_price: null, inventory_tracked: false, barcode: null },
        ],
        images: [],
        [FIELDS_NOT_CARRIED]: ['selling_plan_groups', 'complementary'],
      },
    ]);
  });

  it('leaves out variant fields whose cells are empty, so the importer defaults apply', () => {
    const text = csv(
      'Handle,Title,Variant Price,Variant Inventory Qty,Variant Inventory Policy,Variant Grams,Variant Requires Shipping,Variant Taxable',
      'plain,Plain,1.00,,,,,',
    );
    const only = parseShopifyCsv(text).products[0]?.variants[0];
    assert.ok(only);
    for (const key of ['inventory_quantity', 'inventory_policy', 'weight_grams', 'requires_shipping', 'taxable']) {
      assert.equal(key in only, false, key);
    }
  });

  it('rounds grams written with decimals to whole grams', () => {
    const text = csv('Handle,Title,Variant Price,Variant Grams', 'beans,Beans,9.00,453.592');
    assert.equal(parseShopifyCsv(text).products[0]?.variants[0]?.weight_grams, 454);
  });

  it('gathers the rows of a handle even when they are not contiguous', () => {
    const { products } = parseShopifyCsv(
      csv(HEADER, 'mints,Mints,Size,Small,M-S,2.00', 'gum,Gum,Title,Default Title,G-1,1.00', 'mints,,,Large,M-L,3.00'),
    );
    assert.deepEqual(products.map((p) => p.handle), ['mints', 'gum']);
    assert.deepEqual(products[0]?.variants.map((v) => v.sku), ['M-S', 'M-L']);
  });

  it('puts images without a position after the positioned ones, in file order, once per src', () => {
    const { products } = parseShopifyCsv(
      csv(
        'Handle,Title,Variant Price,Image Src,Image Position,Image Alt Text,Variant Image',
        'pods,Pods,5.00,/c.jpg,3,Third,/v.jpg',
        'pods,,,/x.jpg,,Unpositioned,',
        'pods,,,/a.jpg,1,First,',
        'pods,,,/c.jpg,4,Again,',
        'pods,,,/b.jpg,2,,',
      ),
    );
    assert.deepEqual(products[0]?.images, [
      { src: '/a.jpg', alt: 'First' },
      { src: '/b.jpg', alt: null },
      { src: '/c.jpg', alt: 'Third' },
      { src: '/v.jpg', alt: null },
      { src: '/x.jpg', alt: 'Unpositioned' },
    ]);
  });

  it('imports a variant row without a SKU with sku null', () => {
    const { products } = parseShopifyCsv(csv(HEADER, 'tea,Tea,Size,Small,,2.00', 'tea,,,Large,,3.00'));
    assert.deepEqual(products[0]?.variants.map((v) => [v.title, v.sku]), [['Small', null], ['Large', null]]);
  });

  it('reads a row with fewer cells than the header as having empty trailing cells', () => {
    const { products } = parseShopifyCsv(csv('Handle,Title,Variant Price,Vendor,Tags', 'short,Short,1.00'));
    assert.equal(products[0]?.vendor, '');
    assert.deepEqual(products[0]?.tags, []);
  });

  it('accepts a byte order mark and Windows line endings', () => {
    const { products } = parseShopifyCsv('\ufeffHandle,Title,Variant Price\r\nbom,Bom,1.00\r\n');
    assert.deepEqual(products.map((p) => p.handle), ['bom']);
  });
});

describe('parseShopifyCsv rejects', () => {
  it('an empty file, or one with only a header, naming the file', () => {
    assertImportError('', 'file', /empty/);
    assertImportError('\n\n', 'file', /empty/);
    assertImportError(csv(HEADER), 'file', /no products/);
    assertImportError(csv(HEADER, ',,,,,'), 'file', /no products/);
  });

  it('a file missing the Handle, Title or Variant Price column, naming the header', () => {
    assertImportError(csv('Title,Variant Price', 'A,1.00'), 'header', /"Handle"/);
    assertImportError(csv('Handle,Variant Price', 'a,1.00'), 'header', /"Title"/);
    assertImportError(csv('Handle,Title', 'a,A'), 'header', /"Variant Price"/);
  });

  it('a row with an empty Handle, naming its row and the Handle column', () => {
    assertImportError(csv(HEADER, 'a,A,Size,S,A-S,1.00', ',,,M,A-M,1.00'), 'row 3, column "Handle"');
  });

  it('a Handle that is not lowercase letters, digits and hyphens', () => {
    assertImportError(csv(HEADER, 'Cola Sticks,Cola,Title,Default Title,C-1,1.00'), 'row 2, column "Handle"', /"Cola Sticks"/);
    assertImportError(csv(HEADER, 'a,A,Title,Default Title,A-1,1.00', 'caf\u00e9,Caf\u00e9,Title,Default Title,C-1,1.00'), 'row 3, column "Handle"');
  });

  it('a product whose first row has no Title', () => {
    assertImportError(csv(HEADER, 'a,A,Title,Default Title,A-1,1.00', 'b,,Title,Default Title,B-1,1.00'), 'row 3, column "Title"');
  });

  it('a negative, non-numeric or over-precise price, naming the Variant Price column', () => {
    for (const price of ['-1.00', 'abc', '19.999', '$5', '1,299.00', '1000000.01']) {
      assertImportError(csv(HEADER, 'a,A,Size,S,A-S,1.00', `a,,,M,A-M,${JSON.stringify(price)}`), 'row 3, column "Variant Price"');
    }
    assertImportError(csv(HEADER, 'a,A,Size,S,A-S,abc'), 'row 2, column "Variant Price"', /expected a price such as 19\.99, got "abc"/);
  });

  it('a variant row with no price', () => {
    assertImportError(csv(HEADER, 'a,A,Size,S,A-S,1.00', 'a,,,M,A-M,'), 'row 3, column "Variant Price"');
  });

  it('a bad compare-at price', () => {
    const header = 'Handle,Title,Variant Price,Variant Compare At Price';
    assertImportError(csv(header, 'a,A,1.00,2.5.0'), 'row 2, column "Variant Compare At Price"');
  });

  it('an inventory quantity that is not a whole number', () => {
    const header = 'Handle,Title,Variant Price,Variant Inventory Qty';
    assertImportError(csv(header, 'a,A,1.00,1.5'), 'row 2, column "Variant Inventory Qty"');
    assertImportError(csv(header, 'a,A,1.00,ten'), 'row 2, column "Variant Inventory Qty"', /"ten"/);
  });

  it('grams that are negative or not a number', () => {
    const header = 'Handle,Title,Variant Price,Variant Grams';
    assertImportError(csv(header, 'a,A,1.00,-5'), 'row 2, column "Variant Grams"');
    assertImportError(csv(header, 'a,A,1.00,70g'), 'row 2, column "Variant Grams"');
  });

  it('an inventory policy other than deny or continue', () => {
    const header = 'Handle,Title,Variant Price,Variant Inventory Policy';
    assertImportError(csv(header, 'a,A,1.00,deny', 'b,B,1.00,backorder'), 'row 3, column "Variant Inventory Policy"', /"backorder"/);
  });

  it('a true/false column holding something else', () => {
    const header = 'Handle,Title,Variant Price,Variant Taxable';
    assertImportError(csv(header, 'a,A,1.00,yes'), 'row 2, column "Variant Taxable"');
  });

  it('a variant with the same options as an earlier variant of its product', () => {
    const header = 'Handle,Title,Option1 Name,Option1 Value,Option2 Name,Option2 Value,Variant Price';
    assertImportError(
      csv(header, 'a,A,Flavour,Cola,Size,10,1.00', 'a,,,Cola,,30,2.00', 'a,,,Cola,,10,1.00'),
      'row 4, column "Option1 Value"',
      /"Cola \/ 10" is already on row 2/,
    );
    assertImportError(csv(HEADER, 'a,A,Title,Default Title,A-1,1.00', 'a,,,,A-2,1.00'), 'row 3, column "Option1 Value"');
  });

  it('a variant without a value for one of its product options', () => {
    const header = 'Handle,Title,Option1 Name,Option1 Value,Option2 Name,Option2 Value,Variant Price';
    assertImportError(csv(header, 'a,A,Flavour,Cola,Size,10,1.00', 'a,,,Cola,,,2.00'), 'row 3, column "Option2 Value"', /"Size"/);
  });

  it('the same SKU on two variants anywhere in the file', () => {
    assertImportError(
      csv(HEADER, 'a,A,Size,S,DUP-1,1.00', 'b,B,Size,S,B-S,1.00', 'b,,,M,DUP-1,1.00'),
      'row 4, column "Variant SKU"',
      /already used on row 2/,
    );
  });

  it('a CSV syntax error, naming the spreadsheet row even after a multi-line cell and a blank line', () => {
    const header = 'Handle,Title,Body (HTML),Variant Price';
    assertImportError(csv(header, 'a,A,"<p>one</p>\n<p>two</p>",1.00', '', 'b,B,<p>"x"</p>,1.00'), 'row 4');
    assertImportError(csv(header, 'a,A,"<p>one</p>\n<p>two</p>",1.00', 'b,B,x,1.00,extra'), 'row 3');
    assertImportError(csv(header, 'a,A,"<p>unclosed,1.00'), 'row 2', /Quote Not Closed/);
  });

  it('counts a blank line as a spreadsheet row when naming a later row', () => {
    assertImportError(csv(HEADER, 'a,A,Title,Default Title,A-1,1.00', '', 'b,B,Title,Default Title,B-1,x'), 'row 4, column "Variant Price"');
  });

  it('the whole bad export, naming the row and column of its one bad price', () => {
    const bad = fixture('shopify-products-bad.csv');
    assertImportError(bad, 'row 9, column "Variant Price"', /got "12\.9x"/);
    // With that one cell fixed the same file imports, so the bad price was the only fault.
    const fixed = parseShopifyCsv(bad.replace(',12.9x,', ',12.90,'));
    assert.equal(Value.Check(CatalogDocumentSchema, fixed), true);
    assert.equal(fixed.products.length, 3);
  });
});

describe('shopifyCsvProducts, an export read as it streams', () => {
  /** The products of an export as the streaming reader hands them over, after its first read. */
  async function streamed(text: string): Promise<ProductInput[]> {
    const layout = await readShopifyCsvLayout(Readable.from([text]));
    const products: ProductInput[] = [];
    for await (const product of shopifyCsvProducts(Readable.from([text]), layout)) products.push(product);
    return products;
  }

  it('the first read finds the products whose rows are apart, with the last row of each', async () => {
    const layout = await readShopifyCsvLayout(Readable.from([csv(HEADER, 'a,A,Size,S,,1', 'b,B,Size,S,,1', 'a,,,M,,1', 'c,C,Size,S,,1', 'c,,,M,,1', 'b,,,M,,1')]));
    assert.deepEqual([...layout], [['a', 4], ['b', 7]]);
  });

  it('hands products over in the order their handles first appear, a product whose rows are apart whole', async () => {
    const text = csv(HEADER, 'a,A,Size,S,A-S,1', 'b,B,Size,S,B-S,1', 'a,,,M,A-M,1', 'c,C,Size,S,C-S,1', 'b,,,M,B-M,1', 'd,D,Size,S,D-S,1');
    const products = await streamed(text);
    assert.deepEqual(products.map((p) => p.handle), ['a', 'b', 'c', 'd']);
    assert.deepEqual(products.map((p) => p.variants.map((v) => v.sku)), [['A-S', 'A-M'], ['B-S', 'B-M'], ['C-S'], ['D-S']]);
    assert.deepEqual(products, parseShopifyCsv(text).products, 'as the whole file read at once gives them');
  });
});
