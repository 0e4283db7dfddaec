/**
 * An inverted index over documents with weighted fields, shared by product and collection search.
 * Words are matched by stem (so plurals meet), the word being typed also by prefix, and an unknown
 * word of four or more letters by one typo.
 */
import { foldedWords, forEachIndexedWord, indexedWords, isOneEditApart, isStopword, stem } from './text-normalisation.js';

/** Where a word was found; a higher tier ranks higher. */
export const FieldTier = { description: 0, attribute: 1, title: 2 } as const;
export type FieldTier = (typeof FieldTier)[keyof typeof FieldTier];

/** How a query word met an indexed word; a higher kind ranks higher. */
const MatchKind = { typo: 0, prefix: 1, exact: 2 } as const;
type MatchKind = (typeof MatchKind)[keyof typeof MatchKind];

/** One query word's score in one document: field tier dominates, match kind breaks the tie (1..9). */
function wordScore(tier: FieldTier, kind: MatchKind): number {
  return 1 + tier * 3 + kind;
}

export interface DocumentField {
  text: string;
  tier: FieldTier;
  /** The same text recurs across documents (types, vendors, tags, variant titles): read it once. */
  recurring?: boolean;
}

interface Spelling {
  form: string;
  stemId: number;
}

export interface TermIndex {
  documentCount: number;
  stemIds: Map<string, number>;
  /**
   * Postings of all stems in one pair of arrays (one allocation, not one per stem): stem i's documents
   * are postingDocuments[postingStart[i] .. postingStart[i + 1]), ascending, with the best field tier
   * the stem has in each at the same positions of postingTiers.
   */
  postingStart: Int32Array;
  postingDocuments: Int32Array;
  postingTiers: Uint8Array;
  /** Every distinct indexed word as written (folded), sorted, for prefix lookup by binary search. */
  sortedWords: string[];
  /** The stem id of each word in sortedWords, same position. */
  stemIdOfSortedWord: Int32Array;
  /**
   * Typo candidates: each word and stem found outside descriptions, and each of their one-letter
   * deletions, → the spellings they come from with those spellings' stems.
   */
  spellingsByDeletion: Map<string, Spelling[]>;
  /** Merged postings of prefixes with very many completions, filled on first use (see mergedPostingsIfLarge). */
  mergedPrefixPostings: Map<string, MergedPostings>;
}

/** Documents holding any completion of a prefix, with the best field tier among them, same positions. */
interface MergedPostings {
  documents: Int32Array;
  tiers: Uint8Array;
}

/** Shortest words whose typos are forgiven: shorter ones have too many one-letter neighbours. */
const MIN_TYPO_WORD_LENGTH = 4;
/** A query longer than this is cut: nobody types it, and it bounds the work per request. */
const MAX_QUERY_WORDS = 12;
const LETTERS_ONLY = /^\p{L}+$/u;
/** Below this many postings a prefix is always visited word by word, even in a small catalog. */
const MIN_POSTINGS_TO_MERGE = 4096;
/** Bounds the memory kept for merged prefixes; past it they are merged per query, still correct. */
const MAX_MERGED_PREFIXES = 256;

