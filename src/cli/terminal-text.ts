/**
 * What the CLI prints is inert on a terminal: a character that could steer it (C0 and C1 controls, DEL, which start
 * escape sequences that clear the screen or set the clipboard), reorder the text around it (bidirectional overrides
 * and isolates) or hide (line separators, every other invisible format character) is printed as its escape, such as
 * `\u001b` or `\u202e`. Text stored before the fields refused such characters (and any given on the command line)
 * is printed this way too. The escapes are JSON's, so JSON text printed through here stays valid and reads the same.
 */
import { VISIBLE_FORMAT_RUN } from '../fields/text.js';

/** A stream a command writes its text to: the process's stdout or stderr, or a test's capture. */
export interface TextStream {
  write(text: string): unknown;
}

/**
 * What is escaped, after what is kept: the runs of format characters that are visible text, as the fields that accept
 * them say (src/fields/text.ts); every other control, format, separator or lone surrogate is not.
 */
const STEERING = new RegExp(`(${VISIBLE_FORMAT_RUN.source})|[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}]`, 'gu');

const escaped = (text: string) => Array.from({ length: text.length }, (_, index) => `\\u${text.charCodeAt(index).toString(16).padStart(4, '0')}`).join('');

/** `text` with every character that could steer a terminal escaped, a line break too: a value shown on one line. */
export function inertLine(text: string): string {
  return text.replace(STEERING, (match, visible: string | undefined) => visible ?? escaped(match));
}

/** `text` escaped as inertLine does, but for its line breaks: the CLI's own text of several lines. */
export function inertLines(text: string): string {
  return text.replace(STEERING, (match, visible: string | undefined) => visible ?? (match === '\n' ? match : escaped(match)));
}

/**
 * Every string in a command's answer (plain JSON: rows read from the database, what the merchant gave) as inertLine
 * makes it, before the answer is laid out in columns: a stored line break cannot start a line of the CLI's own, and a
 * column is as wide as what it prints. Keys too: a cart's attributes are named by the buyer.
 */
export function inertStrings<T>(value: T): T {
  if (typeof value === 'string') return inertLine(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => inertStrings(item)) as T;
  if (value !== null && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [inertLine(key), inertStrings(item)])) as T;
  }
  return value;
}

/** Prints the CLI's own text (its line breaks kept) and a line break, with everything else in it inert. */
export function printLines(stream: TextStream, text: string): void {
  stream.write(`${inertLines(text)}\n`);
}
