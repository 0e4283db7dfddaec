/**
 * The commerce endpoint's budget per agent profile (src/http/rate-limit.ts counts it): a call naming its agent profile
 * (the UCP-Agent header; else a tool call's meta["ucp-agent"].profile, counted once its body is read) also counts
 * against that profile's budget from the caller's address (`mcp-per-profile`, or the profile's own in RATE_LIMITS).
 */
import type { FastifyRequest } from 'fastify';
import type { RateLimitKey } from '../../http/rate-limit.js';

/** A UCP-Agent header longer than this names no profile the limits count (profile URLs are at most 2048 characters). */
const MAX_AGENT_HEADER = 4096;

/** An RFC 8941 sf-string, and a member of a dictionary (key, value, parameters) up to its comma. */
const SF_STRING = String.raw`"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"`;
const SF_KEY = String.raw`[a-z*][a-z0-9_.*-]*`;
const SF_ITEM = String.raw`(?:${SF_STRING}|[^",;()\s]+)`;
const SF_PARAMETERS = String.raw`(?: *; *${SF_KEY}(?:=${SF_ITEM})?)*`;
const SF_MEMBER = new RegExp(String.raw`[ \t]*(${SF_KEY})(?:=(${SF_ITEM}|\((?: *${SF_ITEM}${SF_PARAMETERS})* *\)))?${SF_PARAMETERS}[ \t]*(?:,|$)`, 'y');

/**
 * The agent profile URL a UCP-Agent header names (`profile="https://…"`, an RFC 8941 dictionary as UCP's HTTP
 * binding defines it), as `new URL()` writes it; undefined when there is none, or the header or URL is malformed.
 * The commerce endpoint's tools read the profile from each call's `meta` (src/ucp/agent/agent-profiles.ts), which
 * is not read before the call is counted; the header is what a platform signing its requests sends with each.
 */
export function agentProfileOf(header: string | undefined): string | undefined {
  if (header === undefined || header.length > MAX_AGENT_HEADER) return undefined;
  let profile: string | undefined;
  SF_MEMBER.lastIndex = 0;
  while (SF_MEMBER.lastIndex < header.length) {
    const member = SF_MEMBER.exec(header);
    if (member === null) return undefined;
    // A later member of the same name replaces an earlier one (RFC 8941, 4.2.2).
    if (member[1] === 'profile') profile = member[2]?.startsWith('"') ? member[2].slice(1, -1).replace(/\\(.)/g, '$1') : undefined;
  }
  if (profile === undefined) return undefined;
  try {
    return new URL(profile).href;
  } catch {
    return undefined;
  }
}

/**
 * The agent profile URL a commerce call's tool arguments name (`meta["ucp-agent"].profile`, where the MCP binding
 * puts it), as `new URL()` writes it; undefined when the call is not a tool call or names none.
 */
export function argumentsProfileOf(body: unknown): string | undefined {
  const params = field(body, 'method') === 'tools/call' ? field(body, 'params') : undefined;
  const profile = field(field(field(field(params, 'arguments'), 'meta'), 'ucp-agent'), 'profile');
  if (typeof profile !== 'string' || profile.length > MAX_AGENT_HEADER) return undefined;
  try {
    return new URL(profile).href;
  } catch {
    return undefined;
  }
}

/** An object's own property, or undefined. */
function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, name) ? Reflect.get(value, name) : undefined;
}

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/**
 * The commerce endpoint's routes declare it (`config: { rateLimit: 'mcp', rateLimitKeys: PER_AGENT_PROFILE }`).
 * A profile's key holds the caller's address too: the header is a claim anyone can make, so a claim spends only the
 * claimant's share of that profile's budget, never the platform's own.
 */
export const PER_AGENT_PROFILE: readonly RateLimitKey[] = [
  {
    budget: 'mcp-per-profile',
    perAddress: true,
    onArrival: (request: FastifyRequest) => agentProfileOf(headerText(request.headers['ucp-agent'])),
    afterBody: (request: FastifyRequest) => argumentsProfileOf(request.body),
    ownBudget: (profile, { agentProfiles }) => agentProfiles.get(profile),
  },
];
