import { NotifyError } from '../errors.js';
import type { HostResolver } from '../ports/callback-transport.js';
import { nonPublicReason, unbracket } from './public-address.js';

const field = 'response_request.callback_url';

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
 * Checks a callback URL (spec 2.2, DECISIONS §1 and §5) and answers the addresses it may be
 * delivered to: `https:` only, no user info (400); the host resolves, and every address it resolves
 * to is public unicast (422), so that a name with one private address among public ones is refused
 * too. Delivery calls this again on every attempt and connects only to what it answered.
 */
export async function checkCallbackTarget(url: string, policy: CallbackTargetPolicy): Promise<string[]> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NotifyError('invalid_request', `${field}: must be an absolute https: URL`);
  }
  const schemes = policy.allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) {
    throw new NotifyError('invalid_request', `${field}: must be an absolute https: URL`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new NotifyError('invalid_request', `${field}: must not contain user info`);
  }
  const host = unbracket(parsed.hostname);
  const literal = nonPublicReason(host) !== 'not an IP address';
  let addresses: string[];
  try {
    addresses = literal ? [host] : await resolveWithin(policy, host);
  } catch (error) {
    throw new NotifyError(
      'unprocessable',
      `${field}: the host ${host} could not be resolved (${String(error)})`,
      {
        cause: error,
      },
    );
  }
  if (addresses.length === 0) {
    throw new NotifyError('unprocessable', `${field}: the host ${host} does not resolve`);
  }
  if (!policy.allowInsecure) {
    for (const address of addresses) {
      const reason = nonPublicReason(address);
      if (reason !== null) {
        throw new NotifyError(
          'unprocessable',
          `${field}: must be publicly reachable, but ${host} resolves to a ${reason}`,
        );
      }
    }
  }
  return addresses;
}
