/**
 * HTML from templates: `html\`<p>${value}</p>\`` escapes every interpolated value unless it is already Html (a
 * fragment built the same way), so nothing a buyer, an agent or the catalog wrote can become markup.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
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

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let text = strings[0]!;
  values.forEach((value, index) => {
    text += fragment(value) + strings[index + 1]!;
  });
  return new Html(text);
}
