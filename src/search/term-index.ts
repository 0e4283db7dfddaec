/**
 * An inverted index over documents with weighted fields, shared by product and collection search.
 * Words are matched by stem (so plurals meet), the word being typed also by prefix, and an unknown
 * word of four or more letters by one typo.
 */
import { LRUCache } from 'lru-cache';
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
  mergedPrefixPostings: LRUCache<string, MergedPostings>;
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
/** From this many completions a prefix is merged whatever their postings: one run, not one per completion. */
const MIN_COMPLETIONS_TO_MERGE = 256;
/**
 * Bounds the memory kept for merged prefixes (5 bytes a document), the least recently used let go first: a catalog
 * of 300,000 has hundreds of number prefixes to merge, and a prefix let go is merged again when next asked.
 */
const MAX_MERGED_PREFIX_BYTES = 32 * 1024 * 1024;

const mergedPostingsBytes = (merged: MergedPostings) => Math.max(1, merged.documents.length * 5);
const mergedPrefixCache = () => new LRUCache<string, MergedPostings>({ maxSize: MAX_MERGED_PREFIX_BYTES, sizeCalculation: mergedPostingsBytes });

/** Numbers appended one by one into a typed array that doubles as it fills (a JS array costs 8 bytes a number). */
export class NumberList<T extends Int32Array | Uint8Array> {
  length = 0;

  constructor(
    private values: T,
    private readonly make: (size: number) => T,
  ) {}

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = this.make(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  at(position: number): number {
    return this.values[position] as number;
  }

  set(position: number, value: number): void {
    this.values[position] = value;
  }

  /** The numbers pushed, without a copy (the list is not used after). */
  done(): T {
    return this.values.subarray(0, this.length) as T;
  }
}

export const int32List = () => new NumberList(new Int32Array(1024), (size) => new Int32Array(size));
const uint8List = () => new NumberList(new Uint8Array(1024), (size) => new Uint8Array(size));

/**
 * Builds a TermIndex one document at a time, so that a large catalog can be indexed in slices between requests.
 * Words and stems get integer ids so the per-word work is one Map lookup and a few array writes.
 */
export class TermIndexBuilder {
  private readonly wordIds = new Map<string, number>();
  private readonly words: string[] = [];
  private readonly stemIdOfWord = int32List();
  private readonly wordSeenOutsideDescription = uint8List();
  private readonly stemIds = new Map<string, number>();
  private readonly stems: string[] = [];
  private readonly lastDocumentOfStem = int32List();
  private readonly bestTierOfStem = uint8List();
  // One (stem, document, tier) entry per stem per document, in document order.
  private readonly entryStems = int32List();
  private readonly entryDocuments = int32List();
  private readonly entryTiers = uint8List();
  private readonly wordIdsOfRecurringText = new Map<string, number[]>();
  private documentCount = 0;
  private tier: FieldTier = FieldTier.description;
  private readonly addText = (word: string): void => this.addWord(this.wordIdOf(word));
  /** After finish: each word's position in the index's sortedWords, by word id. */
  private rankOfWordId = new Int32Array(0);

  /** Indexes the next document (its position is the number of documents added before it). */
  add(fields: readonly DocumentField[]): void {
    const firstEntry = this.entryStems.length;
    for (const field of fields) {
      this.tier = field.tier;
      if (!field.recurring) {
        forEachIndexedWord(field.text, this.addText);
        continue;
      }
      let ids = this.wordIdsOfRecurringText.get(field.text);
      if (ids === undefined) {
        ids = indexedWords(field.text).map((word) => this.wordIdOf(word));
        this.wordIdsOfRecurringText.set(field.text, ids);
      }
      for (const wordId of ids) this.addWord(wordId);
    }
    for (let entry = firstEntry; entry < this.entryStems.length; entry += 1) {
      this.entryDocuments.push(this.documentCount);
      this.entryTiers.push(this.bestTierOfStem.at(this.entryStems.at(entry)));
    }
    this.documentCount += 1;
  }

