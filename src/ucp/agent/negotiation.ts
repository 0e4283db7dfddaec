/**
 * UCP negotiation, pure: the version check and the capability intersection of the business and platform
 * profiles (UCP overview, "Intersection algorithm"): keep a business capability the platform also names,
 * at the highest version both list; then drop extensions whose parents are all gone, until nothing changes.
 */
import { Capability, UCP_RELEASES, type UcpRelease } from '../protocol.js';

export interface CapabilityDeclaration {
  version: string;
  extends?: string | string[];
}

/** Negotiated capability name → the version both sides speak. */
export type NegotiatedCapabilities = ReadonlyMap<string, string>;

/** What negotiating with one agent profile gives: the shared capabilities, and where the platform hears of orders. */
export interface Negotiation {
  /** The UCP release of this caller's answers: the newest both sides speak. */
  release: UcpRelease;
  capabilities: NegotiatedCapabilities;
  /** The order capability's `config.webhook_url`, checked, when the order capability was negotiated. */
  orderWebhookUrl?: string;
}

/** What negotiation reads from a platform (agent) profile. */
export interface PlatformProfile {
  version: string;
  /** Older releases the platform also speaks, each with the URL of its leaf profile (`ucp.supported_versions`). */
  supportedVersions?: Record<string, string>;
  capabilities: Record<string, CapabilityDeclaration[]>;
  /** The first string `config.webhook_url` of its order capability entries, unchecked. */
  orderWebhookUrl?: string;
}

/** Why a document is not a usable platform profile: a JSON Pointer into it and what is wrong there. */
export interface ProfileDefect {
  path: string;
  message: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const pointer = (...parts: (string | number)[]) => parts.map((part) => `/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/**
 * Reads a platform profile liberally: only what negotiation uses is checked — `ucp` an object, `ucp.version`
 * a string, `ucp.capabilities` an object, and, for each capability this business offers (`known`), an array
 * of entries each with a string `version` and an optional `extends` (a string or an array of strings).
 * Everything else (services, payment handlers, `spec`/`schema`/`config` of an entry, capabilities this
 * business does not offer) is ignored, so profiles written by real agents (e.g. `ucp profile init` of
 * @shopify/ucp-cli, whose entries carry only `version` and `extends`) are accepted. The one `config` read is the
 * order capability's `webhook_url`, taken when it is a string and otherwise ignored.
 */
export function readPlatformProfile(document: unknown, known: Iterable<string>): PlatformProfile | ProfileDefect {
  if (!isObject(document)) return { path: '', message: 'must be a JSON object' };
  const ucp = document.ucp;
  if (ucp === undefined) return { path: '/ucp', message: 'is required' };
  if (!isObject(ucp)) return { path: '/ucp', message: 'must be an object' };
  if (ucp.version === undefined) return { path: '/ucp/version', message: 'is required' };
  if (typeof ucp.version !== 'string') return { path: '/ucp/version', message: 'must be a string' };
  const declared = ucp.capabilities;
  if (declared === undefined) return { path: '/ucp/capabilities', message: 'is required' };
  if (!isObject(declared)) return { path: '/ucp/capabilities', message: 'must be an object (capability name → entries)' };
  const capabilities: Record<string, CapabilityDeclaration[]> = {};
  let orderWebhookUrl: string | undefined;
  for (const name of known) {
    if (!Object.hasOwn(declared, name)) continue;
    const entries = declared[name];
    if (!Array.isArray(entries)) return { path: pointer('ucp', 'capabilities', name), message: 'must be an array of capability entries' };
    const read: CapabilityDeclaration[] = [];
    for (const [index, entry] of entries.entries()) {
      const at = (...rest: string[]) => pointer('ucp', 'capabilities', name, index, ...rest);
      if (!isObject(entry)) return { path: at(), message: 'must be an object' };
      if (entry.version === undefined) return { path: at('version'), message: 'is required' };
      if (typeof entry.version !== 'string') return { path: at('version'), message: 'must be a string' };
      const parents = entry.extends;
      if (parents !== undefined && typeof parents !== 'string' && !(Array.isArray(parents) && parents.every((parent) => typeof parent === 'string'))) {
        return { path: at('extends'), message: 'must be a capability name or an array of them' };
      }
      read.push(parents === undefined ? { version: entry.version } : { version: entry.version, extends: parents as string | string[] });
      const webhookUrl = isObject(entry.config) ? entry.config.webhook_url : undefined;
      if (name === Capability.order && orderWebhookUrl === undefined && typeof webhookUrl === 'string') orderWebhookUrl = webhookUrl;
    }
    capabilities[name] = read;
  }
  // supported_versions is read only where it is well formed (release → URL strings); anything else is ignored.
  const supported = isObject(ucp.supported_versions)
    ? Object.fromEntries(Object.entries(ucp.supported_versions).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
    : {};
  return {
    version: ucp.version,
    ...(Object.keys(supported).length > 0 ? { supportedVersions: supported } : {}),
    capabilities,
    ...(orderWebhookUrl === undefined ? {} : { orderWebhookUrl }),
  };
}

export const isProfileDefect = (read: PlatformProfile | ProfileDefect): read is ProfileDefect => 'message' in read;

/**
 * The releases a platform may be answered in, newest first: this store's releases that its profile names, as its
 * `ucp.version` or a key of its `supported_versions`. Empty when there is none (`version_unsupported`).
 */
export function releasesOffered(profile: Pick<PlatformProfile, 'version' | 'supportedVersions'>): UcpRelease[] {
  const offered = new Set([profile.version, ...Object.keys(profile.supportedVersions ?? {})]);
  return UCP_RELEASES.filter((release) => offered.has(release));
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
