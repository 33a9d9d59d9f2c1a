import {
  type AuthConfiguration,
  authorizeJWT,
  type Request,
  type WebResponse,
} from '@microsoft/agents-hosting';
import { keyFetchGuard, signingKeyOf } from './key-fetch-guard.js';

/** The claims of a validated token that the transport reads. */
export interface ActivityClaims {
  /** The service URL the token was issued for; the activity must name the same. */
  serviceurl?: unknown;
  [claim: string]: unknown;
}

/** The verdict on an activity's token: its claims, or why it is refused (the `details` of a 401). */
export type TokenVerdict = { ok: true; claims: ActivityClaims } | { ok: false; details: string };

/** Checks the `Authorization` header of a request to the activity endpoint. */
export type ActivityTokenVerifier = (
  method: string,
  authorization: string | undefined,
) => Promise<TokenVerdict>;

/** Where the tokens of activities come from. */
export interface InboundAuthSettings {
  /** The bot's app id: the audience every token must name. */
  appId: string;
  /** The tenant of the bot's app registration. */
  appTenantId: string;
  /** Microsoft Entra's authority (`https://login.microsoftonline.com`); its signing keys are at `/<tenant>/discovery/v2.0/keys`. */
  authority: string;
}

/**
 * The SDK's `authorizeJWT`, run on a plain request and response, so that any framework can use it:
 * the signature against the published keys (Bot Framework's for tokens issued by
 * `https://api.botframework.com`, the authority's otherwise), RS256 only, the audience (the app id),
 * the expiry (five minutes of clock skew, the SDK's choice; a token without one is refused) and the
 * issuer (Bot Framework's, or Entra's for the app's tenant). A missing or malformed header, and
 * every failure, is a refusal.
 */
export function activityTokenVerifier(settings: InboundAuthSettings): ActivityTokenVerifier {
  const connection: AuthConfiguration = {
    clientId: settings.appId,
    tenantId: settings.appTenantId,
    authority: settings.authority,
    validateIssuer: true,
  };
  // An explicit connection: without one the SDK would fill its settings in from environment variables.
  const middleware = authorizeJWT({
    ...connection,
    connections: new Map([['serviceConnection', connection]]),
  });

  const guard = keyFetchGuard();

  return async (method, authorization) => {
    if (authorization === undefined || authorization.trim() === '') {
      return { ok: false, details: 'Missing Authorization header' };
    }
    const signingKey = signingKeyOf(authorization);
    if (signingKey === null) return { ok: false, details: 'Invalid activity token: jwt malformed' };
    if (!guard.admits(signingKey)) {
      return { ok: false, details: 'Invalid activity token: signed with an unknown key; try again later' };
    }
    const request: Request = { method, headers: { authorization } };
    const refusal = { details: '' };
    const response: WebResponse = {
      headersSent: false,
      writableEnded: false,
      status() {
        return response;
      },
      setHeader() {
        return response;
      },
      send(body?: unknown) {
        refusal.details = refusalDetails(body);
        return response;
      },
      end() {
        return response;
      },
    };
    let passed = false;
    await middleware(request, response, () => {
      passed = true;
    });
    if (!passed || request.user === undefined) {
      return { ok: false, details: `Invalid activity token: ${refusal.details || 'unauthorized'}` };
    }
    guard.verified(signingKey);
    // The SDK takes a token without an expiry as one that never expires: one captured once would
    // serve for ever.
    if (typeof request.user.exp !== 'number') {
      return { ok: false, details: 'Invalid activity token: jwt has no expiry' };
    }
    return { ok: true, claims: request.user };
  };
}

/** Reasons that tell how the service reaches its key sets: none of the caller's business. */
const FETCH_FAILURE = /secret or public key|getaddrinfo|ENOTFOUND|ECONN|ETIMEDOUT|EAI_|socket|network|fetch/i;

/**
 * The SDK's reason, `{"jwt-auth-error": "jwt expired"}`, as one line of text, unless it is about
 * fetching a key set (`getaddrinfo ENOTFOUND …`): what was wrong with the token (`jwt expired`,
 * `Audience mismatch`) helps whoever set the bot up; how the network failed helps nobody outside.
 */
function refusalDetails(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'jwt-auth-error' in body) {
    const reason = String((body as Record<string, unknown>)['jwt-auth-error']);
    return FETCH_FAILURE.test(reason) ? 'the token could not be verified' : reason;
  }
  return 'unauthorized';
}

/**
 * Whether the token was issued for the service URL the activity names: a valid token captured from
 * one service must not make the transport send its own token, and messages, to another address.
 * Compared as URLs (scheme, host, port, path), ignoring trailing slashes; a token without the claim,
 * or a URL with a query, a fragment or user info (Teams never sends one), does not match.
 */
export function serviceUrlMatches(claims: ActivityClaims, serviceUrl: string): boolean {
  const claim = claims.serviceurl;
  if (typeof claim !== 'string') return false;
  const normalized = (value: string): string | null => {
    // The SDK appends paths to the URL as written: a query, a fragment or user info would stay in
    // every address it calls, and the URL is stored for the recipient's later messages.
    if (/[?#]/.test(value)) return null;
    try {
      const url = new URL(value);
      if (url.username !== '' || url.password !== '') return null;
      return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      return null;
    }
  };
  const expected = normalized(claim);
  return expected !== null && expected === normalized(serviceUrl);
}