  /** The id of a word already indexed, or -1. */
  wordId(word: string): number {
    return this.wordIds.get(word) ?? -1;
  }

  /** After finish: where the word of an id sits in the index's sortedWords (-1 for the id -1). */
  rankOf(wordId: number): number {
    return wordId < 0 ? -1 : (this.rankOfWordId[wordId] as number);
  }

  /** The stem id of a word's id (-1 for the id -1). */
  stemIdOf(wordId: number): number {
    return wordId < 0 ? -1 : this.stemIdOfWord.at(wordId);
  }

  private wordIdOf(word: string): number {
    let wordId = this.wordIds.get(word);
    if (wordId !== undefined) return wordId;
    wordId = this.words.length;
    this.wordIds.set(word, wordId);
    this.words.push(word);
    this.wordSeenOutsideDescription.push(0);
    const wordStem = stem(word);
    let stemId = this.stemIds.get(wordStem);
    if (stemId === undefined) {
      stemId = this.stems.length;
      this.stemIds.set(wordStem, stemId);
      this.stems.push(wordStem);
      this.lastDocumentOfStem.push(-1);
      this.bestTierOfStem.push(0);
    }
    this.stemIdOfWord.push(stemId);
    return wordId;
  }

  private addWord(wordId: number): void {
    // Typos are forgiven only where a shopper sees the word, as Shopify does: not in descriptions.
    if (this.tier > FieldTier.description) this.wordSeenOutsideDescription.set(wordId, 1);
    const stemId = this.stemIdOfWord.at(wordId);
    if (this.lastDocumentOfStem.at(stemId) !== this.documentCount) {
      this.lastDocumentOfStem.set(stemId, this.documentCount);
      this.bestTierOfStem.set(stemId, this.tier);
      this.entryStems.push(stemId);
    } else if (this.tier > this.bestTierOfStem.at(stemId)) {
      this.bestTierOfStem.set(stemId, this.tier);
    }
  }

