/**
 * A signed-in admin session for HTTP tests: a staff member added from the terminal, signed in through a single-use
 * sign-in link (what a store whose address holds no passkey does), as the admin's cookie and CSRF token.
 */
import { randomBytes } from 'node:crypto';
import { TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import type { StaffRole } from '../../src/staff/staff.js';
import type { TestStore } from './store.js';
import type { Store } from '../../src/store.js';

/** The admin's session cookie (src/admin/admin-kit.ts SESSION_COOKIE). */
export const ADMIN_SESSION_COOKIE = '__Host-storefront-admin';

export interface StaffSessionForTest {
  /** `name=value`, for a Cookie header. */
  cookie: string;
  /** The session's CSRF token, for the `_csrf` field of a state-changing request. */
  csrf: string;
  email: string;
  /** The session's secret (the cookie's value). */
  secret: string;
}

export async function startStaffSession(store: Store, options: { email?: string; role?: StaffRole } = {}): Promise<StaffSessionForTest> {
  const email = options.email ?? `staff-${randomBytes(4).toString('hex')}@example.com`;
  const members = await store.staff.list(store.db);
  const member = members.find((known) => known.email === email.toLowerCase());
  if (!member || member.revokedAt) await store.staff.add(store.db, TERMINAL_ACTOR, email, options.role ?? 'owner');
  const { link } = await store.staff.signInLink(store.db, TERMINAL_ACTOR, email);
  const { secret, session } = await store.staff.useSignInLink(store.db, link.slice(link.lastIndexOf('/') + 1));
  return { cookie: `${ADMIN_SESSION_COOKIE}=${secret}`, csrf: session.csrfToken, email: session.email, secret };
}

/** The admin over inject: GET and form POSTs from the store's own origin with the session's CSRF token. */
export function adminClient(t: TestStore) {
  const origin = new URL(t.store.config.baseUrl).origin;
  return {
    get: (url: string, session: StaffSessionForTest) => t.app.inject({ method: 'GET', url, headers: { cookie: session.cookie, accept: 'text/html' } }),
    post: (url: string, session: StaffSessionForTest, fields: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { cookie: session.cookie, origin, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        payload: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
      }),
  };
}
