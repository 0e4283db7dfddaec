/**
 * Parts the deliveries, buyers and staff pages share: a table that scrolls inside its own box on a phone (and can be
 * scrolled from the keyboard), and where an order's admin page is.
 */
import { html, type Html } from '../markup/html.js';
import { SECTIONS } from './admin-kit.js';

/** An order's page in the admin, by its number. */
export function orderPath(orderNumber: number): string {
  return `${SECTIONS.orders.path}/${orderNumber}`;
}

/**
 * A table in a box that scrolls sideways when the screen is narrower than the table (the page itself never does):
 * the box is a named region that takes the keyboard's focus, so it can be scrolled without a mouse.
 */
export function scrollingTable(captionId: string, caption: Html | string, head: Html, rows: readonly Html[]): Html {
  return html`<div class="scroll" role="region" aria-labelledby="${captionId}" tabindex="0"><table>
<caption id="${captionId}">${caption}</caption>
<thead>${head}</thead>
<tbody>${rows}</tbody>
</table></div>`;
}
