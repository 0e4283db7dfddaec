/**
 * Deliveries: the outbox as the merchant reads it. Messages that wait (their kind, topic, order, attempts and when
 * the next is due), messages given up (with the last error, shortened and inert), and a Retry button on each: the
 * same delivery `storefront outbox retry ID` asks for, written to the audit log. Never a message's body or its
 * recipient: the kind and the order say what it is (the order's page shows its buyer).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../audit/audit-log.js';
import { html, typed, type Html } from '../markup/html.js';
import { retryWhenDue, type DeliveryOutcome } from '../outbox/outbox-dispatcher.js';
import { redactedError, undeliveredCounts, undeliveredIn, undeliveredMessage, type UndeliveredMessage } from '../outbox/outbox-overview.js';
import { actorOf, allowed, notice, postForm, seeOther, sendPage, staffOf, SECTIONS, type AdminContext, doneOf } from './admin-kit.js';
import { orderPath, scrollingTable } from './admin-page-parts.js';

const DELIVERIES = SECTIONS.deliveries.path;
/** How many of each list the page shows (the oldest problems stay visible: pending are due first, failed latest first). */
const LISTED = 100;
/** How long a retry asked of the running stores (this process does not deliver) waits for its outcome. */
const RETRY_WAIT_MS = 5000;
const KIND_LABELS: Record<string, string> = { mail: 'Mail', webhook: 'Order event to the agent platform', legacy: 'Message of an older version' };

/** What ?done= says after a retry (a fixed sentence per code: nothing from the query is echoed). */
const DONE: Record<string, { kind: 'done' | 'refused'; text: string }> = {
  delivered: { kind: 'done', text: 'The message was delivered.' },
  retrying: { kind: 'refused', text: 'The message was tried again and not delivered: it stays in the list below, with the error.' },
  'given-up': { kind: 'refused', text: 'The message was tried again and not delivered; it is given up again, with the error below.' },
  queued: { kind: 'done', text: 'The message is due now: the running store delivers it in a moment.' },
};

interface Refusal {
  id: number;
  text: string;
}

function messageLabel(message: UndeliveredMessage): Html {
  return html`${KIND_LABELS[message.kind] ?? message.kind}<br><span class="muted">${message.topic} · #${message.id}</span>`;
}

function orderCell(message: UndeliveredMessage): Html {
  if (message.orderNumber === null) return html`<span class="muted">none</span>`;
  return html`<a href="${orderPath(message.orderNumber)}">Order #${message.orderNumber}</a>`;
}

/** The kinds a store delivers: a message of an older version's kind has no sender, so no Retry. */
const DELIVERABLE = new Set(['mail', 'webhook']);

function retryAction(request: FastifyRequest, message: UndeliveredMessage, refusal: Refusal | undefined): Html {
  if (!DELIVERABLE.has(message.kind)) return html`<span class="muted">No store delivers this kind of message.</span>`;
  const label = `Retry message ${message.id}${message.orderNumber === null ? '' : ` of order #${message.orderNumber}`}`;
  return html`${postForm(staffOf(request), `${DELIVERIES}/${message.id}/retry`, html``, 'Retry', { label })}${
    refusal?.id === message.id ? notice('refused', refusal.text) : ''
  }`;
}

function lastErrorCell(message: UndeliveredMessage): Html {
  const error = redactedError(message.lastError);
  return error ? html`<span class="error-text">${typed(error)}</span>` : html`<span class="muted">none yet</span>`;
}