  /** The index of every document added; no document is added after. */
  finish(): TermIndex {
    const { stems, words, wordIds } = this;
    const entryStems = this.entryStems.done();
    const entryDocuments = this.entryDocuments.done();
    const entryTiers = this.entryTiers.done();
    const stemIdOfWord = this.stemIdOfWord.done();
    // Group the entries by stem (a counting sort keeps each stem's documents ascending).
    const { start: postingStart, order: entryOrder } = groupByKey(entryStems, stems.length);
    const postingDocuments = new Int32Array(entryStems.length);
    const postingTiers = new Uint8Array(entryStems.length);
    for (let position = 0; position < entryOrder.length; position += 1) {
      const entry = entryOrder[position] as number;
      postingDocuments[position] = entryDocuments[entry] as number;
      postingTiers[position] = entryTiers[entry] as number;
    }

    const sortedWords = [...words].sort();
    this.rankOfWordId = new Int32Array(words.length);
    const stemIdOfSortedWord = Int32Array.from(sortedWords, (word, rank) => {
      const wordId = wordIds.get(word) as number;
      this.rankOfWordId[wordId] = rank;
      return stemIdOfWord[wordId] as number;
    });

    const seenOutsideDescription = this.wordSeenOutsideDescription.done();
    const typoCandidates = new Map<string, number>(); // spelling → its stem id
    words.forEach((word, wordId) => {
      if (!seenOutsideDescription[wordId] || word.length < MIN_TYPO_WORD_LENGTH - 1 || !LETTERS_ONLY.test(word)) return;
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
      documentCount: this.documentCount,
      stemIds: this.stemIds,
      postingStart,
      postingDocuments,
      postingTiers,
      sortedWords,
      stemIdOfSortedWord,
      spellingsByDeletion,
      mergedPrefixPostings: mergedPrefixCache(),
    };
  }
}

export function buildTermIndex(documents: readonly DocumentField[][]): TermIndex {
  const builder = new TermIndexBuilder();
  for (const fields of documents) builder.add(fields);
  return builder.finish();
}

/**
 * A counting sort of the positions of `keys` (integers from 0 to keyCount - 1) by key: the positions with key k are
 * order[start[k] .. start[k + 1]), ascending.
 */
export function groupByKey(keys: Int32Array | Uint16Array, keyCount: number): { start: Int32Array; order: Int32Array } {
  const start = new Int32Array(keyCount + 1);
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as number;
    start[key + 1] = (start[key + 1] as number) + 1;
  }
  for (let key = 0; key < keyCount; key += 1) start[key + 1] = (start[key + 1] as number) + (start[key] as number);
  const next = start.slice(0, keyCount);
  const order = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as number;
    const position = next[key] as number;
    next[key] = position + 1;
    order[position] = i;
  }
  return { start, order };
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
 * when every SKU starts so), or that has very many completions ("5" of the numbers 5 to 59999 in titles and SKUs),
 * those postings merged into one entry per document, kept for later queries.
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
  if (end - first < MIN_COMPLETIONS_TO_MERGE && postingCount <= Math.max(index.documentCount, MIN_POSTINGS_TO_MERGE)) return undefined;

  const tierPlusOne = new Uint8Array(index.documentCount); // 0: not seen
  let distinct = 0;
  for (let position = first; position < end; position += 1) {
    const stemId = stemIdOfSortedWord[position] as number;
    const stop = postingStart[stemId + 1] as number;
    for (let posting = postingStart[stemId] as number; posting < stop; posting += 1) {
      const document = postingDocuments[posting] as number;
      const tier = (postingTiers[posting] as number) + 1;
      const seen = tierPlusOne[document] as number;
      if (seen === 0) distinct += 1;
      if (tier > seen) tierPlusOne[document] = tier;
    }
  }
  // Ascending, as every stem's postings are: a query word met later can look documents up in them.
  const merged = { documents: new Int32Array(distinct), tiers: new Uint8Array(distinct) };
  let next = 0;
  for (let document = 0; document < tierPlusOne.length; document += 1) {
    const tier = tierPlusOne[document] as number;
    if (tier === 0) continue;
    merged.documents[next] = document;
    merged.tiers[next] = tier - 1;
    next += 1;
  }
  index.mergedPrefixPostings.set(prefix, merged);
  return merged;
}

export interface ScoredDocuments {
  /** The matching documents, in no particular order. */
  documents: Int32Array;
  /** Total score of each document in `documents`, same position. */
  scores: Uint16Array;
}

/** A run of one word's postings: documents[start..end) (ascending) with their tiers, all matched the same way. */
interface PostingRun {
  documents: Int32Array;
  tiers: Uint8Array;
  start: number;
  end: number;
  kind: MatchKind;
}

function postingRunsOf(index: TermIndex, word: string, isLastWord: boolean): { runs: PostingRun[]; postings: number } {
  const runs: PostingRun[] = [];
  let postings = 0;
  forEachMatchingPostings(index, word, isLastWord, (documents, tiers, start, end, kind) => {
    runs.push({ documents, tiers, start, end, kind });
    postings += end - start;
  });
  return { runs, postings };
}

/** The position of `document` in documents[start..end) (ascending), or -1. */
function positionOf(documents: Int32Array, start: number, end: number, document: number): number {
  let low = start;
  let high = end;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((documents[middle] as number) < document) low = middle + 1;
    else high = middle;
  }
  return low < end && documents[low] === document ? low : -1;
}

/**
 * Per-document working arrays of an index, kept between queries and left zeroed by each (but `matched`, whose
 * first entries a query overwrites). Typed and sized for the whole catalog: a short prefix in a large catalog
 * matches tens of thousands of documents, and growing JS arrays that long cost more than the scoring.
 */
interface Scratch {
  wordsMatched: Uint8Array;
  totalScore: Uint16Array;
  bestForWord: Uint8Array;
  /** The documents matched by the word being scored, in the order met. */
  matched: Int32Array;
}

