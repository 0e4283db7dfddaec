/** Reading an HTML page in tests as a person reads it. */
import assert from 'node:assert/strict';

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** The text of a page or part of one: styles and tags dropped (an isolating <bdi> without a space), entities read, spaces collapsed. */
export function pageText(markup: string): string {
  return markup
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<\/?bdi>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!)
    .replace(/\s+/g, ' ');
}

/** The markup from the element carrying `marker` (an id or aria-label) up to the next `closing`. */
export function around(body: string, marker: string, closing: string): string {
  const at = body.indexOf(marker);
  assert.ok(at !== -1, `${marker} on the page`);
  const end = body.indexOf(closing, at);
  return body.slice(at, end === -1 ? undefined : end + closing.length);
}
