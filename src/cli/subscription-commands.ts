/**
 * `storefront subscriptions`: the merchant's side of subscribe & save. List (by state, by buyer), show one (its lines,
 * the plan's terms and whether the catalog still offers them, where it ships, the next delivery priced now, its
 * renewals and their orders, what happened to it), cancel one (audited as the terminal; the buyer is mailed), and run
 * what the scheduler runs (produce the renewals due, remind, skip) as of now or a date given. The same
 * SubscriptionService as the admin's Subscriptions pages. Like the other merchant commands they run on the database, or
 * through a running store's control socket; what they answer is plain JSON (dates as ISO strings).
 */
import { TERMINAL_ACTOR } from '../audit/audit-log.js';
import { formatMoney, planWords } from '../catalog/types.js';
import { formatAddress } from '../checkout/shipping.js';
import type { Database } from '../db/database.js';
import { parseMailbox } from '../fields/mailbox.js';
import type { Moments } from '../markup/moments.js';
import { SubscriptionNotFound, SubscriptionRefused, type SubscriptionDetails, type SubscriptionService } from '../subscriptions/subscription-service.js';
import { SUBSCRIPTION_STATES, subscriptionTitle, type Subscription, type SubscriptionState } from '../subscriptions/subscriptions.js';
import { readOptions } from './command-options.js';
import { sendControlCommand } from './control-socket.js';
import { CommandError } from './merchant-commands.js';

/** How many subscriptions `storefront subscriptions` lists (the newest). */
export const SUBSCRIPTION_LIST_LIMIT = 50;

/** A value as JSON carries it: dates as ISO strings, the same whether the command ran here or in the running store. */
export type AsJson<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? AsJson<Item>[]
    : T extends object
      ? { [K in keyof T]: AsJson<T[K]> }
      : T;

const asJson = <T>(value: T): AsJson<T> => JSON.parse(JSON.stringify(value)) as AsJson<T>;

/** One row of `storefront subscriptions`. */
export interface SubscriptionListing {
  id: number;
  state: SubscriptionState;
  buyerEmail: string;
  /** Its lines in a line: "2 × Espresso Capsules - Classic / 10 capsules". */
  title: string;
  /** The plan's name, interval and saving. */
  plan: string;
  nextAt: string;
}

export type SubscriptionShown = AsJson<SubscriptionDetails>;

export interface SubscriptionFilter {
  state?: SubscriptionState;
  email?: string;
}

export interface SubscriptionCommands {
  /** The newest first, at most SUBSCRIPTION_LIST_LIMIT. */
  subscriptions(filter: SubscriptionFilter): Promise<SubscriptionListing[]>;
  /** One subscription with its renewals, events and next delivery priced now; null when there is none. */
  subscription(id: number): Promise<SubscriptionShown | null>;
  /** Cancels it as the terminal (the buyer is mailed); refused (CommandError) when it cannot be, nothing changed. */
  cancelSubscription(id: number, reason?: string): Promise<SubscriptionShown>;
  /** What the scheduler does, as of `asOf` (ISO) or now: renewals produced, reminded, skipped. */
  runSubscriptions(asOf?: string): Promise<{ produced: number; reminded: number; skipped: number; failed?: number }>;
}

/** A refusal of the subscriptions domain is the merchant's one line (nothing changed). */
async function refusalsAsCommandErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof SubscriptionRefused || error instanceof SubscriptionNotFound) throw new CommandError(error.message);
    throw error;
  }
}

/** Runs a command with the store's subscription service (a running store's own; the CLI's, opened for the command). */
export type WithSubscriptionService = <T>(run: (subscriptions: SubscriptionService) => Promise<T>) => Promise<T>;

export function subscriptionCommands(db: Database, withService: WithSubscriptionService): SubscriptionCommands {
  const shown = async (subscriptions: SubscriptionService, id: number) => {
    const details = await subscriptions.get(db, id);
    return details ? asJson(details) : null;
  };
  return {
    subscriptions: (filter) =>
      withService(async (subscriptions) => {
        const rows = await subscriptions.list(db, {
          ...(filter.state ? { state: filter.state } : {}),
          // The email as the checkout keeps it (its domain in lower case).
          ...(filter.email ? { email: parseMailbox(filter.email) ?? filter.email.trim() } : {}),
          limit: SUBSCRIPTION_LIST_LIMIT,
        });
        return rows.map(subscriptionListing);
      }),
    subscription: (id) => withService((subscriptions) => shown(subscriptions, id)),
    cancelSubscription: (id, reason) =>
      withService((subscriptions) =>
        refusalsAsCommandErrors(async () => {
          await subscriptions.cancel(db, id, { actor: 'merchant', audit: TERMINAL_ACTOR }, reason);
          return (await shown(subscriptions, id))!;
        }),
      ),
    runSubscriptions: (asOf) =>
      withService(async (subscriptions) => {
        const { produced, reminded, skipped, failed } = await subscriptions.run(db, asOf === undefined ? undefined : new Date(asOf));
        return { produced, reminded, skipped, failed };
      }),
  };
}

