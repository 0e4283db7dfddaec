/**
 * How catalog text and shopper queries become comparable words: accents and case folded away,
 * HTML stripped from descriptions, and English plurals reduced to one stem.
 */

/** Letters that Unicode decomposition leaves alone but a shopper types with plain ASCII. */
const LETTERS_WITHOUT_DECOMPOSITION: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  þ: 'th',
  ı: 'i',
};

const COMBINING_MARKS = /\p{M}+/gu;
const LETTERS_TO_REPLACE = /[ßæœøđðłþı]/g;
const NON_ASCII = /[^\x00-\x7f]/;
const APOSTROPHES = /['’ʼ`]/g;
const WORD_CHARACTERS = /[\p{L}\p{N}]+/gu;
/** Words joined by punctuation but no space, such as "lemon-lime" or "DS-EL-LL-12", or a plain word. */
const JOINED_WORDS = /[\p{L}\p{N}]+(?:[^\s\p{L}\p{N}]+[\p{L}\p{N}]+)*/gu;
const NON_WORD_CHARACTERS = /[^\p{L}\p{N}]+/u;

/** Lower case without accents: "Café Crème" → "cafe creme". */
export function foldText(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase(); // most catalog text: skip the Unicode work
  return text
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(LETTERS_TO_REPLACE, (letter) => LETTERS_WITHOUT_DECOMPOSITION[letter] ?? letter);
}

/** The folded words of a text; apostrophes join ("women's" → "womens") so no stray "s" word appears. */
export function foldedWords(text: string): string[] {
  return foldText(text).replace(APOSTROPHES, '').match(WORD_CHARACTERS) ?? [];
}

/**
 * Calls `visit` with each folded word of a text and, for every run written without spaces but with
 * punctuation ("lemon-lime", "DS-EL-LL-12"), the run joined into one word, so "lemonlime" and
 * "dselll12" also match. A visitor, not an array: indexing a catalog spends most of its time here.
 */
export function forEachIndexedWord(text: string, visit: (word: string) => void): void {
  const folded = foldText(text).replace(APOSTROPHES, '');
  if (NON_ASCII.test(folded)) forEachUnicodeIndexedWord(folded, visit);
  else forEachAsciiIndexedWord(folded, visit);
}

function forEachUnicodeIndexedWord(folded: string, visit: (word: string) => void): void {
  for (const run of folded.match(JOINED_WORDS) ?? []) {
    if (!NON_WORD_CHARACTERS.test(run)) {
      visit(run);
      continue;
    }
    const parts = run.split(NON_WORD_CHARACTERS);
    parts.forEach((part) => visit(part));
    visit(parts.join(''));
  }
}

/** The same for ASCII text by a character scan, several times faster than the Unicode regular expression. */
function forEachAsciiIndexedWord(folded: string, visit: (word: string) => void): void {
  let wordStart = -1;
  let runStart = -1;
  let runParts = 0;
  for (let position = 0; position <= folded.length; position += 1) {
    const code = position < folded.length ? folded.charCodeAt(position) : 32;
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) {
      if (wordStart < 0) wordStart = position;
      if (runStart < 0) runStart = position;
      continue;
    }
    if (wordStart >= 0) {
      visit(folded.slice(wordStart, position));
      runParts += 1;
      wordStart = -1;
    }
    if (code === 32 || (code >= 9 && code <= 13)) {
      if (runParts > 1) visit(folded.slice(runStart, position).replace(/[^a-z0-9]+/g, ''));
      runStart = -1;
      runParts = 0;
    }
  }
}

/** The words `forEachIndexedWord` visits, as an array. */
export function indexedWords(text: string): string[] {
  const words: string[] = [];
  forEachIndexedWord(text, (word) => words.push(word));
  return words;
}

const ENDINGS_THAT_ARE_NOT_PLURAL = ['ss', 'us', 'is'];