async function deliveriesPage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, status = 200, refusal?: Refusal): Promise<FastifyReply> {
  const { db } = ctx.store;
  const [counts, failed, pending] = await Promise.all([undeliveredCounts(db), undeliveredIn(db, 'failed', LISTED), undeliveredIn(db, 'pending', LISTED)]);
  const { moments } = ctx;
  const done = doneOf(request, DONE);
  const more = (shown: number, all: number) => (all > shown ? html`<p class="muted">The ${shown} shown of ${all}.</p>` : '');

  const failedTable = failed.length
    ? scrollingTable(
        'failed-caption',
        html`Given up: ${counts.failed}`,
        html`<tr><th scope="col">Message</th><th scope="col">Order</th><th scope="col" class="n">Attempts</th><th scope="col">Given up</th><th scope="col">Last error</th><th scope="col">Action</th></tr>`,
        failed.map(
          (message) => html`<tr><td>${messageLabel(message)}</td><td>${orderCell(message)}</td><td class="n">${message.attempts}</td><td>${moments.moment(message.failedAt!)}</td><td>${lastErrorCell(message)}</td><td>${retryAction(request, message, refusal)}</td></tr>`,
        ),
      )
    : html`<p>No message was given up.</p>`;
  const pendingTable = pending.length
    ? scrollingTable(
        'pending-caption',
        html`Waiting: ${counts.pending}`,
        html`<tr><th scope="col">Message</th><th scope="col">Order</th><th scope="col" class="n">Attempts</th><th scope="col">Next attempt</th><th scope="col">Last error</th><th scope="col">Action</th></tr>`,
        pending.map(
          (message) => html`<tr><td>${messageLabel(message)}</td><td>${orderCell(message)}</td><td class="n">${message.attempts}</td><td>${moments.moment(message.nextAttemptAt!)}</td><td>${lastErrorCell(message)}</td><td>${retryAction(request, message, refusal)}</td></tr>`,
        ),
      )
    : html`<p>No message waits.</p>`;

  return sendPage(reply, ctx, request.staff, {
    title: 'Deliveries',
    section: 'deliveries',
    status,
    body: html`<h1>Deliveries</h1>
${done ? notice(done.kind, done.text) : ''}
${refusal && !failed.concat(pending).some((message) => message.id === refusal.id) ? notice('refused', refusal.text) : ''}
<p>Mail and order events the store has not delivered yet: <strong>${counts.pending}</strong> waiting, <strong>${counts.failed}</strong> given up. Retry delivers one now (a given-up one gets another attempt). Times in ${moments.timeZone}.</p>
<h2 id="failed">Given up</h2>
${failedTable}${more(failed.length, counts.failed)}
<h2 id="pending">Waiting</h2>
${pendingTable}${more(pending.length, counts.pending)}`,
  });
}

/** Where a retry's outcome sends the merchant (303), by how it went. */
function doneCode(outcome: DeliveryOutcome | { waiting: true }): string {
  if ('waiting' in outcome) return 'queued';
  if (outcome.delivered) return 'delivered';
  return outcome.givenUp ? 'given-up' : 'retrying';
}

function outcomeSummary(message: UndeliveredMessage, outcome: DeliveryOutcome | { waiting: true }): string {
  const what = `${message.kind} ${message.topic} (message ${message.id})`;
  if ('waiting' in outcome) return `retried ${what}: made due for the running store`;
  if (outcome.delivered) return `retried ${what}: delivered`;
  return `retried ${what}: not delivered${outcome.givenUp ? ', given up' : ''}`;
}

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;

  admin.get(DELIVERIES, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'deliveries')) return reply;
    return deliveriesPage(request, reply, ctx);
  });

  admin.post<{ Params: { id: string } }>(`${DELIVERIES}/:id/retry`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'deliveries')) return reply;
    const id = /^[0-9]{1,15}$/.test(request.params.id) ? Number(request.params.id) : 0;
    const message = await undeliveredMessage(store.db, id);
    if (!message) return deliveriesPage(request, reply, ctx, 404, { id, text: 'There is no such message waiting for delivery: it may have been delivered meanwhile.' });
    // As `storefront outbox retry ID`: this store delivers it itself when it delivers at all; else the running stores do.
    const outcome = store.outbox ? await store.outbox.retryNow(id) : await retryWhenDue(store.db, id, RETRY_WAIT_MS);
    if (!outcome) return deliveriesPage(request, reply, ctx, 404, { id, text: 'There is no such message waiting for delivery: it may have been delivered meanwhile.' });
    if ('refused' in outcome) return deliveriesPage(request, reply, ctx, 409, { id, text: `Not retried: ${outcome.refused}.` });
    await recordAudit(store.db, actorOf(request), {
      action: 'outbox.retry',
      ...(message.orderId === null ? {} : { orderId: message.orderId }),
      summary: outcomeSummary(message, outcome),
    });
    return seeOther(reply, `${DELIVERIES}?done=${doneCode(outcome)}`);
  });
}
