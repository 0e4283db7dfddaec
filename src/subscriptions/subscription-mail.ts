/**
 * The buyer's subscription mails: set up, a renewal to approve, its reminder, a skipped delivery, a change made, the
 * link they asked for. Each says what happens next and carries a link (to approve, or to their subscriptions page).
 * What a buyer or the catalog wrote (titles, names) is one line in the text part and escaped in the HTML part.
 */
import { formatMoney, intervalWords } from '../catalog/types.js';
import { html, type Html } from '../markup/html.js';
import { momentsIn } from '../markup/moments.js';
import { link, oneLine, paragraph, signatureHtml, signatureText, type MerchantIdentity } from '../mail/mail-parts.js';
import type { MailMessage } from '../outbox/outbox.js';
import { subscriptionTitle, type Subscription } from './subscriptions.js';

export interface SubscriptionMailShop extends MerchantIdentity {
  timeZone: string;
}

/** A paragraph: words, or a link on a line of its own. */
type Part = string | { link: string };

function compose(to: string, subject: string, parts: readonly Part[], shop: SubscriptionMailShop): MailMessage {
  const text = parts.map((part) => (typeof part === 'string' ? part : part.link)).join('\n\n');
  const body: Html[] = parts.map((part) => paragraph(typeof part === 'string' ? part : link(part.link)));
  return {
    to,
    subject: oneLine(`${shop.storeName}: ${subject}`),
    text: `${text}\n${signatureText(shop).join('\n')}\n`,
    html: html`${body}${signatureHtml(shop)}`.text,
  };
}

const what = (subscription: Subscription) => oneLine(subscriptionTitle(subscription));
const every = (subscription: Subscription) => intervalWords(subscription.plan.intervalUnit, subscription.plan.intervalCount);
const day = (shop: SubscriptionMailShop, at: Date) => momentsIn(shop.timeZone).day(at);

const PROMISE = 'Nothing is charged without you: each delivery waits for your approval, with your passkey or a code we mail you.';

export function startedMail(subscription: Subscription, manageUrl: string, shop: SubscriptionMailShop): MailMessage {
  return compose(
    subscription.buyerEmail,
    `your subscription (${every(subscription)})`,
    [
      `Your subscription is set up: ${what(subscription)}, ${every(subscription)}, saving ${subscription.plan.discountPercent}% on every delivery (${oneLine(subscription.plan.name)}).`,
      `The next delivery is on ${day(shop, subscription.nextAt)}. A few days before, we mail you a link to approve it at that day's price. ${PROMISE}`,
      'Skip a delivery, change it, pause or cancel any time on your subscriptions page:',
      { link: manageUrl },
    ],
    shop,
  );
}

export interface RenewalMailFacts {
  renewalUrl: string;
  manageUrl: string;
  dueAt: Date;
  skipAt: Date;
  /** What the delivery costs now (items less the plan's saving, before shipping and tax). */
  subtotal: number;
}

export function renewalMail(subscription: Subscription, facts: RenewalMailFacts, shop: SubscriptionMailShop, reminder: boolean): MailMessage {
  const when = day(shop, facts.dueAt);
  return compose(
    subscription.buyerEmail,
    reminder ? `reminder: approve your delivery of ${when}` : `approve your delivery of ${when}`,
    [
      reminder
        ? `Your delivery of ${when} (${what(subscription)}) is still waiting for your approval.`
        : `Your next delivery (${what(subscription)}) is on ${when}: ${formatMoney(facts.subtotal)} for the items at today's price less your ${subscription.plan.discountPercent}% saving, before shipping and tax.`,
      'Review and approve it here (one tap with your passkey):',
      { link: facts.renewalUrl },
      `Not approved by ${momentsIn(shop.timeZone).moment(facts.skipAt)}, this delivery is skipped; your subscription stays active. ${PROMISE}`,
      'Skip it, change it, pause or cancel your subscription:',
      { link: facts.manageUrl },
    ],
    shop,
  );
}

export function skippedMail(subscription: Subscription, dueAt: Date, reason: string, manageUrl: string, shop: SubscriptionMailShop): MailMessage {
  const next = subscription.state === 'active' ? ` Your subscription stays active: the next delivery is on ${day(shop, subscription.nextAt)}.` : '';
  return compose(
    subscription.buyerEmail,
    `your delivery of ${day(shop, dueAt)} was skipped`,
    [`Your delivery of ${day(shop, dueAt)} (${what(subscription)}) was skipped: ${reason} Nothing was ordered or charged.${next}`, 'Your subscriptions:', { link: manageUrl }],
    shop,
  );
}

/** A change confirmed: `done` says what changed, in a sentence. */
export function changedMail(subscription: Subscription, done: string, manageUrl: string, shop: SubscriptionMailShop): MailMessage {
  const next =
    subscription.state === 'active'
      ? `The next delivery is on ${day(shop, subscription.nextAt)}, waiting for your approval as always.`
      : subscription.state === 'paused'
        ? 'Nothing is delivered while it is paused; resume it any time.'
        : 'No more deliveries will come, and nothing more will be asked of you.';
  return compose(
    subscription.buyerEmail,
    `your subscription changed`,
    [`${done} (${what(subscription)}, ${every(subscription)}).`, next, 'If you did not make this change, write to us. Your subscriptions:', { link: manageUrl }],
    shop,
  );
}

export function manageLinkMail(email: string, manageUrl: string, code: string, shop: SubscriptionMailShop): MailMessage {
  return compose(
    email,
    `${code} is your code for your subscriptions`,
    [
      'Here is the link to your subscriptions, as asked. It works for 30 days:',
      { link: manageUrl },
      `Or type this code on the page that asked for it, within 15 minutes: ${code}`,
      'If you did not ask for it, ignore this mail.',
    ],
    shop,
  );
}
