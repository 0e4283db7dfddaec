/**
 * Agent profiles: fetched once per URL, read liberally (only what negotiation uses is checked, see
 * `readPlatformProfile`), version-checked and intersected with this store's capabilities. Results are
 * cached (at least 60 s, longer when the profile's Cache-Control asks, at most an hour), concurrent requests
 * for one URL share one fetch, failures are remembered briefly, and the cache (lru-cache) has a fixed size: a busy
 * store keeps a fixed discovery footprint. The order capability's webhook URL, when the profile gives one the store may
 * post to, is kept with the result.
 */
import { LRUCache } from 'lru-cache';
import { discoveryFailed, JsonRpcError } from '../jsonrpc-errors.js';
import { Capability, UCP_RELEASES, type UcpRelease } from '../protocol.js';
import { checkWebhookUrl } from '../webhooks/webhook-sender.js';
import { checkProfileUrl, fetchProfileDocument } from './profile-fetch.js';
import {
  intersectCapabilities,
  isProfileDefect,
  readPlatformProfile,
  releasesOffered,
  type CapabilityDeclaration,
  type Negotiation,
  type PlatformProfile,
} from './negotiation.js';

export interface AgentProfilesOptions {
  /** This store's capabilities as the profile of each release it speaks declares them. */
  capabilities: Readonly<Record<UcpRelease, Readonly<Record<string, readonly CapabilityDeclaration[]>>>>;
  allowInsecure: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** The clock the cache's lifetimes are measured on (milliseconds; tests move it). */
  now?: () => number;
}

const MIN_CACHE_SECONDS = 60;
const MAX_CACHE_SECONDS = 3600;
const FAILURE_CACHE_SECONDS = 5;
const MAX_ENTRIES = 1000;

/** A negotiation, or the error it ended with: a failure is cached too (briefly), so a broken profile is not refetched per call. */
type Outcome = { negotiation: Negotiation } | { failure: unknown };

export class AgentProfiles {
  /** fetch() shares one fetch among concurrent callers; each entry lives as long as its fetch sets (`ttl`). */
  private readonly cache: LRUCache<string, Outcome>;

  constructor(private readonly options: AgentProfilesOptions) {
    this.cache = new LRUCache<string, Outcome>({
      max: MAX_ENTRIES,
      // A given clock is read on every look-up (lru-cache otherwise reads it at most once a millisecond of real time).
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
      // A fetch whose entry is evicted meanwhile still answers the callers waiting on it.
      ignoreFetchAbort: true,
      fetchMethod: async (profileUrl, _stale, { options: entry }) => {
        try {
          const negotiation = await this.resolve(profileUrl, (seconds) => {
            entry.ttl = seconds * 1000;
          });
          return { negotiation };
        } catch (failure) {
          entry.ttl = FAILURE_CACHE_SECONDS * 1000;
          return { failure };
        }
      },
    });
  }

  /**
   * The profile URL of `meta["ucp-agent"]` when the caller sent one, checked before anything else looks at
   * the arguments: a `ucp-agent` without a profile, or with one that is not a string, an absolute URL, https
   * (or an address this store fetches from) is a -32001 `invalid_profile_url` (HTTP 400), never -32602.
   * Undefined when there is no `ucp-agent`: the caller is anonymous.
   */
  profileUrlOf(args: unknown): string | undefined {
    const meta = typeof args === 'object' && args !== null && 'meta' in args ? args.meta : undefined;
    if (typeof meta !== 'object' || meta === null || !Object.hasOwn(meta, 'ucp-agent')) return undefined;
    const agent: unknown = Reflect.get(meta, 'ucp-agent');
    const profile = typeof agent === 'object' && agent !== null && 'profile' in agent ? agent.profile : undefined;
    if (profile === undefined) throw discoveryFailed('invalid_profile_url', 'meta["ucp-agent"] carries no profile URL.');
    if (typeof profile !== 'string') throw discoveryFailed('invalid_profile_url', 'The agent profile URL is not a string.');
    checkProfileUrl(profile, this.options.allowInsecure);
    return profile;
  }