export function buildTermIndex(documents: DocumentField[][]): TermIndex {
  // Words and stems get integer ids so the per-word work is one Map lookup and a few array writes.
  const wordIds = new Map<string, number>();
  const words: string[] = [];
  const stemIdOfWord: number[] = [];
  const wordSeenOutsideDescription: boolean[] = [];
  const stemIds = new Map<string, number>();
  const stems: string[] = [];
  const lastDocumentOfStem: number[] = [];
  const bestTierOfStem: number[] = [];
  // One (stem, document, tier) entry per stem per document, in document order.
  const entryStems: number[] = [];
  const entryDocuments: number[] = [];
  const entryTiers: number[] = [];

  function wordIdOf(word: string): number {
    let wordId = wordIds.get(word);
    if (wordId !== undefined) return wordId;
    wordId = words.length;
    wordIds.set(word, wordId);
    words.push(word);
    wordSeenOutsideDescription.push(false);
    const wordStem = stem(word);
    let stemId = stemIds.get(wordStem);
    if (stemId === undefined) {
      stemId = stems.length;
      stemIds.set(wordStem, stemId);
      stems.push(wordStem);
      lastDocumentOfStem.push(-1);
      bestTierOfStem.push(0);
    }
    stemIdOfWord.push(stemId);
    return wordId;
  }
  const wordIdsOfRecurringText = new Map<string, number[]>();
  let documentIndex = 0;
  let tier: FieldTier = FieldTier.description;
  const addWord = (wordId: number): void => {
    // Typos are forgiven only where a shopper sees the word, as Shopify does: not in descriptions.
    if (tier > FieldTier.description) wordSeenOutsideDescription[wordId] = true;
    const stemId = stemIdOfWord[wordId] as number;
    if (lastDocumentOfStem[stemId] !== documentIndex) {
      lastDocumentOfStem[stemId] = documentIndex;
      bestTierOfStem[stemId] = tier;
      entryStems.push(stemId);
    } else if (tier > (bestTierOfStem[stemId] as number)) {
      bestTierOfStem[stemId] = tier;
    }
  };
  const addText = (word: string): void => addWord(wordIdOf(word));

  for (; documentIndex < documents.length; documentIndex += 1) {
    const firstEntry = entryStems.length;
    for (const field of documents[documentIndex] as DocumentField[]) {
      tier = field.tier;
      if (!field.recurring) {
        forEachIndexedWord(field.text, addText);
        continue;
      }
      let ids = wordIdsOfRecurringText.get(field.text);
      if (ids === undefined) {
        ids = indexedWords(field.text).map(wordIdOf);
        wordIdsOfRecurringText.set(field.text, ids);
      }
      ids.forEach(addWord);
    }
    for (let entry = firstEntry; entry < entryStems.length; entry += 1) {
      entryDocuments.push(documentIndex);
      entryTiers.push(bestTierOfStem[entryStems[entry] as number] as number);
    }
  }

  // Group the entries by stem (a counting sort keeps each stem's documents ascending).
  const postingStart = new Int32Array(stems.length + 1);
  for (const stemId of entryStems) postingStart[stemId + 1] = (postingStart[stemId + 1] as number) + 1;
  for (let stemId = 0; stemId < stems.length; stemId += 1) {
    postingStart[stemId + 1] = (postingStart[stemId + 1] as number) + (postingStart[stemId] as number);
  }
  const nextPosition = postingStart.slice(0, stems.length);
  const postingDocuments = new Int32Array(entryStems.length);
  const postingTiers = new Uint8Array(entryStems.length);
  entryStems.forEach((stemId, entry) => {
    const position = nextPosition[stemId] as number;
    nextPosition[stemId] = position + 1;
    postingDocuments[position] = entryDocuments[entry] as number;
    postingTiers[position] = entryTiers[entry] as number;
  });

  const sortedWords = [...words].sort();
  const stemIdOfSortedWord = Int32Array.from(sortedWords, (word) => stemIdOfWord[wordIds.get(word) as number] as number);

  const typoCandidates = new Map<string, number>(); // spelling → its stem id
  words.forEach((word, wordId) => {
    if (!wordSeenOutsideDescription[wordId] || word.length < MIN_TYPO_WORD_LENGTH - 1 || !LETTERS_ONLY.test(word)) return;
    const stemId = stemIdOfWord[wordId] as number;
    typoCandidates.set(word, stemId);
    typoCandidates.set(stems[stemId] as string, stemId);
  });
  const spellingsByDeletion = new Map<string, Spelling[]>();
  for (const [form, stemId] of typoCandidates) {
    if (form.length < MIN_TYPO_WORD_LENGTH - 1) continue;
    const spelling = { form, stemId };
    for (const variant of new Set([form, ...oneLetterDeletions(form)])) {
      const known = spellingsByDeletion.get(variant);
      if (known === undefined) spellingsByDeletion.set(variant, [spelling]);
      else known.push(spelling);
    }
  }

  return {
    documentCount: documents.length,
    stemIds,
    postingStart,
    postingDocuments,
    postingTiers,
    sortedWords,
    stemIdOfSortedWord,
    spellingsByDeletion,
    mergedPrefixPostings: new Map(),
  };
}

function oneLetterDeletions(word: string): string[] {
  const deletions: string[] = [];
  for (let position = 0; position < word.length; position += 1) {
    deletions.push(word.slice(0, position) + word.slice(position + 1));
  }
  return deletions;
}

/**
 * The words of a query that must all match. Grammar words ("of", "for") are dropped unless they are
 * the last word, which the shopper may still be typing ("for" → "fortified").
 */
export function queryWords(query: string): string[] {
  const words = foldedWords(query).slice(0, MAX_QUERY_WORDS);
  return words.filter((word, position) => position === words.length - 1 || !isStopword(word));
}

