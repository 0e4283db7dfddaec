/** A generated catalog of realistic drink-stick and capsule products, deterministic for a given size. */
import type { CatalogDocument, ProductInput } from '../src/catalog/import/catalog-document.js';

const FLAVOURS = ['Lemon-Lime', 'Mixed Berry', 'Watermelon', 'Peach Mango', 'Blood Orange', 'Pink Grapefruit', 'Cherry Cola', 'Blue Raspberry', 'Coconut', 'Ginger Lemon', 'Cucumber Mint', 'Pomegranate'];
const STICK_KINDS = ['Hydration', 'Electrolyte', 'Energy', 'Recovery', 'Focus', 'Immunity', 'Protein', 'Collagen'];
const CAPSULE_KINDS = ['Espresso', 'Lungo', 'Ristretto', 'Decaf', 'Cold Brew', 'Vanilla Latte', 'Hazelnut', 'Caramel'];
const SUPPLEMENTS = ['Magnesium', 'Melatonin', 'Vitamin D3', 'Omega-3', 'Zinc', 'Ashwagandha', 'Probiotic', 'Iron'];
const ORIGINS = ['Colombia', 'Ethiopia', 'Brazil', 'Guatemala', 'Kenya', 'Sumatra', 'Peru', 'Honduras'];
const VENDORS = ['Stick & Capsule Co.', 'Northern Roasters', 'Peak Nutrition', 'Daily Ritual'];

// A small deterministic generator so every run benchmarks the same catalog.
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export function generateCatalog(size: number, seed = 42): CatalogDocument {
  return { products: [...generatedProducts(size, seed)] };
}

/** The products of generateCatalog one at a time, so that a catalog of any size can be written without holding it. */
export function* generatedProducts(size: number, seed = 42): Generator<ProductInput> {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  for (let i = 0; i < size; i++) {
    const kind = i % 3;
    let product: ProductInput;
    if (kind === 0) {
      const type = pick(STICK_KINDS);
      const flavours = [pick(FLAVOURS), pick(FLAVOURS), pick(FLAVOURS)].filter((f, n, all) => all.indexOf(f) === n);
      product = {
        handle: `${type.toLowerCase()}-drink-stick-${i}`,
        title: `${type} Drink Stick ${flavours[0]} No. ${i}`,
        description_html: `<p>A ${type.toLowerCase()} drink mix in single-serve sticks with ${flavours.join(', ')} flavours. Mix with 500 ml of water.</p>`,
        vendor: pick(VENDORS),
        product_type: 'Drink Stick',
        tags: [type.toLowerCase(), 'drink-mix', next() < 0.5 ? 'vegan' : 'sugar-free'],
        options: ['Flavour', 'Pack size'],
        variants: flavours.flatMap((flavour, f) =>
          ['10 sticks', '30 sticks'].map((pack, p) => ({
            sku: `GEN-${i}-${f}-${p}`,
            options: [flavour, pack],
            price: p === 0 ? 999 + Math.floor(next() * 800) : 2999 + Math.floor(next() * 1500),
            inventory_quantity: next() < 0.1 ? 0 : 20 + Math.floor(next() * 200),
          })),
        ),
      };
    } else if (kind === 1) {
      const roast = pick(CAPSULE_KINDS);
      const origin = pick(ORIGINS);
      product = {
        handle: `${roast.toLowerCase().replace(/ /g, '-')}-capsules-${origin.toLowerCase()}-${i}`,
        title: `${roast} Capsules ${origin} No. ${i}`,
        description_html: `<p>${roast} coffee from ${origin}, roasted weekly, in compostable capsules.</p>`,
        vendor: pick(VENDORS),
        product_type: 'Coffee Capsule',
        tags: ['coffee', roast.toLowerCase(), origin.toLowerCase()],
        options: ['Pack size'],
        variants: ['10 capsules', '50 capsules'].map((pack, p) => ({
          sku: `GEN-${i}-${p}`,
          options: [pack],
          price: p === 0 ? 550 + Math.floor(next() * 300) : 2600 + Math.floor(next() * 900),
          compare_at_price: next() < 0.2 ? 3900 : null,
          inventory_quantity: next() < 0.1 ? 0 : 50 + Math.floor(next() * 500),
        })),
      };
    } else {
      const supplement = pick(SUPPLEMENTS);
      product = {
        handle: `${supplement.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-capsules-${i}`,
        title: `${supplement} Capsules No. ${i}`,
        description_html: `<p>${supplement} in easy-to-swallow vegan capsules. Take one daily with food.</p>`,
        vendor: pick(VENDORS),
        product_type: 'Supplement Capsule',
        tags: ['supplement', supplement.toLowerCase()],
        options: ['Count'],
        variants: ['60 capsules', '120 capsules'].map((count, p) => ({
          sku: `GEN-${i}-${p}`,
          options: [count],
          price: p === 0 ? 1800 + Math.floor(next() * 900) : 3200 + Math.floor(next() * 1200),
          inventory_quantity: 10 + Math.floor(next() * 100),
        })),
      };
    }
    yield product;
  }
}