const scratchOfIndex = new WeakMap<TermIndex, Scratch>();

function scratchOf(index: TermIndex): Scratch {
  let scratch = scratchOfIndex.get(index);
  if (scratch === undefined) {
    const size = index.documentCount;
    scratch = {
      wordsMatched: new Uint8Array(size),
      totalScore: new Uint16Array(size),
      bestForWord: new Uint8Array(size),
      matched: new Int32Array(size),
    };
    scratchOfIndex.set(index, scratch);
  }
  return scratch;
}

const NONE: ScoredDocuments = { documents: new Int32Array(0), scores: new Uint16Array(0) };

/**
 * Documents matching every query word, each scored by the sum over query words of its best match.
 * The word with the fewest postings is read first, and its documents are the candidates: a later word's long run
 * of postings ("no" of "No. 12" in every title of a large catalog) is searched for the candidates instead of read
 * whole. Dense per-document arrays keep the rest of the work proportional to the postings touched.
 */
export function scoreDocuments(index: TermIndex, words: string[]): ScoredDocuments {
  if (words.length === 0) return NONE;
  const wordRuns = words.map((word, position) => postingRunsOf(index, word, position === words.length - 1));
  const order = wordRuns.map((_, position) => position).sort((a, b) => (wordRuns[a]!.postings) - (wordRuns[b]!.postings));
  const { wordsMatched, totalScore, bestForWord, matched } = scratchOf(index);
  // The documents that matched every word so far (a copy of `matched`, which the next word overwrites).
  let candidates = new Int32Array(0);
  // Only the first word's documents are ever marked: clearing them leaves the arrays zeroed for the next query.
  let marked = new Int32Array(0);
  try {
    for (let wordsDone = 0; wordsDone < order.length; wordsDone += 1) {
      let matchedCount = 0;
      for (const { documents, tiers, start, end, kind } of wordRuns[order[wordsDone] as number]!.runs) {
        const searchCandidates = wordsDone > 0 && candidates.length * Math.log2(end - start + 1) < end - start;
        const stop = searchCandidates ? candidates.length : end;
        for (let step = searchCandidates ? 0 : start; step < stop; step += 1) {
          let document: number;
          let posting: number;
          if (searchCandidates) {
            document = candidates[step] as number;
            posting = positionOf(documents, start, end, document);
            if (posting < 0) continue;
          } else {
            posting = step;
            document = documents[posting] as number;
            if (wordsMatched[document] !== wordsDone) continue; // missed an earlier word
          }
          const tier = tiers[posting] as FieldTier;
          if (kind === MatchKind.typo && tier === FieldTier.description) continue;
          const wordScoreHere = wordScore(tier, kind);
          const best = bestForWord[document] as number;
          if (best === 0) matched[matchedCount++] = document;
          if (wordScoreHere > best) bestForWord[document] = wordScoreHere;
        }
      }
      if (matchedCount === 0) return NONE;
      const matchedThisWord = matched.slice(0, matchedCount);
      if (wordsDone === 0) marked = matchedThisWord;
      for (let i = 0; i < matchedCount; i += 1) {
        const document = matchedThisWord[i] as number;
        totalScore[document] = (totalScore[document] as number) + (bestForWord[document] as number);
        wordsMatched[document] = wordsDone + 1;
        bestForWord[document] = 0;
      }
      candidates = matchedThisWord;
    }
    // Plain loops, here and in the ranking: a typed array's from() and map() with a callback cost several times more.
    const scores = new Uint16Array(candidates.length);
    for (let i = 0; i < candidates.length; i += 1) scores[i] = totalScore[candidates[i] as number] as number;
    return { documents: candidates, scores };
  } finally {
    for (let i = 0; i < marked.length; i += 1) {
      const document = marked[i] as number;
      wordsMatched[document] = 0;
      totalScore[document] = 0;
    }
  }
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
