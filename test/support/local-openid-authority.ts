/**
 * A local stand-in for Microsoft Entra, the OpenID authority of Teams bots, which cannot be reached
 * from here (no internet). Served on 127.0.0.1 the way Entra serves a tenant:
 *
 * - `GET /<tenant>/v2.0/.well-known/openid-configuration`: the OpenID metadata (issuer, keys, token
 *   endpoint);
 * - `GET /<tenant>/discovery/v2.0/keys`: the JSON Web Key Set, where the Agents SDK's `authorizeJWT`
 *   fetches the keys of tokens this authority issues;
 * - `POST /<tenant>/oauth2/v2.0/token`: the client-credentials grant, for the bot's outbound tokens.
 *
 * It signs RS256 tokens with a key pair made by `node:crypto` at start, so a test can hand the
 * transport activity tokens as the Bot Connector would send them, and bad ones of every kind.
 */
import { createSign, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options of {@link startLocalOpenIdAuthority}. */
export interface LocalOpenIdAuthorityOptions {
  /** The tenant it serves (the bot's app registration tenant). */
  tenantId: string;
  /** Apps allowed to get tokens: client id to client secret. */
  clients?: Readonly<Record<string, string>>;
  /** Lifetime of the access tokens it issues (seconds, default 3600). */
  tokenLifetimeSeconds?: number;
}

/** What an activity token says: the defaults are those of a good token. */
export interface ActivityTokenClaims {
  /** The bot's app id. */
  audience: string;
  /** The `serviceurl` claim: the service URL the activity will name. */
  serviceUrl?: string;
  /** Seconds from now to the expiry (negative: already expired); default 3600. */
  expiresInSeconds?: number;
  /** Default: this authority's issuer. */
  issuer?: string;
}

/** The authority, running. */
export interface LocalOpenIdAuthority {
  /** What to pass as the transport's `authority`: `http://127.0.0.1:<port>`. */
  authority: string;
  tenantId: string;
  /** `<authority>/<tenant>/v2.0`: the `iss` of the tokens it issues. */
  issuer: string;
  tokenEndpoint: string;
  /** Signs `claims` as an RS256 JWT with this authority's key, or with `key` under `header`. */
  sign(
    claims: Record<string, unknown>,
    options?: { header?: Record<string, unknown>; key?: KeyObject },
  ): string;
  /** A token as the Bot Connector sends with an activity: a good one unless the claims say otherwise. */
  activityToken(claims: ActivityTokenClaims): string;
  /** Whether the token endpoint issued this access token (and it has not expired). */
  issued(accessToken: string): boolean;
  /** Requests served, as `METHOD path`. */
  requests: string[];
  close(): Promise<void>;
}

const keyId = 'local-authority-key-1';

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Starts the authority on an ephemeral port of 127.0.0.1. */
export async function startLocalOpenIdAuthority(
  options: LocalOpenIdAuthorityOptions,
): Promise<LocalOpenIdAuthority> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: keyId, use: 'sig', alg: 'RS256' };
  const issuedTokens = new Map<string, number>();
  const requests: string[] = [];
  const tenant = options.tenantId;
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  let origin = '';

  const sign: LocalOpenIdAuthority['sign'] = (claims, signing = {}) => {
    const header = signing.header ?? { alg: 'RS256', typ: 'JWT', kid: keyId };
    const input = `${base64url(header)}.${base64url(claims)}`;
    const signature = createSign('RSA-SHA256')
      .update(input)
      .sign(signing.key ?? privateKey)
      .toString('base64url');
    return `${input}.${signature}`;
  };

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0] ?? '';
    requests.push(`${req.method} ${path}`);
    if (req.method === 'GET' && path === `/${tenant}/v2.0/.well-known/openid-configuration`) {
      reply(res, 200, {
        issuer: `${origin}/${tenant}/v2.0`,
        jwks_uri: `${origin}/${tenant}/discovery/v2.0/keys`,
        token_endpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
        id_token_signing_alg_values_supported: ['RS256'],
      });
    } else if (req.method === 'GET' && path === `/${tenant}/discovery/v2.0/keys`) {
      reply(res, 200, { keys: [jwk] });
    } else if (req.method === 'POST' && path === `/${tenant}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const clientId = form.get('client_id') ?? '';
      if (form.get('grant_type') !== 'client_credentials' || !form.get('scope')) {
        reply(res, 400, { error: 'invalid_request' });
      } else if (
        options.clients?.[clientId] === undefined ||
        options.clients[clientId] !== form.get('client_secret')
      ) {
        reply(res, 401, { error: 'invalid_client' });
      } else {
        const token = `local-access-${randomBytes(16).toString('hex')}`;
        issuedTokens.set(token, Date.now() + lifetime * 1000);
        reply(res, 200, { token_type: 'Bearer', expires_in: lifetime, access_token: token });
      }
    } else {
      reply(res, 404, { error: 'not_found' });
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}/${tenant}/v2.0`;

  return {
    authority: origin,
    tenantId: tenant,
    issuer,
    tokenEndpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
    sign,
    activityToken(claims) {
      const now = Math.floor(Date.now() / 1000);
      return sign({
        iss: claims.issuer ?? issuer,
        aud: claims.audience,
        iat: now - 10,
        nbf: now - 10,
        exp: now + (claims.expiresInSeconds ?? 3600),
        ...(claims.serviceUrl === undefined ? {} : { serviceurl: claims.serviceUrl }),
      });
    },
    issued(accessToken) {
      const expiresAt = issuedTokens.get(accessToken);
      return expiresAt !== undefined && Date.now() < expiresAt;
    },
    requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
