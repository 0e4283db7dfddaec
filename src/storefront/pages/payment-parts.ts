/**
 * The payment's words (src/payments/payment-words.ts) as the buyer's pages show them: one paragraph, the label first
 * when there is one; the merchant's instructions, when they have several lines (bank details), on lines of their own
 * between the words that lead to them and the payment reference.
 */
import { oneLineWords, type PaymentWords } from '../../payments/payment-words.js';
import { html, type Html } from '../../markup/html.js';

export function paymentParagraphs(words: PaymentWords, options: { label?: string; className: string }): Html {
  const label = options.label ? html`<strong>${options.label}:</strong> ` : '';
  if (words.instructions === undefined || !words.instructions.includes('\n')) {
    return html`<p class="${options.className}">${label}${oneLineWords(words)}</p>`;
  }
  const lines = words.instructions.split('\n').map((line) => line.trim());
  return html`<div class="${options.className}">
<p>${label}${words.text}</p>
<p class="instructions">${lines.map((line, index) => html`${index > 0 ? html`<br>` : ''}${line}`)}</p>
${words.after ? html`<p>${words.after}</p>` : ''}
</div>`;
}
