/**
 * `storefront staff`: who may use the admin. List, add (a single-use enrollment link, printed and mailed when mail is
 * configured), revoke (every session of the person ends at once), and single-use sign-in links (for a store whose
 * address holds no passkey). The same StaffService as the admin's staff page; each action is audited as the terminal.
 * Like the other merchant commands they run on the database, or through a running store's control socket.
 */
import { TERMINAL_ACTOR } from '../audit/audit-log.js';
import type { Database } from '../db/database.js';
import { staffEmail, type StaffService } from '../staff/staff-service.js';
import { STAFF_ROLES, StaffRefused, type StaffRole } from '../staff/staff.js';
import { CommandError } from './merchant-commands.js';
import { sendControlCommand } from './control-socket.js';

export interface StaffListing {
  email: string;
  role: StaffRole;
  addedAt: string;
  revokedAt: string | null;
  passkeys: number;
  lastSignInAt: string | null;
}

export interface StaffAdded {
  email: string;
  role: StaffRole;
  link: string;
  expiresAt: string;
  mailed: boolean;
  /** False where BASE_URL is an IP address: sign-in is then by `staff sign-in-link`. */
  passkeysPossible: boolean;
}

export interface StaffCommands {
  staff(): Promise<StaffListing[]>;
  /** Without a role: an owner when the store has no active owner yet (the first person added), else staff. */
  addStaff(email: string, role?: StaffRole): Promise<StaffAdded>;
  revokeStaff(email: string): Promise<{ email: string }>;
  staffSignInLink(email: string): Promise<{ email: string; link: string; expiresAt: string }>;
}

/** A refusal of the staff domain is the merchant's one line (nothing changed). */
async function refusalsAsCommandErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof StaffRefused) throw new CommandError(error.message);
    throw error;
  }
}

export function staffCommands(db: Database, staff: StaffService): StaffCommands {
  return {
    async staff() {
      return (await staff.list(db)).map((member) => ({
        email: member.email,
        role: member.role,
        addedAt: member.addedAt.toISOString(),
        revokedAt: member.revokedAt?.toISOString() ?? null,
        passkeys: member.passkeys,
        lastSignInAt: member.lastSignInAt?.toISOString() ?? null,
      }));
    },
    addStaff: (email, role) =>
      refusalsAsCommandErrors(async () => {
        if (role !== undefined && !STAFF_ROLES.includes(role)) throw new CommandError('--role is owner or staff');
        const members = await staff.list(db);
        const firstOwner = !members.some((member) => member.role === 'owner' && !member.revokedAt);
        const added = await staff.add(db, TERMINAL_ACTOR, email, role ?? (firstOwner ? 'owner' : 'staff'));
        return {
          email: added.member.email,
          role: added.member.role,
          link: added.link,
          expiresAt: added.expiresAt.toISOString(),
          mailed: added.mailed,
          passkeysPossible: staff.passkeysPossible,
        };
      }),
    revokeStaff: (email) => refusalsAsCommandErrors(async () => ({ email: (await staff.revoke(db, TERMINAL_ACTOR, email)).email })),
    staffSignInLink: (email) =>
      refusalsAsCommandErrors(async () => {
        const { link, expiresAt } = await staff.signInLink(db, TERMINAL_ACTOR, email);
        return { email: staffEmail(email), link, expiresAt: expiresAt.toISOString() };
      }),
  };
}

/** The same commands in the running store that holds the embedded database. */
export function remoteStaffCommands(socketPath: string): StaffCommands {
  return {
    staff: () => sendControlCommand<StaffListing[]>(socketPath, 'GET', '/staff'),
    addStaff: (email, role) => sendControlCommand<StaffAdded>(socketPath, 'POST', '/staff/add', { email, role }),
    revokeStaff: (email) => sendControlCommand<{ email: string }>(socketPath, 'POST', '/staff/revoke', { email }),
    staffSignInLink: (email) => sendControlCommand<{ email: string; link: string; expiresAt: string }>(socketPath, 'POST', '/staff/sign-in-link', { email }),
  };
}

