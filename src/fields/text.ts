/**
 * What a person-facing text field may hold, checked once where the text enters the store (either door, the
 * merchant's config and commands). Refused, never cleaned or cut: what the buyer typed is what is stored, and
 * nothing stored can move a terminal's cursor or reorder the text a page shows around it. No I/O.
 */

/** A field's limits: its length in UTF-16 units (as a form's maxlength counts), and whether it may hold line breaks. */
export interface TextRule {
  readonly max: number;
  readonly lines: 'single' | 'multi';
}

/** Why a text is refused. */
export type TextFault = 'control' | 'line_break' | 'bidi' | 'invisible' | 'unpaired_surrogate' | 'too_long';

// C0 and C1 controls and DEL; \n, \r\n and \t are let through in a multi-line field below.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const MULTI_LINE_CONTROL = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
// Line and paragraph separators: a line break a terminal or a mail header may honour; multi-line fields use \n.
const SEPARATOR = /[\u2028\u2029]/u;
const NEWLINE = /[\n\r]/u;
// Embeddings, overrides and isolates: they reorder the text around them, so a page shows what is not stored.
const BIDI = /[\u202a-\u202e\u2066-\u2069]/u;
const BIDI_ALL = new RegExp(BIDI.source, 'gu');
const UNPAIRED_SURROGATE = /\p{Cs}/u;
/**
 * Format characters that are part of what is visible: an emoji tag sequence (the flags of England, Scotland, Wales),
 * and ZWJ or ZWNJ between two letters, marks or pictographs (emoji sequences such as 👩‍💻, Indic and Persian
 * spelling). Anywhere else they are hidden characters, as is every other format character (Cf). The CLI keeps
 * the same runs when it escapes what it prints (src/cli/terminal-text.ts).
 */
export const VISIBLE_FORMAT_RUN =
  /\u{1f3f4}[\u{e0030}-\u{e0039}\u{e0061}-\u{e007a}]{1,30}\u{e007f}|(?<=[\p{L}\p{M}\p{N}\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f])[\u200c\u200d](?=[\p{L}\p{M}\p{N}\p{Extended_Pictographic}])/gu;
// Printable ASCII, the text of most fields: nothing in it can be refused but its length.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const FORMAT = /\p{Cf}/u;

/** The first thing wrong with `value` for a field of `rule`, or undefined when it may be stored as it is. */
export function textFault(value: string, rule: TextRule): TextFault | undefined {
  if (PRINTABLE_ASCII.test(value)) return value.length > rule.max ? 'too_long' : undefined;
  if (UNPAIRED_SURROGATE.test(value)) return 'unpaired_surrogate';
  if (rule.lines === 'single') {
    if (NEWLINE.test(value)) return 'line_break';
    if (CONTROL.test(value)) return 'control';
  } else if (MULTI_LINE_CONTROL.test(value)) return 'control';
  if (SEPARATOR.test(value)) return 'line_break';
  if (BIDI.test(value)) return 'bidi';
  if (FORMAT.test(value.replace(VISIBLE_FORMAT_RUN, ''))) return 'invisible';
  if (value.length > rule.max) return 'too_long';
  return undefined;
}

/** The fault as the end of a sentence that starts with the field's name: "… contains a control character". */
export function textFaultSentence(fault: TextFault, rule: TextRule): string {
  switch (fault) {
    case 'control':
      return 'contains a control character';
    case 'line_break':
      return rule.lines === 'single' ? 'must be on one line' : 'contains a line or paragraph separator (use a plain line break)';
    case 'bidi':
      return 'contains a character that reorders text (a bidirectional override or isolate)';
    case 'invisible':
      return 'contains an invisible formatting character';
    case 'unpaired_surrogate':
      return 'contains a broken character (an unpaired surrogate)';
    case 'too_long':
      return `is too long: use at most ${rule.max} characters`;
  }
}

/**
 * Text stored before the rules refused direction controls, as it is stored and read (its logical order): a page shows
 * "teertS kaO 21", what the label will print, rather than the "12 Oak Street" an override would draw.
 */
export function withoutDirectionControls(text: string): string {
  return text.replace(BIDI_ALL, '');
}
