/**
 * HTML from templates: `html\`<p>${value}</p>\`` escapes every interpolated value unless it is already Html (a
 * fragment built the same way), so nothing a buyer, an agent or the catalog wrote can become markup. Text a buyer or
 * an agent typed goes in through `typed()`, so its direction characters stay inside it.
 */
import { withoutDirectionControls } from '../fields/text.js';

/** Markup. Built by `html` templates; `new Html()` outside this file, and `unsafeHtml()` outside a few files, fail lint. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/**
 * Text taken as markup as it is, unescaped: only markup this program wrote (a style sheet, JSON-LD) or a sanitizer
 * produced. eslint.config.js lists the files that may call it, each with its reason.
 */
export function unsafeHtml(markup: string): Html {
  return new Html(markup);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** What a template takes: text and numbers (escaped), Html (as it is), lists of them, and nothing (undefined, null, false). */
export type Interpolation = Html | string | number | undefined | null | false | readonly Interpolation[];

function fragment(value: Interpolation): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly Interpolation[]).map(fragment).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * What a buyer or an agent typed (a name, an address line, a note, a reason), escaped and isolated in `<bdi>` so its
 * direction cannot reorder the text around it; a direction control stored before the fields refused them is dropped,
 * so the page shows the text in the order it is stored ("teertS kaO 21", not an override's "12 Oak Street").
 */
export function typed(text: string | number | undefined | null): Html | '' {
  if (text === undefined || text === null || text === '') return '';
  return html`<bdi>${typeof text === 'string' ? withoutDirectionControls(text) : text}</bdi>`;
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let text = strings[0]!;
  values.forEach((value, index) => {
    text += fragment(value) + strings[index + 1]!;
  });
  return new Html(text);
}
