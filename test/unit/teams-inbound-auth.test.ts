import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedTeamsTenants, teamsTransport } from '../../adapters/chat/teams/index.js';
import { keyFetchGuard, signingKeyOf } from '../../adapters/chat/teams/key-fetch-guard.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { HttpResponse, Route } from '../../core/http/types.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { type FakeBotConnector, startFakeBotConnector } from '../support/fake-bot-connector.js';
import { type LocalOpenIdAuthority, startLocalOpenIdAuthority } from '../support/local-openid-authority.js';

const appId = '00000000-0000-4000-8000-0000000a0001';
const appTenantId = '11111111-1111-4111-8111-111111111111';
const tenantId = '22222222-2222-4222-8222-222222222222';
const alice = {
  id: '29:alice',
  aadObjectId: 'aad-alice',
  name: 'Alice',
  email: 'alice@acme.test',
  tenantId,
};

let authority: LocalOpenIdAuthority;
let connector: FakeBotConnector;
let route: Route;

/** The activity route of a connected transport of its own (its own guard of signing keys). */
function connectedRoute(authorityUrl = authority.authority): Route {
  const transport = teamsTransport({
    appId,
    appTenantId,
    authority: authorityUrl,
    tenants: fixedTeamsTenants({ acme: tenantId }),
    tokenProvider: { getAccessToken: async () => 'outbound' },
  });
  transport.connect({
    click: async () => 'accepted',
    listUsers: async () => [],
    copies: async () => [],
    view: async () => null,
    state: scopedTransportState(memoryStorage().transportState, 'teams'),
  });
  const [first] = transport.routes;
  if (!first) throw new Error('no route');
  return first;
}

beforeAll(async () => {
  for (const name of Object.keys(process.env)) if (/^connections/i.test(name)) delete process.env[name];
  authority = await startLocalOpenIdAuthority({ tenantId: appTenantId });
  connector = await startFakeBotConnector({
    appId,
    acceptToken: (token) => token === 'outbound',
    users: [alice],
  });
  route = connectedRoute();
});

afterAll(async () => {
  await Promise.all([connector.close(), authority.close()]);
});

const postTo = (target: Route, authorization: string | undefined, body: unknown): Promise<HttpResponse> =>
  target.handle(
    {
      method: 'POST',
      path: '/teams/messages',
      query: new URLSearchParams(),
      headers: authorization === undefined ? {} : { authorization },
      body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
      clientAddress: '127.0.0.1',
    },
    {},
  );

const post = (authorization: string | undefined, body: unknown) => postTo(route, authorization, body);

const good = () => authority.activityToken({ audience: appId, serviceUrl: connector.serviceUrl });

/** A token whose payload was changed after it was signed: `aud` swapped, signature kept. */
function tampered(): string {
  const [header, payload, signature] = authority
    .activityToken({ audience: 'another-app', serviceUrl: connector.serviceUrl })
    .split('.');
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
  return [
    header,
    Buffer.from(JSON.stringify({ ...claims, aud: appId })).toString('base64url'),
    signature,
  ].join('.');
}

