/** A page that only says something: an unknown link, a form that could not be verified, a declined order. */
import { html, type Html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';

/** A reason as a sentence: capital first letter, closing stop (the domain writes some reasons for its log). */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return trimmed;
  const capitalised = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

/** `path`: the page's own path (its canonical URL), when it has one of its own. */
export function messagePage(context: PageContext, page: { title: string; paragraphs: readonly string[]; tone?: 'notice' | 'problem'; extra?: Html; path?: string }): string {
  const [first, ...rest] = page.paragraphs;
  const body = html`<h1>${page.title}</h1>
${first === undefined ? '' : html`<p class="${page.tone ?? 'notice'}">${first}</p>`}
${rest.map((paragraph) => html`<p>${paragraph}</p>`)}
${page.extra ?? ''}`;
  return layout(context, { title: page.title, body, path: page.path, personal: true });
}

/** The 404 page for a link that names nothing (or is not a link this store makes). */
export function notFoundPage(context: PageContext, what: string): string {
  return messagePage(context, {
    title: 'Page not found',
    tone: 'problem',
    paragraphs: [`${what} Check that the whole link was copied. If an agent gave it to you, ask it for a new one.`],
  });
}