export function subscriptionListing(subscription: Subscription): SubscriptionListing {
  return {
    id: subscription.id,
    state: subscription.state,
    buyerEmail: subscription.buyerEmail,
    title: subscriptionTitle(subscription),
    plan: planWords(subscription.plan),
    nextAt: subscription.nextAt.toISOString(),
  };
}

/** The same commands in the running store that holds the embedded database. */
export function remoteSubscriptionCommands(socketPath: string): SubscriptionCommands {
  return {
    subscriptions: (filter) => sendControlCommand<SubscriptionListing[]>(socketPath, 'POST', '/subscriptions', filter),
    subscription: (id) => sendControlCommand<SubscriptionShown | null>(socketPath, 'GET', `/subscriptions/${id}`),
    cancelSubscription: (id, reason) => sendControlCommand<SubscriptionShown>(socketPath, 'POST', '/subscriptions/cancel', { id, reason }),
    runSubscriptions: (asOf) => sendControlCommand<{ produced: number; reminded: number; skipped: number; failed?: number }>(socketPath, 'POST', '/subscriptions/run', { asOf }),
  };
}

/** The control socket's subscription routes; undefined for any other. */
export async function subscriptionRoute(
  commands: SubscriptionCommands,
  method: string,
  url: string,
  input: Record<string, unknown>,
): Promise<{ status: number; body: unknown } | undefined> {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  if (method === 'POST' && url === '/subscriptions') {
    const state = text(input.state);
    return {
      status: 200,
      body: await commands.subscriptions({
        ...(state && (SUBSCRIPTION_STATES as readonly string[]).includes(state) ? { state: state as SubscriptionState } : {}),
        ...(text(input.email) ? { email: text(input.email)! } : {}),
      }),
    };
  }
  if (method === 'POST' && url === '/subscriptions/cancel') return { status: 200, body: await commands.cancelSubscription(Number(input.id), text(input.reason)) };
  if (method === 'POST' && url === '/subscriptions/run') return { status: 200, body: await commands.runSubscriptions(text(input.asOf)) };
  const shown = /^\/subscriptions\/(\d{1,15})$/.exec(url);
  if (method === 'GET' && shown) return { status: 200, body: await commands.subscription(Number(shown[1])) };
  return undefined;
}

export const SUBSCRIPTIONS_USAGE =
  'usage: storefront subscriptions [--state active|paused|canceled] [--email EMAIL], storefront subscriptions show ID, ' +
  'storefront subscriptions cancel ID [--reason TEXT], or storefront subscriptions run [--as-of DATE]';

const RUN_USAGE = 'usage: storefront subscriptions run [--as-of DATE] (DATE such as 2027-01-15, the start of that day in STORE_TIMEZONE, or a time with its zone, 2027-01-15T09:00:00Z)';

/** The zone's offset from UTC at `at`, in milliseconds (east positive). */
function zoneOffset(at: number, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(at))
      .map((part) => [part.type, Number(part.value)]),
  );
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) - Math.floor(at / 1000) * 1000;
}

/**
 * `--as-of`: a calendar date (YYYY-MM-DD), meaning the start of that day in the store's zone, or a time with its zone
 * (2027-01-15T09:00:00Z, …+01:00). Anything else (a day that does not exist, a time without its zone) is undefined.
 */
export function parseAsOf(text: string, timeZone: string): Date | undefined {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (day) {
    const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const utcMidnight = Date.UTC(year, month - 1, date);
    const check = new Date(utcMidnight);
    if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== date) return undefined;
    // Midnight there: UTC midnight less the zone's offset (read again at the instant found, across a change of offset).
    const guess = utcMidnight - zoneOffset(utcMidnight, timeZone);
    return new Date(utcMidnight - zoneOffset(guess, timeZone));
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return undefined;
  // Date() rolls 2027-02-30 over into March: the date written must be the date read (in the offset written).
  const offset = text.endsWith('Z') ? 0 : (text.at(-6) === '-' ? -1 : 1) * (Number(text.slice(-5, -3)) * 60 + Number(text.slice(-2))) * 60_000;
  return new Date(at.getTime() + offset).toISOString().slice(0, 10) === text.slice(0, 10) ? at : undefined;
}

