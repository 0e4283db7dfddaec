/**
 * UCP negotiation, pure: the version check and the capability intersection of the business and platform
 * profiles (UCP overview, "Intersection algorithm"): keep a business capability the platform also names,
 * at the highest version both list; then drop extensions whose parents are all gone, until nothing changes.
 */

export interface CapabilityDeclaration {
  version: string;
  extends?: string | string[];
}

/** Negotiated capability name → the version both sides speak. */
export type NegotiatedCapabilities = ReadonlyMap<string, string>;

export function isVersionSupported(platformVersion: string, businessVersion: string, supportedVersions: readonly string[]): boolean {
  return platformVersion === businessVersion || supportedVersions.includes(platformVersion);
}

export function intersectCapabilities(
  business: Readonly<Record<string, readonly CapabilityDeclaration[]>>,
  platform: Readonly<Record<string, readonly { version: string }[]>>,
): Map<string, string> {
  const chosen = new Map<string, { version: string; parents: string[] }>();
  for (const [name, entries] of Object.entries(business)) {
    const platformVersions = new Set((platform[name] ?? []).map((entry) => entry.version));
    const common = entries.filter((entry) => platformVersions.has(entry.version));
    if (common.length === 0) continue;
    // Dated versions (YYYY-MM-DD) order as strings.
    const best = common.reduce((a, b) => (b.version > a.version ? b : a));
    const parents = best.extends === undefined ? [] : Array.isArray(best.extends) ? best.extends : [best.extends];
    chosen.set(name, { version: best.version, parents });
  }
  let pruned = true;
  while (pruned) {
    pruned = false;
    for (const [name, { parents }] of chosen) {
      if (parents.length > 0 && !parents.some((parent) => chosen.has(parent))) {
        chosen.delete(name);
        pruned = true;
      }
    }
  }
  return new Map([...chosen].map(([name, { version }]) => [name, version]));
}
