/**
 * Which UCP release the agent behind a checkout speaks, kept by the commerce door (migration 009): an order's events
 * are rendered for the platform in the release its agent negotiated when it last created or updated the checkout.
 */
import type { Queryable } from '../../db/database.js';
import { isUcpRelease, LATEST_UCP_RELEASE, type UcpRelease } from '../protocol.js';

export async function rememberRelease(db: Queryable, checkoutId: string, release: UcpRelease): Promise<void> {
  await db.query(
    `insert into ucp_checkout_releases (checkout_id, release) values ($1, $2)
     on conflict (checkout_id) do update set release = excluded.release`,
    [checkoutId, release],
  );
}

/** The release the agent behind the checkout speaks; the newest when none was recorded. */
export async function releaseOf(db: Queryable, checkoutId: string): Promise<UcpRelease> {
  const [row] = await db.query<{ release: string }>('select release from ucp_checkout_releases where checkout_id = $1', [checkoutId]);
  return row && isUcpRelease(row.release) ? row.release : LATEST_UCP_RELEASE;
}
