/**
 * Which UCP release the agent behind a checkout speaks, kept by the commerce door (migration 009): an order's events
 * are rendered for the platform in the release of the agent whose order webhook the checkout holds (the creating
 * agent's, or a later one's that named its own). Checkouts from before 2026-08-25 was spoken have 2026-04-08.
 */
import type { Queryable } from '../../db/database.js';
import { isUcpRelease, OLDEST_UCP_RELEASE, type UcpRelease } from '../protocol.js';

export async function rememberRelease(db: Queryable, checkoutId: string, release: UcpRelease): Promise<void> {
  await db.query(
    `insert into ucp_checkout_releases (checkout_id, release) values ($1, $2)
     on conflict (checkout_id) do update set release = excluded.release`,
    [checkoutId, release],
  );
}

/**
 * The release the agent behind the checkout speaks. None is recorded only when the write after a create failed (the
 * agent was told of the failure) or the checkout is not an agent's: then the oldest release, which every platform
 * that ever heard from this store speaks.
 */
export async function releaseOf(db: Queryable, checkoutId: string): Promise<UcpRelease> {
  const [row] = await db.query<{ release: string }>('select release from ucp_checkout_releases where checkout_id = $1', [checkoutId]);
  return row && isUcpRelease(row.release) ? row.release : OLDEST_UCP_RELEASE;
}