/** A subscription's id as the merchant types it: digits (or #12). */
function subscriptionId(text: string | undefined, usageError: (message: string) => Error, usage: string): number {
  const digits = text?.replace(/^#/, '');
  if (!digits || !/^[1-9][0-9]{0,14}$/.test(digits)) throw usageError(usage);
  return Number(digits);
}

/** `storefront subscriptions …`: what the merchant asked, read from the arguments; the answer as lines. */
export async function subscriptionsCommand(
  args: readonly string[],
  withCommands: <T>(run: (commands: SubscriptionCommands) => Promise<T>) => Promise<T>,
  usageError: (message: string) => Error,
  moments: Moments,
): Promise<string> {
  const [action, ...rest] = args;
  if (action === undefined || action.startsWith('--')) {
    const { positional, values } = readOptions(args, ['state', 'email'], usageError);
    if (positional.length > 0) throw usageError(`unknown subscriptions command "${positional[0]!.slice(0, 40)}"`);
    const state = values.get('state');
    if (state !== undefined && !(SUBSCRIPTION_STATES as readonly string[]).includes(state)) throw usageError('--state is active, paused or canceled');
    const email = values.get('email');
    if (email !== undefined && !email.includes('@')) throw usageError('--email takes a buyer\'s email address');
    const filter: SubscriptionFilter = { ...(state ? { state: state as SubscriptionState } : {}), ...(email ? { email } : {}) };
    return describeSubscriptions(await withCommands((commands) => commands.subscriptions(filter)), moments, filter);
  }
  switch (action) {
    case 'show': {
      const usage = 'usage: storefront subscriptions show ID';
      const { positional } = readOptions(rest, [], usageError);
      if (positional.length !== 1) throw usageError(usage);
      const id = subscriptionId(positional[0], usageError, usage);
      const found = await withCommands((commands) => commands.subscription(id));
      if (!found) throw new CommandError(`no subscription has the id ${id}`);
      return describeSubscription(found, moments);
    }
    case 'cancel': {
      const usage = 'usage: storefront subscriptions cancel ID [--reason TEXT]';
      const { positional, values } = readOptions(rest, ['reason'], usageError);
      if (positional.length !== 1) throw usageError(usage);
      const id = subscriptionId(positional[0], usageError, usage);
      const canceled = await withCommands((commands) => commands.cancelSubscription(id, values.get('reason')));
      return [`subscription ${id} canceled: no renewal will be produced; the buyer is mailed`, '', describeSubscription(canceled, moments)].join('\n');
    }
    case 'run': {
      const { positional, values } = readOptions(rest, ['as-of'], usageError);
      if (positional.length > 0) throw usageError(RUN_USAGE);
      const text = values.get('as-of');
      const asOf = text === undefined ? undefined : parseAsOf(text, moments.timeZone);
      if (text !== undefined && asOf === undefined) throw usageError(`--as-of takes a date such as 2027-01-15 or a time with its zone such as 2027-01-15T09:00:00Z, got "${text.slice(0, 40)}"`);
      const report = await withCommands((commands) => commands.runSubscriptions(asOf?.toISOString()));
      return describeRun(report, asOf, moments);
    }
    default:
      throw usageError(`unknown subscriptions command "${action.slice(0, 40)}"`);
  }
}

/** A time in the store's zone, short enough for a column: "2026-12-29 17:00 UTC". */
export function shortMoment(iso: string, moments: Moments): string {
  const at = new Date(iso);
  return `${moments.dayKey(at)} ${moments.time(at)}`;
}

/** Lines of cells as columns two spaces apart; `right` names the columns aligned right (numbers, money). */
function columns(table: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  const cell = (text: string, column: number, last: boolean) => (right.has(column) ? text.padStart(widths[column]!) : last ? text : text.padEnd(widths[column]!));
  return table.map((line) => line.map((text, column) => cell(text, column, column === line.length - 1)).join('  ').trimEnd());
}

export function describeSubscriptions(rows: readonly SubscriptionListing[], moments: Moments, filter: SubscriptionFilter = {}): string {
  if (rows.length === 0) return filter.state || filter.email ? 'no subscription matches' : 'no subscriptions yet';
  const table = [
    ['ID', 'STATE', 'BUYER EMAIL', 'WHAT', 'PLAN', `NEXT DELIVERY (${moments.timeZone})`],
    ...rows.map((row) => [String(row.id), row.state, row.buyerEmail, row.title, row.plan, row.state === 'active' ? shortMoment(row.nextAt, moments) : `- (${row.state})`]),
  ];
  const lines = columns(table);
  if (rows.length >= SUBSCRIPTION_LIST_LIMIT) lines.push(`(the ${SUBSCRIPTION_LIST_LIMIT} newest; --state and --email narrow the list; storefront subscriptions show ID for any)`);
  return lines.join('\n');
}

const fullName = (person: { firstName?: string | undefined; lastName?: string | undefined }) => [person.firstName, person.lastName].filter(Boolean).join(' ');

const RENEWAL_WORDS: Record<string, string> = { pending: 'waiting for the buyer', approved: 'approved', skipped: 'skipped', replaced: 'replaced' };

export function describeSubscription(details: SubscriptionShown, moments: Moments): string {
  const { subscription, next, renewals, events, orders } = details;
  const money = (cents: number) => formatMoney(cents);
  const when = (iso: string) => shortMoment(iso, moments);
  const buyerName = fullName(subscription.buyer);
  const orderNumber = (id: string | null) => (id === null ? '-' : `#${orders.find((order) => order.id === id)?.number ?? id}`);
  const origin = orders.find((order) => order.id === subscription.originOrderId);
  const addressLines = formatAddress(subscription.shippingAddress);
  const facts = columns([
    ['Subscription', String(subscription.id)],
    ['State', subscription.state === 'canceled' && subscription.canceledAt ? `canceled ${when(subscription.canceledAt)}${subscription.cancelReason ? `: ${subscription.cancelReason}` : ''}` : subscription.state],
    ['Buyer', buyerName ? `${subscription.buyerEmail} (${buyerName})` : subscription.buyerEmail],
    ['Plan', `${planWords(subscription.plan)}, of ${subscription.plan.groupName}`],
    ['', details.planOffered ? 'still offered by the catalog' : 'no longer offered by the catalog: the subscription keeps the terms it was bought on'],
    ...addressLines.map((line, index) => [index === 0 ? 'Ship to' : '', line]),
    ['Shipping option', subscription.shippingOption],
    ['Started', `${when(subscription.createdAt)}, order ${origin ? `#${origin.number}` : subscription.originOrderId}`],
    ['Times', moments.timeZone],
  ]);
  const nextLines =
    subscription.state === 'canceled'
      ? ['No next delivery: canceled.']
      : [
          `Next delivery ${when(next.dueAt)}${subscription.state === 'paused' ? ' (paused: none is produced until it is resumed)' : ''}, priced now:`,
          ...columns(
            [
              ['QTY', 'ITEM', 'UNIT PRICE', 'ONE-TIME PRICE', 'LINE TOTAL', ''],
              ...next.lines.map((line) => [
                String(line.quantity),
                line.title,
                money(line.unitPrice),
                money(line.fullUnitPrice),
                money(line.lineTotal),
                line.available ? '' : 'not available now (sold out or no longer sold)',
              ]),
            ],
            new Set([0, 2, 3, 4]),
          ).map((line) => `  ${line}`),
          `  Subtotal ${money(next.subtotal)} (before shipping and tax)`,
        ];
  const renewalLines = renewals.length
    ? columns([
        ['DELIVERY', 'STATE', 'ORDER', 'MAILED', 'REMINDED', 'WHY'],
        ...renewals.map((renewal) => [
          when(renewal.dueAt),
          RENEWAL_WORDS[renewal.state] ?? renewal.state,
          orderNumber(renewal.orderId),
          when(renewal.producedAt),
          renewal.remindedAt ? when(renewal.remindedAt) : '-',
          renewal.closeReason ?? '',
        ]),
      ])
    : ['(none yet)'];
  const orderLines = orders.length ? columns([['ORDER', 'PLACED', 'TOTAL'], ...orders.map((order) => [`#${order.number}`, when(order.createdAt), money(order.total)])], new Set([2])) : ['(none)'];
  const eventLines = events.length ? columns([['TIME', 'BY', 'WHAT', 'DETAIL'], ...events.map((event) => [when(event.at), event.actor, event.kind, event.detail])]) : ['(none)'];
  return [
    ...facts,
    '',
    ...columns([['QTY', 'ITEM'], ...subscription.lines.map((line) => [String(line.quantity), line.title])], new Set([0])).map((line) => `  ${line}`),
    '',
    ...nextLines,
    '',
    'Renewals, newest first:',
    ...renewalLines.map((line) => `  ${line}`),
    '',
    'Orders:',
    ...orderLines.map((line) => `  ${line}`),
    '',
    'What happened, newest first:',
    ...eventLines.map((line) => `  ${line}`),
  ].join('\n');
}

export function describeRun(report: { produced: number; reminded: number; skipped: number; failed?: number }, asOf: Date | undefined, moments: Moments): string {
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return [
    `as of ${asOf ? moments.moment(asOf) : 'now'}:`,
    `  ${count(report.produced, 'renewal', 'renewals')} produced (the buyer mailed a link to approve it)`,
    `  ${count(report.reminded, 'renewal', 'renewals')} reminded`,
    `  ${count(report.skipped, 'renewal', 'renewals')} skipped (not approved in time; the subscription goes on)`,
    ...(report.failed ? [`  ${count(report.failed, 'subscription', 'subscriptions')} could not be renewed (see the lines above; tried again at the next run)`] : []),
  ].join('\n');
}