/** The control socket's staff routes; undefined for any other. */
export async function staffRoute(commands: StaffCommands, method: string, url: string, input: Record<string, unknown>): Promise<{ status: number; body: unknown } | undefined> {
  const email = String(input.email ?? '');
  if (method === 'GET' && url === '/staff') return { status: 200, body: await commands.staff() };
  if (method === 'POST' && url === '/staff/add') return { status: 200, body: await commands.addStaff(email, typeof input.role === 'string' ? (input.role as StaffRole) : undefined) };
  if (method === 'POST' && url === '/staff/revoke') return { status: 200, body: await commands.revokeStaff(email) };
  if (method === 'POST' && url === '/staff/sign-in-link') return { status: 200, body: await commands.staffSignInLink(email) };
  return undefined;
}

export const STAFF_USAGE = 'usage: storefront staff, storefront staff add EMAIL [--role owner|staff], storefront staff revoke EMAIL, or storefront staff sign-in-link EMAIL';

const utc = (iso: string) => iso.replace(/:\d\d\.\d+Z$/, ' UTC').replace('T', ' ');

/** `storefront staff …`: what the merchant asked, read from the arguments; the answer as lines. */
export async function staffCommand(
  args: readonly string[],
  withCommands: <T>(run: (commands: StaffCommands) => Promise<T>) => Promise<T>,
  usageError: (message: string) => Error,
): Promise<string> {
  const [action, ...rest] = args;
  if (action === undefined) return describeStaff(await withCommands((commands) => commands.staff()));
  let role: StaffRole | undefined;
  const positional: string[] = [];
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index]!;
    if (action === 'add' && (arg === '--role' || arg.startsWith('--role='))) {
      const value = arg === '--role' ? rest[++index] : arg.slice('--role='.length);
      if (value !== 'owner' && value !== 'staff') throw usageError('--role is owner or staff');
      role = value;
    } else if (arg.startsWith('--')) {
      throw usageError(`unknown option ${arg.slice(0, 40)}`);
    } else positional.push(arg);
  }
  const [email, ...extra] = positional;
  if (!['add', 'revoke', 'sign-in-link'].includes(action)) throw usageError(`unknown staff command "${action.slice(0, 40)}"`);
  if (!email || extra.length > 0 || !email.includes('@')) throw usageError(`storefront staff ${action} needs one EMAIL`);
  switch (action) {
    case 'add': {
      const added = await withCommands((commands) => commands.addStaff(email, role));
      return [
        `added ${added.email} as ${added.role}`,
        `enrollment link (works once, until ${utc(added.expiresAt)}): ${added.link}`,
        added.mailed ? `mailed to ${added.email} as well` : 'not mailed (no SMTP_URL): hand the link to them yourself',
        added.passkeysPossible
          ? 'on the link they create a passkey, then sign in with it at /admin/sign-in'
          : 'this store address (an IP address) can hold no passkey: they sign in with a link from `storefront staff sign-in-link EMAIL`',
      ].join('\n');
    }
    case 'revoke': {
      const revoked = await withCommands((commands) => commands.revokeStaff(email));
      return `${revoked.email} revoked: every session ended, passkeys removed`;
    }
    default: {
      const made = await withCommands((commands) => commands.staffSignInLink(email));
      return `sign-in link for ${made.email} (works once, until ${utc(made.expiresAt)}): ${made.link}`;
    }
  }
}

export function describeStaff(rows: readonly StaffListing[]): string {
  if (rows.length === 0) return 'no staff yet: add the first owner with `storefront staff add EMAIL --role owner`';
  const table = [
    ['EMAIL', 'ROLE', 'STATE', 'PASSKEYS', 'LAST SIGN-IN', 'ADDED'],
    ...rows.map((row) => [
      row.email,
      row.role,
      row.revokedAt ? `revoked ${utc(row.revokedAt)}` : row.passkeys === 0 ? 'not enrolled' : 'active',
      String(row.passkeys),
      row.lastSignInAt ? utc(row.lastSignInAt) : '-',
      utc(row.addedAt),
    ]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  return table.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n');
}