function unsigned(): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: authority.issuer, aud: appId, exp: now + 600, serviceurl: connector.serviceUrl })}.`;
}

function signedByAnotherKey(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const now = Math.floor(Date.now() / 1000);
  return authority.sign(
    { iss: authority.issuer, aud: appId, exp: now + 600, serviceurl: connector.serviceUrl },
    { header: { alg: 'RS256', typ: 'JWT', kid: 'local-authority-key-1' }, key: privateKey },
  );
}

describe('POST /teams/messages: the activity token is checked before anything else', () => {
  const cases: [string, () => string | undefined][] = [
    ['no Authorization header', () => undefined],
    ['another scheme', () => `Basic ${Buffer.from('a:b').toString('base64')}`],
    [
      'a token for another app (audience)',
      () =>
        `Bearer ${authority.activityToken({ audience: 'another-app', serviceUrl: connector.serviceUrl })}`,
    ],
    [
      'an expired token',
      () =>
        `Bearer ${authority.activityToken({ audience: appId, serviceUrl: connector.serviceUrl, expiresInSeconds: -600 })}`,
    ],
    ['an unsigned token (alg none)', () => `Bearer ${unsigned()}`],
    ['a tampered token', () => `Bearer ${tampered()}`],
    ['a token signed by another key', () => `Bearer ${signedByAnotherKey()}`],
    [
      'a token from another issuer',
      () =>
        `Bearer ${authority.activityToken({ audience: appId, serviceUrl: connector.serviceUrl, issuer: 'https://evil.test/v2.0' })}`,
    ],
    ['a token without the serviceurl claim', () => `Bearer ${authority.activityToken({ audience: appId })}`],
    [
      'a token without an expiry',
      () =>
        `Bearer ${authority.sign({ iss: authority.issuer, aud: appId, serviceurl: connector.serviceUrl })}`,
    ],
    [
      'a token for another service URL',
      () =>
        `Bearer ${authority.activityToken({ audience: appId, serviceUrl: 'https://smba.trafficmanager.net/emea/' })}`,
    ],
  ];

  it.each(cases)(
    'refuses %s with 401 in the error shape and a Bearer challenge, and does nothing',
    async (_name, authorization) => {
      const [installation] = connector.installActivities(alice.id);
      const before = connector.calls.length;
      const given = authorization();
      const response = await post(given, installation);
      expect(response.status).toBe(401);
      // RFC 6750 §3.1: an error code for a bearer token that came, none without one.
      expect(response.headers['www-authenticate']).toBe(
        given?.startsWith('Bearer ') ? 'Bearer error="invalid_token"' : 'Bearer',
      );
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(response.body) as { status: string; details: string };
      expect(body.status).toBe('error');
      expect(body.details).not.toBe('');
      expect(connector.calls.length).toBe(before);
    },
  );

  it.each([
    ['a query', (url: string) => `${url}?x=`],
    ['an empty query', (url: string) => `${url}?`],
    ['a fragment', (url: string) => `${url}#x`],
    ['user info', (url: string) => url.replace('://', '://evil:x@')],
  ])(
    "refuses with 401 an activity whose service URL adds %s to the token's, and does nothing",
    async (_name, altered) => {
      const [installation] = connector.installActivities(alice.id);
      const before = connector.calls.length;
      const response = await post(`Bearer ${good()}`, {
        ...installation,
        serviceUrl: altered(connector.serviceUrl),
      });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(JSON.parse(response.body)).toEqual({
        status: 'error',
        details: 'The activity token was issued for another service URL',
      });
      expect(connector.calls.length).toBe(before);
    },
  );

  it('answers 401, not 400, to a malformed body with a bad token: the body is not read first', async () => {
    const response = await post('Bearer not-a-jwt', '{ not json');
    expect(response.status).toBe(401);
  });

  it('answers 400 in the error shape to a malformed body with a good token', async () => {
    const response = await post(`Bearer ${good()}`, '{ not json');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ status: 'error' });
  });

  it('takes an activity with a good token, and reads the roster of its user', async () => {
    const [installation] = connector.installActivities(alice.id);
    const before = connector.callsTo('member').length;
    const response = await post(`Bearer ${good()}`, installation);
    expect(response.status).toBe(200);
    expect(connector.callsTo('member').length).toBe(before + 1);
    expect(connector.violations).toEqual([]);
  });

  it('answers 503 to a good activity before the notifier connects the transport', async () => {
    const unconnected = teamsTransport({
      appId,
      appTenantId,
      authority: authority.authority,
      tenants: fixedTeamsTenants({ acme: tenantId }),
      tokenProvider: { getAccessToken: async () => 'outbound' },
    });
    const [installation] = connector.installActivities(alice.id);
    const response = await unconnected.routes[0]!.handle(
      {
        method: 'POST',
        path: '/teams/messages',
        query: new URLSearchParams(),
        headers: { authorization: `Bearer ${good()}` },
        body: new TextEncoder().encode(JSON.stringify(installation)),
        clientAddress: '127.0.0.1',
      },
      {},
    );
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
  });
});

