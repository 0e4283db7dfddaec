/**
 * The mail carrying an approval code: the code, what it approves (the total and how many items), how long it works,
 * and what to do if the buyer did not ask for it, signed by the store. No link: the code is typed on the page the
 * buyer already has open, so a forwarded or scanned mail approves nothing by itself.
 */
import { formatMoney } from '../catalog/types.js';
import type { CodeMail } from '../checkout/buyer-proof.js';
import type { MailMessage } from '../outbox/outbox.js';
import { html } from '../markup/html.js';
import { oneLine, signatureHtml, signatureText, type MerchantIdentity } from './mail-parts.js';

export function approvalCodeMail(mail: CodeMail, store: MerchantIdentity): MailMessage {
  const storeName = oneLine(store.storeName);
  const minutes = Math.max(1, Math.round((mail.expiresAt.getTime() - Date.now()) / 60_000));
  const what = `your order of ${mail.items} ${mail.items === 1 ? 'item' : 'items'} for ${formatMoney(mail.total)}`;
  const lines = [
    `Your code to approve ${what} at ${storeName} is:`,
    '',
    mail.code,
    '',
    `Type it on the approval page within ${minutes} minutes. Do not share it: whoever has it can place this order.`,
    'If you did not ask for this code, ignore this mail: no order is placed without it.',
    ...signatureText(store),
  ];
  return {
    to: mail.to,
    subject: `${mail.code} is your code to approve your order at ${storeName}`,
    text: `${lines.join('\n')}\n`,
    html: html`<p>Your code to approve ${what} at ${storeName} is:</p>
<p style="font-size:1.5rem;font-weight:700;letter-spacing:.2em">${mail.code}</p>
<p>Type it on the approval page within ${minutes} minutes. Do not share it: whoever has it can place this order.</p>
<p>If you did not ask for this code, ignore this mail: no order is placed without it.</p>
${signatureHtml(store)}`.text,
  };
}