/**
 * A light English stemmer that only merges singular and plural: "sticks" and "stick" → "stick",
 * "capsules" → "capsule", "boxes" → "box", "berries" and "berry" → "berri", "cookies" and "cookie" → "cooki"
 * (a final y or ie becomes i, as Porter does, because "-ies" plurals come from both).
 * Words with digits (SKUs, sizes) and words of three letters or fewer are left as they are.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let singular = word;
  if (word.endsWith('ies') && word.length > 4) singular = word.slice(0, -2);
  else if (word.endsWith('sses') || /(?:x|ch|sh|zz)es$/.test(word)) singular = word.slice(0, -2);
  else if (word.endsWith('s') && !ENDINGS_THAT_ARE_NOT_PLURAL.some((ending) => word.endsWith(ending))) {
    singular = word.slice(0, -1);
  }
  if (singular.length <= 3) return singular;
  if (singular.endsWith('ie')) return singular.slice(0, -1);
  if (singular.endsWith('y')) return `${singular.slice(0, -1)}i`;
  return singular;
}

/** Words a shopper adds for grammar only; skipped in a query unless they are the word being typed. */
const STOPWORDS = new Set(['a', 'an', 'and', 'the', 'of', 'for', 'with', 'in', 'on', 'to', 'or', 'by', 'at']);

export function isStopword(foldedWord: string): boolean {
  return STOPWORDS.has(foldedWord);
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  middot: '·',
  bull: '•',
  deg: '°',
  trade: '™',
  reg: '®',
  copy: '©',
  times: '×',
  frac12: '½',
  eacute: 'é',
  egrave: 'è',
  ecirc: 'ê',
  euml: 'ë',
  aacute: 'á',
  agrave: 'à',
  acirc: 'â',
  auml: 'ä',
  iacute: 'í',
  icirc: 'î',
  iuml: 'ï',
  oacute: 'ó',
  ocirc: 'ô',
  ouml: 'ö',
  uacute: 'ú',
  ugrave: 'ù',
  ucirc: 'û',
  uuml: 'ü',
  ccedil: 'ç',
  ntilde: 'ñ',
  szlig: 'ß',
};

function decodeEntity(entity: string, body: string): string {
  if (body.startsWith('#x') || body.startsWith('#X')) return codePointOrSpace(Number.parseInt(body.slice(2), 16));
  if (body.startsWith('#')) return codePointOrSpace(Number.parseInt(body.slice(1), 10));
  return NAMED_ENTITIES[body.toLowerCase()] ?? entity;
}

function codePointOrSpace(codePoint: number): string {
  return Number.isInteger(codePoint) && codePoint > 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : ' ';
}

const INLINE_TAG = /<\/?(?:a|abbr|b|bdi|bdo|cite|code|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|var)\b[^>]*>/gi;

/** The words a shopper reads in description HTML: no tags, scripts or styles; entities decoded. */
export function htmlToText(html: string): string {
  let text = html;
  if (/<(?:script|style)\b/i.test(text)) text = text.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ');
  if (text.includes('<!--')) text = text.replace(/<!--[\s\S]*?-->/g, ' ');
  if (text.includes('<')) {
    // Inline tags join what they wrap to the text around it ("<b>pour</b>," reads "pour,"); any other tag
    // separates words ("<p>one</p><p>two</p>" is two words).
    text = text.replace(INLINE_TAG, '').replace(/<[^>]*>/g, ' ');
  }
  if (text.includes('&')) text = text.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);/g, decodeEntity);
  return text;
}

/** True when `a` becomes `b` by exactly one insertion, deletion, substitution or swap of neighbouring letters. */
export function isOneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  if (a.length === b.length) {
    const restAfterSubstitution = a.slice(start + 1) === b.slice(start + 1);
    const swapped =
      a[start] === b[start + 1] && a[start + 1] === b[start] && a.slice(start + 2) === b.slice(start + 2);
    return restAfterSubstitution || swapped;
  }
  const [longer, shorter] = a.length > b.length ? [a, b] : [b, a];
  return longer.slice(start + 1) === shorter.slice(start);
}
