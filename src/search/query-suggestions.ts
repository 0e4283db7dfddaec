/**
 * Query suggestions like Shopify's `queries` resource: completions of what the shopper has typed,
 * drawn from phrases of up to three words in product titles, types, vendors and tags. Each says how
 * much of its text the shopper typed; the storefront door marks that part up as Shopify's `styled_text`.
 */
import type { Product } from '../catalog/types.js';
import { firstPositionNotBefore, positionsOfHighestKeys } from './term-index.js';
import { foldedWords, foldText, isStopword, stem } from './text-normalisation.js';

export interface QuerySuggestion {
  text: string;
  /** How much of `text` (in UTF-16 units from its start) the shopper typed: "cafe c" typed covers "café c" of "café crème". */
  typedLength: number;
}

interface Phrase {
  /** Folded words joined by single spaces: what typed text is compared with. */
  key: string;
  /** Lower-case words as written in the catalog, accents kept: what the shopper sees. */
  text: string;
  /** Folded words, for the stem key. */
  words: string[];
}

interface SuggestionEntry {
  text: string;
  wordCount: number;
  productCount: number;
  /** Singular and plural of one phrase ("capsule", "capsules") share this, so only one is shown. */
  stemKey: string;
}

/** A phrase while the catalog is read: in how many products, and how often each spelling appears. */
interface PhraseTally {
  words: string[];
  productCount: number;
  lastProduct: number;
  /** The first spelling met and its count; others (rare: "lemon lime" besides "lemon-lime") in a Map. */
  spelling: string;
  spellingCount: number;
  otherSpellingCounts: Map<string, number> | undefined;
}

export interface QuerySuggestions {
  /** Phrase keys, sorted, for prefix lookup by binary search. */
  sortedKeys: string[];
  entries: SuggestionEntry[];
}

