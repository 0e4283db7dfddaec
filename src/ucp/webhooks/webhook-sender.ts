/**
 * Posts an order event to the agent platform's webhook (UCP order capability, "Order Event Webhook"): the order
 * JSON, with the Standard Webhooks `Webhook-Id` and `Webhook-Timestamp`, the store's profile URL in `UCP-Agent`,
 * and an RFC 9421 signature made with the store's ES256 key over the target and the body's `Content-Digest`.
 * The URL obeys the rules agent profiles are fetched under: https only (http to loopback in the insecure test
 * mode), public addresses only, checked again inside the connection's DNS lookup; no redirect is followed; one
 * deadline covers everything. A 2xx is delivered; anything else throws a DeliveryError, retryable unless the URL
 * itself breaks the rules. Neither the URL nor anything the platform answered reaches `logReason`.
 */
import http from 'node:http';
import https from 'node:https';
import { DeliveryError } from '../../outbox/delivery.js';
import type { WebhookMessage } from '../../outbox/outbox.js';
import { guardedLookup, isNoSuchName, outboundUrl, RefusedAddress, type UrlRefusal } from '../agent/profile-fetch.js';
import { contentDigest, sfString, signRequest } from './message-signature.js';
import type { SigningKeys } from './signing-keys.js';

export interface WebhookSendOptions {
  keys: SigningKeys;
  /** The store's business profile (BASE_URL + /.well-known/ucp): where the platform finds the key to verify with. */
  businessProfileUrl: string;
  /** UCP_ALLOW_INSECURE_PROFILES: plain http to loopback allowed, for tests only. */
  allowInsecure: boolean;
  /** The deadline over lookup, connect, TLS, request and the answer's status (10 s by default). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** What is read of an answer's body (and thrown away) before the connection is cut. */
const MAX_RESPONSE_BYTES = 64 * 1024;

const URL_REFUSALS: Record<UrlRefusal, string> = {
  too_long: 'the webhook URL is too long',
  not_absolute: 'the webhook URL is not an absolute URL',
  credentials: 'the webhook URL carries credentials',
  not_https: 'the webhook URL does not use https',
  refused_address: 'the webhook URL points to an address this store does not post to',
  not_public_name: 'the webhook host is not a public DNS name',
};

/** The webhook URL, normalised, when the store may post to it (the agent profile URL rules); else undefined. */
export function checkWebhookUrl(raw: string, allowInsecure: boolean): string | undefined {
  const checked = outboundUrl(raw, allowInsecure);
  return 'url' in checked ? checked.url.href : undefined;
}

/** Delivers one order event; resolves on a 2xx, else throws a DeliveryError. `eventId` is the same on every retry. */
export function sendWebhook(message: WebhookMessage, eventId: string, options: WebhookSendOptions): Promise<void> {
  const checked = outboundUrl(message.url, options.allowInsecure);
  if ('refusal' in checked) {
    const reason = URL_REFUSALS[checked.refusal];
    return Promise.reject(new DeliveryError(reason, reason, false));
  }
  const { url } = checked;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const body = Buffer.from(message.body, 'utf8');
  const signed = {
    'content-type': 'application/json',
    'content-digest': contentDigest(body),
    'ucp-agent': `profile=${sfString(options.businessProfileUrl)}`,
    'webhook-id': eventId,
    'webhook-timestamp': String(message.timestamp),
  };
  const signature = signRequest({ method: 'POST', url, headers: signed }, options.keys.current());
  const client = url.protocol === 'https:' ? https : http;

  return new Promise<void>((resolve, reject) => {
    let settled = false;
    // Assigned once, below; the deadline (which may fire first) reads it before that.
    // eslint-disable-next-line prefer-const
    let request: http.ClientRequest | undefined;
    const settle = (error?: DeliveryError) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve();
    };
    const finish = () => {
      clearTimeout(timer);
      request?.destroy();
    };
    // Bounds the draining of an answer too: a peer that trickles its body is cut off, the outcome kept.
    const timer = setTimeout(() => {
      const reason = `the platform did not answer within ${timeoutMs} ms`;
      settle(new DeliveryError(reason, reason));
      finish();
    }, timeoutMs);
    timer.unref(); // a delivery under way must not keep the process alive at shutdown
    request = client.request(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: guardedLookup(options.allowInsecure),
        headers: { ...signed, ...signature, 'content-length': String(body.length), 'user-agent': 'storefront-ucp/1.0' },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) finish();
        });
        response.on('end', finish);
        response.on('error', finish);
        if (status >= 200 && status < 300) return settle();
        const redirect = status >= 300 && status < 400;
        const reason = `the platform answered HTTP ${status}${redirect ? ' (a redirect, not followed)' : ''}`;
        settle(new DeliveryError(reason, reason));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      finish();
      if (error instanceof RefusedAddress) {
        const reason = 'the webhook host resolves to an address this store does not post to';
        return settle(new DeliveryError(reason, reason, false));
      }
      if (isNoSuchName(error)) {
        const reason = 'the webhook host does not resolve';
        return settle(new DeliveryError(reason, reason));
      }
      // The code only (ECONNREFUSED, CERT_HAS_EXPIRED, …): Node's messages name the address.
      const reason = `the platform could not be reached (${/^[A-Z0-9_]{1,64}$/.test(error.code ?? '') ? error.code : 'connection failed'})`;
      settle(new DeliveryError(reason, reason));
    });
    request.end(body);
  });
}
