import type { AuthConfiguration, AuthProvider, Connections } from '@microsoft/agents-hosting';
import { z } from 'zod';
import { checkHttpUrlOption } from '../../../core/adapter-kit.js';

/**
 * Where the transport's calls to the Bot Connector service get their bearer token. By default the
 * SDK's MSAL client gets it from Microsoft Entra with the app id and password; give one of these to
 * use another source (a token endpoint of your own, a fixed token in tests).
 */
export interface TeamsTokenProvider {
  /** A bearer token for `scope` (`https://api.botframework.com`), fresh enough to be used now. */
  getAccessToken(scope: string): Promise<string>;
  /**
   * Drops every token kept: the Bot Connector refused one (`401`: revoked before it expired), so the
   * next {@link getAccessToken} must get a new one. The refused call is then made once more. A
   * provider that keeps no tokens leaves it out, and a `401` then fails the call at once.
   */
  forget?(): void;
}

/** Settings of {@link clientCredentialsTokenProvider}. */
export interface ClientCredentialsOptions {
  /** The OAuth 2.0 token endpoint: `https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token`. */
  tokenEndpoint: string;
  /** The bot's app (client) id. */
  clientId: string;
  /** The bot's client secret; never logged. */
  clientSecret: string;
  /** Longest wait for the token endpoint (ms, default 10,000). */
  timeoutMs?: number;
  /** Source of time for the token's expiry; the wall clock by default. */
  now?: () => number;
}

const tokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().positive(),
});

/** A token is renewed this long before it expires, so that a call never carries one that lapses on the way. */
const renewBeforeMs = 5 * 60_000;

/**
 * Tokens from an OAuth 2.0 client-credentials grant (RFC 6749 §4.4) at `tokenEndpoint`, the way
 * Microsoft Entra issues them to a bot, cached per scope until five minutes before they expire, or
 * until the Bot Connector refuses one. Concurrent calls for one scope share one request. Lets every
 * Microsoft endpoint be pointed at a local server: the SDK's MSAL client accepts only `https:`
 * authorities.
 */
export function clientCredentialsTokenProvider(
  options: ClientCredentialsOptions,
): Required<TeamsTokenProvider> {
  checkHttpUrlOption('clientCredentialsTokenProvider', 'tokenEndpoint', options.tokenEndpoint);
  const now = options.now ?? Date.now;
  const cached = new Map<string, { token: string; renewAt: number }>();
  const pending = new Map<string, Promise<string>>();

  const fetchToken = async (scope: string): Promise<string> => {
    const response = await fetch(options.tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: options.clientId,
        client_secret: options.clientSecret,
        scope: scope.endsWith('/.default') ? scope : `${scope.replace(/\/+$/, '')}/.default`,
      }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      redirect: 'error',
    });
    if (!response.ok) throw new Error(`The token endpoint answered ${response.status}`);
    const answer = tokenAnswerSchema.safeParse(await response.json().catch(() => null));
    if (!answer.success) throw new Error('The token endpoint answered without an access token');
    const { access_token: token, expires_in: expiresIn } = answer.data;
    cached.set(scope, { token, renewAt: now() + Math.max(0, expiresIn * 1000 - renewBeforeMs) });
    return token;
  };

  return {
    getAccessToken(scope) {
      const entry = cached.get(scope);
      if (entry !== undefined && now() < entry.renewAt) return Promise.resolve(entry.token);
      let request = pending.get(scope);
      if (request === undefined) {
        request = fetchToken(scope).finally(() => pending.delete(scope));
        pending.set(scope, request);
      }
      return request;
    },
    forget() {
      cached.clear();
    },
  };
}

const unsupported = (what: string) => () =>
  Promise.reject(new Error(`${what} is not available to the Teams transport's token provider`));

/**
 * The SDK's connection manager over one {@link TeamsTokenProvider}: every connector call, whatever
 * its service URL, carries a token from it.
 */
export function connectionsOf(provider: TeamsTokenProvider, settings: AuthConfiguration): Connections {
  const authProvider: AuthProvider = {
    connectionSettings: settings,
    getAccessToken: (configOrScope: AuthConfiguration | string, scope?: string) =>
      provider.getAccessToken(typeof configOrScope === 'string' ? configOrScope : (scope ?? '')),
    getAgenticApplicationToken: unsupported('An agentic application token'),
    getAgenticInstanceToken: unsupported('An agentic instance token'),
    getAgenticUserToken: unsupported('An agentic user token'),
    acquireTokenOnBehalfOf: unsupported('An on-behalf-of token'),
  };
  return {
    getConnection: () => authProvider,
    getDefaultConnection: () => authProvider,
    getTokenProvider: () => authProvider,
    getTokenProviderFromActivity: () => authProvider,
    getDefaultConnectionConfiguration: () => settings,
  };
}
