/**
 * The approval, order and checkout pages' style rules (joined into the pages' one sheet by ./styles.ts): the summary
 * a phone shows first (total, pictures, ship-to, payment), the seller's line, the products' thumbnails, and the
 * details below. Text keeps a contrast of at least 7:1 on white (#404040 is 10:1).
 */
export const APPROVAL_STYLE: readonly string[] = [
  '.seller{margin:0 0 .25rem;font-size:.875rem}',
  '.seller .postal{display:block;color:#404040}',
  '.lead{margin:.25rem 0 .5rem}',
  'h1+.seller{margin-top:-.5rem}',
  '.summary{border:1px solid #d0d0d0;border-radius:.5rem;padding:.5rem 1rem;margin:.5rem 0 1rem}',
  '.summary p{margin:.375rem 0}',
  '.summary-total{display:flex;justify-content:space-between;align-items:baseline;gap:1rem;font-size:1.125rem}',
  '.summary-total strong{font-size:1.5rem}',
  '.summary-items{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem}',
  '.summary-items span{margin-right:.25rem}',
  '.summary-ship,.summary-pay{font-size:.9375rem}',
  'img.thumb{width:3rem;height:3rem;object-fit:cover;border:1px solid #d0d0d0;border-radius:.25rem;background:#f4f4f4}',
  '.summary-items img.thumb{width:2.5rem;height:2.5rem}',
  'th img.thumb{float:left;margin:0 .5rem .25rem 0}',
  // A phone's item column is narrow: the picture goes above the name, which keeps the whole width.
  '@media (max-width:30rem){th img.thumb{float:none;display:block;width:2.5rem;height:2.5rem;margin:0 0 .25rem}}',
  '.proof h2{margin-top:.75rem}',
  '.proof p{margin:.5rem 0}',
  '.proof .actions{margin:.75rem 0 .5rem}',
  '.expiry{color:#404040;font-size:.875rem}',
  '.details{border-top:1px solid #d0d0d0;margin-top:1.5rem}',
  'h3{font-size:1rem;margin:1rem 0 .25rem}',
  '.delivery{font-weight:600}',
];