/** Binary search: the first position in `sorted` whose value is not less than `value`. */
export function firstPositionNotBefore(sorted: string[], value: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as string) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Receives a run of postings: documents[start..end) with their tiers, all matched the same way. */
type PostingsVisitor = (documents: Int32Array, tiers: Uint8Array, start: number, end: number, kind: MatchKind) => void;

function visitStem(index: TermIndex, stemId: number, kind: MatchKind, visit: PostingsVisitor): void {
  visit(index.postingDocuments, index.postingTiers, index.postingStart[stemId] as number, index.postingStart[stemId + 1] as number, kind);
}

/**
 * Calls `visit` with the postings of each indexed stem a query word stands for and how it matched.
 * A typo is only assumed when the word (and, for the last word, any completion of it) is unknown:
 * a shopper typing "lime" wants lime, not "line".
 */
function forEachMatchingPostings(index: TermIndex, word: string, isLastWord: boolean, visit: PostingsVisitor): void {
  const wordStem = stem(word);
  const exactStemId = index.stemIds.get(wordStem);
  if (exactStemId !== undefined) visitStem(index, exactStemId, MatchKind.exact, visit);

  let completionCount = 0;
  if (isLastWord) {
    const { sortedWords, stemIdOfSortedWord } = index;
    const first = firstPositionNotBefore(sortedWords, word);
    const end = firstPositionNotBefore(sortedWords, `${word}\uffff`);
    completionCount = end - first;
    const merged = mergedPostingsIfLarge(index, word, first, end);
    if (merged !== undefined) {
      visit(merged.documents, merged.tiers, 0, merged.documents.length, MatchKind.prefix);
    } else {
      // A stem met twice ("capsule", "capsules") is scored twice to the same result: cheaper than a Set.
      for (let position = first; position < end; position += 1) {
        const stemId = stemIdOfSortedWord[position] as number;
        if (stemId !== exactStemId) visitStem(index, stemId, MatchKind.prefix, visit);
      }
    }
  }

  if (exactStemId !== undefined || completionCount > 0) return;
  for (const stemId of typoStemIds(index, word, wordStem)) visitStem(index, stemId, MatchKind.typo, visit);
}

/** The indexed stems one typo away from an unknown word of four or more letters (none for shorter words). */
function typoStemIds(index: TermIndex, word: string, wordStem: string): number[] {
  if (word.length < MIN_TYPO_WORD_LENGTH || !LETTERS_ONLY.test(word)) return [];
  const found: number[] = [];
  // Word and stem both: "kdis" is one swap from "kids", "capsuls" one letter from the stem "capsule".
  for (const typed of new Set([word, wordStem])) {
    for (const variant of [typed, ...oneLetterDeletions(typed)]) {
      for (const candidate of index.spellingsByDeletion.get(variant) ?? []) {
        if (found.includes(candidate.stemId) || !isOneEditApart(typed, candidate.form)) continue;
        found.push(candidate.stemId);
      }
    }
  }
  return found;
}

/** How one query word meets single indexed words, as scoring matches it: to compare it with a title word by word. */
export interface WordMatcher {
  /** The stems the word stands for whole: its own, or when the word (and any completion) is unknown, those one typo away. */
  stemIds: readonly number[];
  /** The last word also matches every word it begins: those at positions [prefixStart, prefixEnd) of sortedWords. */
  prefixStart: number;
  prefixEnd: number;
}

export function wordMatchers(index: TermIndex, words: readonly string[]): WordMatcher[] {
  return words.map((word, position) => {
    const wordStem = stem(word);
    const exactStemId = index.stemIds.get(wordStem);
    let prefixStart = 0;
    let prefixEnd = 0;
    if (position === words.length - 1) {
      prefixStart = firstPositionNotBefore(index.sortedWords, word);
      prefixEnd = firstPositionNotBefore(index.sortedWords, `${word}\uffff`);
    }
    const stemIds = exactStemId !== undefined ? [exactStemId] : prefixEnd > prefixStart ? [] : typoStemIds(index, word, wordStem);
    return { stemIds, prefixStart, prefixEnd };
  });
}

/**
 * For a short prefix whose completions hold more postings than there are documents ("c", "s", or "sku"
 * when every SKU starts so), those postings merged into one entry per document, kept for later queries.
 * Otherwise undefined: visiting the completions one by one is cheap enough.
 */