  /**
   * The capabilities this store and the agent share, and the agent's order webhook URL (when the order capability
   * is shared and the URL passes the rules profile URLs do; else absent). Throws a -32001 discovery error when
   * negotiation fails.
   */
  async negotiate(profileUrl: string): Promise<Negotiation> {
    const outcome = await this.cache.fetch(profileUrl);
    // Only an aborted fetch answers nothing, and this cache lets every fetch finish (ignoreFetchAbort).
    if (outcome === undefined) throw new Error('The agent profile cache answered nothing.');
    if ('failure' in outcome) throw outcome.failure;
    return outcome.negotiation;
  }

  private async resolve(profileUrl: string, keepFor: (seconds: number) => void): Promise<Negotiation> {
    const { profile, maxAgeSeconds } = await this.read(profileUrl);
    const offered = releasesOffered(profile);
    if (offered.length === 0) {
      throw discoveryFailed(
        'version_unsupported',
        `UCP version ${profile.version.slice(0, 20)} is not supported; this store speaks ${UCP_RELEASES.join(', ')}.`,
      );
    }
    // The newest release both speak whose profile can be read: a release the platform offers only through
    // supported_versions has the capabilities of that leaf profile, whose own ucp.version must be the release (UCP
    // overview, "Protocol Version"); a leaf that cannot be used leaves the next release, else its reason.
    let refused: JsonRpcError | undefined;
    for (const release of offered) {
      let declared = profile;
      let maxAge = maxAgeSeconds;
      if (release !== profile.version) {
        try {
          const leaf = await this.readLeaf(profile.supportedVersions![release]!, release);
          declared = leaf.profile;
          maxAge = leaf.maxAgeSeconds === undefined ? maxAge : Math.min(maxAge ?? leaf.maxAgeSeconds, leaf.maxAgeSeconds);
        } catch (error) {
          if (!(error instanceof JsonRpcError)) throw error;
          refused = error;
          continue;
        }
      }
      keepFor(Math.min(MAX_CACHE_SECONDS, Math.max(MIN_CACHE_SECONDS, maxAge ?? MIN_CACHE_SECONDS)));
      const capabilities = intersectCapabilities(this.options.capabilities[release], declared.capabilities);
      const webhookUrl = capabilities.has(Capability.order) && declared.orderWebhookUrl !== undefined
        ? checkWebhookUrl(declared.orderWebhookUrl, this.options.allowInsecure)
        : undefined;
      return webhookUrl === undefined ? { release, capabilities } : { release, capabilities, orderWebhookUrl: webhookUrl };
    }
    throw refused!;
  }

  /** A platform's profile of an older release, from its supported_versions: checked as its own profile URL is. */
  private async readLeaf(url: string, release: string): Promise<{ profile: PlatformProfile; maxAgeSeconds: number | undefined }> {
    try {
      checkProfileUrl(url, this.options.allowInsecure);
    } catch (error) {
      if (!(error instanceof JsonRpcError)) throw error;
      const why = typeof error.data?.content === 'string' ? ` (${error.data.content})` : '';
      throw discoveryFailed('profile_malformed', `The agent profile's supported_versions URL for ${release} cannot be used${why}.`);
    }
    const leaf = await this.read(url);
    if (leaf.profile.version !== release) {
      throw discoveryFailed(
        'profile_malformed',
        `The agent profile's supported_versions names a ${release} profile whose ucp.version is ${leaf.profile.version.slice(0, 20)}.`,
      );
    }
    return leaf;
  }

  /** Fetches and reads one platform profile document (a -32001 discovery error when it cannot be used). */
  private async read(url: string): Promise<{ profile: PlatformProfile; maxAgeSeconds: number | undefined }> {
    const { document, maxAgeSeconds } = await fetchProfileDocument(url, {
      allowInsecure: this.options.allowInsecure,
      timeoutMs: this.options.timeoutMs ?? 2000,
      maxBytes: this.options.maxBytes ?? 64 * 1024,
    });
    const known = new Set(UCP_RELEASES.flatMap((release) => Object.keys(this.options.capabilities[release])));
    const profile = readPlatformProfile(document, known);
    if (isProfileDefect(profile)) {
      throw discoveryFailed('profile_malformed', `The agent profile is not a UCP platform profile: ${profile.path || 'the document'} ${profile.message}.`);
    }
    return { profile, maxAgeSeconds };
  }
}
