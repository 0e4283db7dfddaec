/**
 * The mail inviting a new staff member to create their passkey: who added them, to which store, the link and until
 * when it works. Everything a person typed (the adder's email, the store's name) goes on one line, escaped in HTML.
 */
import type { MailMessage } from '../outbox/outbox.js';
import { html } from '../markup/html.js';
import { momentsIn } from '../markup/moments.js';
import { oneLine, signatureHtml, signatureText, type MerchantIdentity } from '../mail/mail-parts.js';
import type { StaffRole } from './staff.js';

export interface EnrollmentMail {
  to: string;
  role: StaffRole;
  link: string;
  expiresAt: Date;
  /** Who added them: a staff member's email, or 'terminal'. */
  addedBy: string;
  timeZone: string;
}

export function enrollmentMail(mail: EnrollmentMail, store: MerchantIdentity): MailMessage {
  const storeName = oneLine(store.storeName);
  const until = momentsIn(mail.timeZone).moment(mail.expiresAt);
  const by = mail.addedBy === 'terminal' ? 'The store owner' : oneLine(mail.addedBy);
  const what = mail.role === 'owner' ? 'an owner' : 'staff';
  const lines = [
    `${by} added you as ${what} of ${storeName}'s admin.`,
    '',
    `Open this link before ${until} to create your passkey (it works once):`,
    mail.link,
    '',
    'You sign in with the passkey: there is no password. If you did not expect this mail, ignore it.',
    ...signatureText(store),
  ];
  return {
    to: mail.to,
    subject: `${storeName}: create your passkey for the admin`,
    text: `${lines.join('\n')}\n`,
    html: html`<p>${by} added you as ${what} of ${storeName}'s admin.</p>
<p>Open this link before ${until} to create your passkey (it works once):</p>
<p><a href="${mail.link}">${mail.link}</a></p>
<p>You sign in with the passkey: there is no password. If you did not expect this mail, ignore it.</p>
${signatureHtml(store)}`.text,
  };
}
