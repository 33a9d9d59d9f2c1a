import { X509Certificate } from 'node:crypto';
import { Agent, request } from 'undici';
import {
  type CallbackAttemptResult,
  type CallbackTransport,
  checkCallbackTarget,
  type HostResolver,
  isNotifyError,
  signCallback,
} from '../../core/adapter-kit.js';
import { dnsResolver } from './dns-resolver.js';
import { pinnedLookup } from './pinned-lookup.js';
import { parseRetryAfter } from './retry-after.js';

/** Options of {@link httpCallbacks}. */
export interface HttpCallbacksOptions {
  /**
   * Development only: allows `http:` and loopback or private targets. Off by default; when you turn
   * it on, say so in your log at start-up.
   */
  allowInsecure?: boolean;
  /** Resolves callback hosts; DNS through `dnsResolver` (c-ares, the system's servers) by default. */
  resolver?: HostResolver;
  /**
   * An attempt that has no complete answer after this long has failed (default 15 000 ms). With
   * `lookupTimeoutMs`, at most 50 000 ms: an attempt must end within the 60 s lease of its due work,
   * or another run would make it again while it is under way.
   */
  timeoutMs?: number;
  /** DNS answers slower than this fail the attempt (default 5 000 ms). */
  lookupTimeoutMs?: number;
  /**
   * Certificate authorities (PEM text, or a PEM file's bytes) to trust instead of Node's bundled
   * ones, e.g. a private CA.
   */
  ca?: string | Uint8Array | readonly (string | Uint8Array)[];
}

/** One PEM certificate, or one with OpenSSL's trust settings (`openssl x509 -trustout`), which Node takes too. */
const pemCertificate = /-----BEGIN (TRUSTED )?CERTIFICATE-----[\s\S]+?-----END \1?CERTIFICATE-----/g;

/** The text of a `ca` entry: a string, or the bytes of a PEM file (`readFileSync` without an encoding). */
const pemText = (entry: unknown): string | null =>
  typeof entry === 'string'
    ? entry
    : entry instanceof Uint8Array
      ? Buffer.from(entry).toString('latin1')
      : null;

/**
 * Refuses certificate authorities that are no PEM certificates: Node would silently trust none of
 * them, and every callback to a receiver of a private CA would fail at its first attempt.
 */
function checkCertificateAuthorities(ca: unknown): void {
  const entries: unknown[] = Array.isArray(ca) ? ca : [ca];
  entries.forEach((entry, index) => {
    const where = Array.isArray(ca) ? `ca[${index}]` : 'ca';
    const certificates = [...(pemText(entry) ?? '').matchAll(pemCertificate)];
    if (certificates.length === 0) {
      throw new TypeError(
        `httpCallbacks: ${where} must hold PEM certificates (-----BEGIN CERTIFICATE-----…)`,
      );
    }
    for (const [certificate, trusted] of certificates) {
      // Node reads the trust settings' form itself; the plain form is checked here.
      if (trusted !== undefined) continue;
      try {
        new X509Certificate(certificate);
      } catch (error) {
        throw new TypeError(
          `httpCallbacks: ${where} holds a certificate that cannot be read: ${String(error)}`,
        );
      }
    }
  });
}

/** The longest an attempt may take: well within the 60 s lease of the due work that makes it. */
const longestAttemptMs = 50_000;

/**
 * Delivers completion callbacks over HTTP(S), signed per Standard Webhooks. Every attempt resolves
 * the host again, refuses non-public addresses and connects to the address it checked; redirects
 * are not followed and proxy settings of the environment are ignored.
 * @throws RangeError when `timeoutMs` and `lookupTimeoutMs` are not positive or exceed 50 000 ms together;
 *   TypeError when `allowInsecure` is no boolean, `resolver` has no `resolve`, or `ca` holds no PEM
 *   certificate, or one that cannot be read.
 */
export function httpCallbacks(options: HttpCallbacksOptions = {}): CallbackTransport {
  const {
    allowInsecure = false,
    resolver = dnsResolver,
    timeoutMs = 15_000,
    lookupTimeoutMs = 5_000,
    ca,
  } = options;
  if (!(timeoutMs > 0 && lookupTimeoutMs > 0 && timeoutMs + lookupTimeoutMs <= longestAttemptMs)) {
    throw new RangeError(
      `timeoutMs and lookupTimeoutMs must be positive and together at most ${longestAttemptMs} ms, got ${timeoutMs} and ${lookupTimeoutMs}`,
    );
  }
  // From plain JavaScript an environment variable's "false" or "0" would be true here, and turn
  // the refusal of private targets off.
  if (typeof allowInsecure !== 'boolean') {
    throw new TypeError(
      `httpCallbacks: allowInsecure must be true or false, got ${JSON.stringify(allowInsecure)}`,
    );
  }
  if (typeof resolver !== 'object' || resolver === null || typeof resolver.resolve !== 'function') {
    throw new TypeError(
      'httpCallbacks: resolver must have resolve(hostname), answering the addresses of a host',
    );
  }
  if (ca !== undefined) checkCertificateAuthorities(ca);

  async function send(attempt: Parameters<CallbackTransport['send']>[0]): Promise<CallbackAttemptResult> {
    let addresses: string[];
    try {
      addresses = await checkCallbackTarget(attempt.url, { resolver, allowInsecure, lookupTimeoutMs });
    } catch (error) {
      const reason = isNotifyError(error) ? error.details : String(error);
      // How a lookup failed, which a refusal names only under the development option (so that no
      // organization learns which internal names exist), goes to the operator's log alone.
      return !allowInsecure && isNotifyError(error) && error.cause !== undefined
        ? {
            outcome: 'failed',
            status: null,
            error: `target refused: ${reason}`,
            retryAfterMs: null,
            cause: String(error.cause),
          }
        : { outcome: 'failed', status: null, error: `target refused: ${reason}`, retryAfterMs: null };
    }
    const signature = signCallback(attempt.secret, {
      id: attempt.webhookId,
      timestamp: attempt.timestamp,
      body: attempt.body,
    });
    const dispatcher = new Agent({
      connect: {
        lookup: pinnedLookup(addresses),
        timeout: timeoutMs,
        ...(ca === undefined ? {} : { ca: [ca].flat() }),
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      pipelining: 0,
    });
    try {
      const response = await request(attempt.url, {
        method: 'POST',
        dispatcher,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'chat-notify-callbacks/1',
          'webhook-id': attempt.webhookId,
          'webhook-timestamp': String(attempt.timestamp),
          'webhook-signature': signature,
        },
        body: attempt.body,
      });
      await response.body.dump();
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { outcome: 'delivered', status };
      if (status === 410) return { outcome: 'gone', status };
      return {
        outcome: 'failed',
        status,
        error: status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`,
        retryAfterMs: parseRetryAfter(response.headers['retry-after'], Date.now()),
      };
    } catch (error) {
      return { outcome: 'failed', status: null, error: String(error), retryAfterMs: null };
    } finally {
      await dispatcher.destroy().catch(() => undefined);
    }
  }

  return { resolver, allowInsecure, send };
}
