/** What shoppers type into the search box, letter by letter: every prefix of 2+ letters of these phrases. */
export const SEARCH_PHRASES = [
  'espresso capsules',
  'hydration drink stick',
  'magnesium',
  'vitamin d3',
  'lemon-lime',
  'cold brew',
  'decaf',
  'electrolyte sticks',
  'melatonin',
  'capsle',
  'berry',
  'omega-3 capsules',
];

export const SEARCH_QUERIES = SEARCH_PHRASES.flatMap((phrase) => Array.from({ length: phrase.length - 1 }, (_, i) => phrase.slice(0, i + 2))).filter(
  (q) => q.trim().length >= 2,
);