const MAX_PHRASE_TOKENS = 3;
const MAX_TYPED_WORDS = 12;
/** Phrases longer than this many words rank as if they had this many. */
const MAX_RANKED_WORD_COUNT = 15;
/** Punctuation that ends a phrase: a suggestion never runs across "Electrolyte Sticks, Lemon". */
const PHRASE_BREAK = /\s[-–—]+\s|[,;:|/\\()[\]{}!?–—•·&+*"“”]|\.(?=\s|$)/;
const EDGE_PUNCTUATION = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
const NON_ASCII = /[^\x00-\x7f]/;

/** Runs of one to three words inside each punctuation-free segment, not starting or ending with a grammar word. */
function phrasesOf(sourceText: string): Phrase[] {
  const phrases: Phrase[] = [];
  const lowerCase = NON_ASCII.test(sourceText) ? sourceText.normalize('NFC').toLowerCase() : sourceText.toLowerCase();
  for (const segment of lowerCase.split(PHRASE_BREAK)) {
    const tokens: string[] = [];
    const tokenWords: string[][] = [];
    for (const written of segment.split(/\s+/)) {
      const token = written.replace(EDGE_PUNCTUATION, '');
      const words = foldedWords(token);
      if (words.length === 0) continue;
      tokens.push(token);
      tokenWords.push(words);
    }
    const isGrammarWord = tokenWords.map((words) => words.length === 1 && isStopword(words[0] as string));
    for (let start = 0; start < tokens.length; start += 1) {
      if (isGrammarWord[start]) continue;
      let text = '';
      let words: string[] = [];
      for (let end = start + 1; end <= Math.min(tokens.length, start + MAX_PHRASE_TOKENS); end += 1) {
        text = end === start + 1 ? (tokens[start] as string) : `${text} ${tokens[end - 1] as string}`;
        words = words.concat(tokenWords[end - 1] as string[]);
        if (isGrammarWord[end - 1] || (words.length === 1 && (words[0] as string).length < 2)) continue;
        phrases.push({ key: words.join(' '), text, words });
      }
    }
  }
  return phrases;
}

/** Tallies the phrases of one product at a time (a large catalog is indexed in slices between requests). */
export class QuerySuggestionsBuilder {
  private readonly tallies = new Map<string, PhraseTally>();
  // Types, vendors and tags recur across products: each distinct one is cut into phrases once.
  private readonly recurringSources = new Map<string, { tally: PhraseTally; text: string }[]>();
  private productPosition = 0;

  private tallyOf({ key, text, words }: Phrase): { tally: PhraseTally; text: string } {
    let tally = this.tallies.get(key);
    if (tally === undefined) {
      tally = { words, productCount: 0, lastProduct: -1, spelling: text, spellingCount: 0, otherSpellingCounts: undefined };
      this.tallies.set(key, tally);
    }
    return { tally, text };
  }

  add(product: Product): void {
    const productPosition = this.productPosition++;
    const count = ({ tally, text }: { tally: PhraseTally; text: string }): void => {
      if (tally.lastProduct !== productPosition) {
        tally.productCount += 1;
        tally.lastProduct = productPosition;
      }
      if (text === tally.spelling) {
        tally.spellingCount += 1;
      } else {
        tally.otherSpellingCounts ??= new Map();
        tally.otherSpellingCounts.set(text, (tally.otherSpellingCounts.get(text) ?? 0) + 1);
      }
    };
    for (const phrase of phrasesOf(product.title)) count(this.tallyOf(phrase));
    for (const source of [product.productType, product.vendor, ...product.tags]) {
      let sourcePhrases = this.recurringSources.get(source);
      if (sourcePhrases === undefined) {
        sourcePhrases = phrasesOf(source).map((phrase) => this.tallyOf(phrase));
        this.recurringSources.set(source, sourcePhrases);
      }
      sourcePhrases.forEach(count);
    }
  }

  /** The suggestions of every product added; the builder is not used after. */
  finish(): QuerySuggestions {
    const stemOfWord = new Map<string, string>();
    const stemOf = (word: string): string => {
      let wordStem = stemOfWord.get(word);
      if (wordStem === undefined) {
        wordStem = stem(word);
        stemOfWord.set(word, wordStem);
      }
      return wordStem;
    };
    const sortedKeys = [...this.tallies.keys()].sort();
    const entries = sortedKeys.map((key): SuggestionEntry => {
      const tally = this.tallies.get(key) as PhraseTally;
      return {
        text: mostCommonSpelling(tally),
        wordCount: tally.words.length,
        productCount: tally.productCount,
        stemKey: tally.words.map(stemOf).join(' '),
      };
    });
    return { sortedKeys, entries };
  }
}

/** "lemon-lime" written more often than "lemon lime" wins; equal counts fall back to code-unit order. */
function mostCommonSpelling(tally: PhraseTally): string {
  let best = tally.spelling;
  let bestCount = tally.spellingCount;
  for (const [text, count] of tally.otherSpellingCounts ?? []) {
    if (count > bestCount || (count === bestCount && text < best)) {
      best = text;
      bestCount = count;
    }
  }
  return best;
}

/**
 * Phrases that complete the typed words: the earlier words exactly, the last one as a prefix, plus at
 * most one more word. The typed text itself is not suggested. Phrases in more products come first,
 * then shorter ones, then in key order.
 */
export function suggestCompletions(suggestions: QuerySuggestions, query: string, limit: number): QuerySuggestion[] {
  const typedWords = foldedWords(query).slice(0, MAX_TYPED_WORDS);
  if (typedWords.length === 0) return [];
  const typedKey = typedWords.join(' ');
  const { sortedKeys, entries } = suggestions;
  const first = firstPositionNotBefore(sortedKeys, typedKey);
  const end = firstPositionNotBefore(sortedKeys, `${typedKey}\uffff`);

  const rankKeyOf = (position: number): number => {
    const entry = entries[position] as SuggestionEntry;
    const shortness = MAX_RANKED_WORD_COUNT - Math.min(entry.wordCount, MAX_RANKED_WORD_COUNT);
    return (entry.productCount * (MAX_RANKED_WORD_COUNT + 1) + shortness) * sortedKeys.length + (sortedKeys.length - 1 - position);
  };
  const bestPositionByStemKey = new Map<string, number>();
  for (let position = first; position < end; position += 1) {
    const entry = entries[position] as SuggestionEntry;
    if (sortedKeys[position] === typedKey || entry.wordCount > typedWords.length + 1) continue;
    const known = bestPositionByStemKey.get(entry.stemKey);
    if (known === undefined || rankKeyOf(position) > rankKeyOf(known)) bestPositionByStemKey.set(entry.stemKey, position);
  }
  const positions = [...bestPositionByStemKey.values()];
  const typedLetterCount = typedWords.reduce((count, word) => count + word.length, 0);
  return positionsOfHighestKeys(positions.map(rankKeyOf), limit).map((i) => {
    const { text } = entries[positions[i] as number] as SuggestionEntry;
    return { text, typedLength: typedLength(text, typedLetterCount) };
  });
}

/**
 * How much of the suggestion the shopper typed, counted in folded letters so that typed "cafe c"
 * covers "café c" of "café crème".
 */
function typedLength(text: string, typedLetterCount: number): number {
  let lettersSeen = 0;
  let cut = 0;
  for (const character of text) {
    if (lettersSeen >= typedLetterCount) break;
    lettersSeen += foldText(character).replace(/[^\p{L}\p{N}]/gu, '').length;
    cut += character.length;
  }
  return cut;
}