function mergedPostingsIfLarge(index: TermIndex, prefix: string, first: number, end: number): MergedPostings | undefined {
  const known = index.mergedPrefixPostings.get(prefix);
  if (known !== undefined) return known;
  const { postingStart, postingDocuments, postingTiers, stemIdOfSortedWord } = index;
  let postingCount = 0;
  for (let position = first; position < end; position += 1) {
    const stemId = stemIdOfSortedWord[position] as number;
    postingCount += (postingStart[stemId + 1] as number) - (postingStart[stemId] as number);
  }
  if (postingCount <= Math.max(index.documentCount, MIN_POSTINGS_TO_MERGE)) return undefined;

  const tierPlusOne = new Uint8Array(index.documentCount); // 0: not seen yet
  const documents: number[] = [];
  for (let position = first; position < end; position += 1) {
    const stemId = stemIdOfSortedWord[position] as number;
    const stop = postingStart[stemId + 1] as number;
    for (let posting = postingStart[stemId] as number; posting < stop; posting += 1) {
      const document = postingDocuments[posting] as number;
      const tier = (postingTiers[posting] as number) + 1;
      if (tierPlusOne[document] === 0) documents.push(document);
      if (tier > (tierPlusOne[document] as number)) tierPlusOne[document] = tier;
    }
  }
  const merged = {
    documents: Int32Array.from(documents),
    tiers: Uint8Array.from(documents, (document) => (tierPlusOne[document] as number) - 1),
  };
  if (index.mergedPrefixPostings.size < MAX_MERGED_PREFIXES) index.mergedPrefixPostings.set(prefix, merged);
  return merged;
}

export interface ScoredDocuments {
  documents: number[];
  /** Total score of each document in `documents`, same position. */
  scores: number[];
}

/**
 * Documents matching every query word, each scored by the sum over query words of its best match.
 * Dense per-document arrays keep the work proportional to the postings touched, not to the catalog.
 */
export function scoreDocuments(index: TermIndex, words: string[]): ScoredDocuments {
  const none: ScoredDocuments = { documents: [], scores: [] };
  if (words.length === 0) return none;
  const wordsMatched = new Uint8Array(index.documentCount);
  const totalScore = new Uint16Array(index.documentCount);
  const bestForWord = new Uint8Array(index.documentCount);
  let matchedAllSoFar: number[] = [];

  for (let wordPosition = 0; wordPosition < words.length; wordPosition += 1) {
    const matchedThisWord: number[] = [];
    const scorePostings: PostingsVisitor = (documents, tiers, start, end, kind) => {
      for (let posting = start; posting < end; posting += 1) {
        const document = documents[posting] as number;
        if (wordsMatched[document] !== wordPosition) continue; // missed an earlier word
        const tier = tiers[posting] as FieldTier;
        if (kind === MatchKind.typo && tier === FieldTier.description) continue;
        const score = wordScore(tier, kind);
        if (bestForWord[document] === 0) matchedThisWord.push(document);
        if (score > (bestForWord[document] as number)) bestForWord[document] = score;
      }
    };
    forEachMatchingPostings(index, words[wordPosition] as string, wordPosition === words.length - 1, scorePostings);
    if (matchedThisWord.length === 0) return none;
    for (const document of matchedThisWord) {
      totalScore[document] = (totalScore[document] as number) + (bestForWord[document] as number);
      wordsMatched[document] = wordPosition + 1;
      bestForWord[document] = 0;
    }
    matchedAllSoFar = matchedThisWord;
  }
  return { documents: matchedAllSoFar, scores: matchedAllSoFar.map((document) => totalScore[document] as number) };
}

/**
 * Positions of the `limit` highest keys, highest first; equal keys keep the earlier position.
 * A bounded insertion: most keys fail the first comparison, so a large match set costs one pass.
 */
export function positionsOfHighestKeys(keys: ArrayLike<number>, limit: number): number[] {
  const best: number[] = [];
  const wanted = Math.floor(limit);
  if (!(wanted >= 1)) return best; // also NaN
  for (let position = 0; position < keys.length; position += 1) {
    const key = keys[position] as number;
    if (best.length === wanted && key <= (keys[best[wanted - 1] as number] as number)) continue;
    let slot = best.length < wanted ? best.length : wanted - 1;
    while (slot > 0 && key > (keys[best[slot - 1] as number] as number)) {
      best[slot] = best[slot - 1] as number;
      slot -= 1;
    }
    best[slot] = position;
  }
  return best;
}
