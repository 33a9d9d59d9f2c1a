import ipaddr from 'ipaddr.js';
import { NotifyError } from '../errors.js';
import type { HostResolver } from '../ports/callback-transport.js';
import { isPublicAddress, unbracket } from './public-address.js';

const field = 'response_request.callback_url';
/** The one refusal of a host name, whether it has no address, a private one, or its lookup failed. */
const notPublic = `${field}: the host does not resolve to a public address`;

/**
 * A URL as RFC 3986 writes one: its scheme, `//` and an authority that is not empty, without the
 * spaces, controls or backslashes that the WHATWG parser would repair into a URL (`https:host`,
 * ` https://host`, `https:\\host`, `https:///host`, whose empty authority it skips to take the path's
 * first segment as the host), so that only what names its target plainly is taken.
 */
const writtenOut = /^[a-z][a-z0-9+.-]*:\/\/[^/\\\s\p{Cc}][^\\\s\p{Cc}]*$/iu;

/** An authority, as written, that holds an `@`: user info, however empty. */
const userInfoAsWritten = /^[^:]*:\/\/[^/?#]*@/;

/** How callback targets are judged. */
export interface CallbackTargetPolicy {
  resolver: HostResolver;
  /** Development only: `http:`, loopback and private targets are allowed. */
  allowInsecure: boolean;
  /** Longest wait for DNS. */
  lookupTimeoutMs: number;
}

async function resolveWithin(policy: CallbackTargetPolicy, hostname: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS lookup timed out')), policy.lookupTimeoutMs);
  });
  try {
    return await Promise.race([policy.resolver.resolve(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The form of a callback URL (docs/http-api.md#request-body): written out whole, `https:` (or, with
 * `allowInsecure`, `http:`), without user info, not port 0; a `400` otherwise. Part of a send's
 * body validation, before its idempotency record is looked up.
 */
export function callbackUrlForm(url: string, allowInsecure: boolean): URL {
  let parsed: URL;
  try {
    if (!writtenOut.test(url)) throw new TypeError('not written out whole');
    parsed = new URL(url);
  } catch {
    throw new NotifyError('invalid_request', `${field}: must be an absolute https: URL`);
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) {
    throw new NotifyError('invalid_request', `${field}: must be an absolute https: URL`);
  }
  // As written too: the parser keeps no user info of `https://@host` or `https://:@host`.
  if (parsed.username !== '' || parsed.password !== '' || userInfoAsWritten.test(url)) {
    throw new NotifyError('invalid_request', `${field}: must not contain user info`);
  }
  if (parsed.port === '0') {
    throw new NotifyError('invalid_request', `${field}: must not use port 0`);
  }
  return parsed;
}

/**
 * Checks a callback URL (docs/http-api.md#request-body, docs/http-api.md#error-reference, docs/behaviour.md#completion-callbacks) and answers the addresses it may be
 * delivered to: its form ({@link callbackUrlForm}, 400); the host resolves, and every address
 * it resolves to is public unicast (422), so that a name with one private address among public ones
 * is refused too. Delivery calls this again on every attempt and connects only to what it answered.
 */
export async function checkCallbackTarget(url: string, policy: CallbackTargetPolicy): Promise<string[]> {
  const parsed = callbackUrlForm(url, policy.allowInsecure);
  // The URL parser has already turned every IPv4 spelling (0x7f.1, 2130706433, 127.1) into dotted decimal.
  const host = unbracket(parsed.hostname);
  if (ipaddr.isValid(host)) {
    if (!policy.allowInsecure && !isPublicAddress(host)) {
      throw new NotifyError('unprocessable', `${field}: ${parsed.hostname} is not a public address`);
    }
    return [host];
  }
  let addresses: string[];
  try {
    addresses = await resolveWithin(policy, host);
  } catch (error) {
    // How DNS failed (a refusal, a server failure, no answer) would tell an internal name from one
    // that does not exist as well: that goes only to the error's cause, for the log.
    throw policy.allowInsecure
      ? new NotifyError(
          'unprocessable',
          `${field}: the host ${host} could not be resolved (${String(error)})`,
          {
            cause: error,
          },
        )
      : new NotifyError('unprocessable', notPublic, { cause: error });
  }
  if (addresses.length === 0 && policy.allowInsecure) {
    throw new NotifyError('unprocessable', `${field}: the host ${host} does not resolve`);
  }
  // Naming the address (or its kind) would let a caller map the names of an internal network, and so
  // would telling a name without addresses from one with private ones: which names exist inside.
  if (!policy.allowInsecure && (addresses.length === 0 || !addresses.every(isPublicAddress))) {
    throw new NotifyError('unprocessable', notPublic);
  }
  return addresses;
}