describe('POST /teams/messages: what a refused token costs and tells', () => {
  /** A well-formed token naming the key `kid` of `issuer`, signed by a key the authority never published. */
  const madeUp = (kid: string, issuer = authority.issuer) => {
    const now = Math.floor(Date.now() / 1000);
    return authority.sign(
      { iss: issuer, aud: appId, exp: now + 600, serviceurl: connector.serviceUrl },
      { header: { alg: 'RS256', typ: 'JWT', kid }, key: stranger },
    );
  };
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const fetches = () => authority.requests.filter((line) => line.endsWith('/discovery/v2.0/keys')).length;

  it('fetches the key set at most 60 times a minute for tokens naming keys it does not know, and takes good ones on', async () => {
    const target = connectedRoute();
    const [installation] = connector.installActivities(alice.id);
    expect((await postTo(target, `Bearer ${good()}`, installation)).status).toBe(200);
    const before = fetches();
    for (let index = 0; index < 70; index++) {
      expect((await postTo(target, `Bearer ${madeUp(`made-up-${index}`)}`, installation)).status).toBe(401);
    }
    expect(fetches() - before).toBeGreaterThan(0);
    expect(fetches() - before).toBeLessThanOrEqual(60);
    expect((await postTo(target, `Bearer ${good()}`, installation)).status).toBe(200);
  });

  it('refuses tokens that name no key at once, costing the keys a restart has yet to learn nothing', async () => {
    const target = connectedRoute();
    const [installation] = connector.installActivities(alice.id);
    const before = fetches();
    for (let index = 0; index < 100; index++) {
      const answer = await postTo(target, 'Bearer junk', installation);
      expect(JSON.parse(answer.body)).toEqual({
        status: 'error',
        details: 'Invalid activity token: jwt malformed',
      });
    }
    expect(fetches()).toBe(before);
    expect((await postTo(target, `Bearer ${good()}`, installation)).status).toBe(200);
  });

  it('names a key by its issuer and key id: a known key id under another issuer is a key it does not know', () => {
    const good1 = good();
    const { kid } = JSON.parse(Buffer.from(good1.split('.')[0] ?? '', 'base64url').toString('utf8')) as {
      kid: string;
    };
    const known = signingKeyOf(`Bearer ${good1}`);
    const elsewhere = signingKeyOf(`Bearer ${madeUp(kid, 'https://api.botframework.com')}`);
    expect(known).toBe(`${authority.issuer} ${kid}`);
    expect(elsewhere).toBe(`https://api.botframework.com ${kid}`);
    let now = 0;
    const guard = keyFetchGuard(2, () => now);
    guard.verified(known ?? '');
    for (let check = 0; check < 5; check++) expect(guard.admits(known ?? '')).toBe(true);
    expect([
      guard.admits(elsewhere ?? ''),
      guard.admits(elsewhere ?? ''),
      guard.admits(elsewhere ?? ''),
    ]).toEqual([true, true, false]);
    now += 30_000;
    expect(guard.admits(elsewhere ?? '')).toBe(true);
  });

  it('tells what was wrong with the token, as the SDK says it', async () => {
    const target = connectedRoute();
    const [installation] = connector.installActivities(alice.id);
    const answer = await postTo(
      target,
      `Bearer ${authority.activityToken({ audience: 'another-app', serviceUrl: connector.serviceUrl })}`,
      installation,
    );
    expect(JSON.parse(answer.body).details).not.toBe(
      'Invalid activity token: the token could not be verified',
    );
  });

  it('does not tell the caller why the key set could not be fetched', async () => {
    // An authority whose port refuses connections: fetching its key set fails with ECONNREFUSED.
    const unreachable = 'http://127.0.0.1:1';
    const target = connectedRoute(unreachable);
    const token = authority.activityToken({
      audience: appId,
      serviceUrl: connector.serviceUrl,
      issuer: `${unreachable}/${appTenantId}/v2.0`,
    });
    const [installation] = connector.installActivities(alice.id);
    const response = await postTo(target, `Bearer ${token}`, installation);
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toEqual({
      status: 'error',
      details: 'Invalid activity token: the token could not be verified',
    });
  });
});
