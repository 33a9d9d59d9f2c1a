import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  clientCredentialsTokenProvider,
  fixedTeamsTenants,
  type TeamsTokenProvider,
  teamsTransport,
} from '../../adapters/chat/teams/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { startFakeBotConnector } from '../support/fake-bot-connector.js';
import { type LocalOpenIdAuthority, startLocalOpenIdAuthority } from '../support/local-openid-authority.js';
import { testKeys, testSeed } from '../support/test-seed.js';

const appId = '00000000-0000-4000-8000-0000000a0003';
const appTenantId = '11111111-1111-4111-8111-111111111111';
const secret = 'app-password';

let authority: LocalOpenIdAuthority | undefined;

beforeAll(() => {
  for (const name of Object.keys(process.env)) if (/^connections/i.test(name)) delete process.env[name];
});

afterEach(async () => {
  await authority?.close();
  authority = undefined;
});

const tokenRequests = (local: LocalOpenIdAuthority) =>
  local.requests.filter((request) => request === `POST /${appTenantId}/oauth2/v2.0/token`).length;

describe('clientCredentialsTokenProvider', () => {
  it('gets a token from the token endpoint, and keeps it until five minutes before it expires', async () => {
    authority = await startLocalOpenIdAuthority({ tenantId: appTenantId, clients: { [appId]: secret } });
    let now = 0;
    const provider = clientCredentialsTokenProvider({
      tokenEndpoint: authority.tokenEndpoint,
      clientId: appId,
      clientSecret: secret,
      now: () => now,
    });
    const [first, concurrent] = await Promise.all([
      provider.getAccessToken('https://api.botframework.com'),
      provider.getAccessToken('https://api.botframework.com'),
    ]);
    expect(authority.issued(first)).toBe(true);
    expect(concurrent).toBe(first);
    now += 54 * 60_000;
    expect(await provider.getAccessToken('https://api.botframework.com')).toBe(first);
    expect(tokenRequests(authority)).toBe(1);
    now += 2 * 60_000;
    const renewed = await provider.getAccessToken('https://api.botframework.com');
    expect(renewed).not.toBe(first);
    expect(tokenRequests(authority)).toBe(2);
  });

  it('rejects when the endpoint refuses the credentials, and asks again next time', async () => {
    authority = await startLocalOpenIdAuthority({ tenantId: appTenantId, clients: { [appId]: secret } });
    const provider = clientCredentialsTokenProvider({
      tokenEndpoint: authority.tokenEndpoint,
      clientId: appId,
      clientSecret: 'wrong',
    });
    await expect(provider.getAccessToken('https://api.botframework.com')).rejects.toThrow('answered 401');
    await expect(provider.getAccessToken('https://api.botframework.com')).rejects.toThrow('answered 401');
    expect(tokenRequests(authority)).toBe(2);
  });

  it('forgets its tokens when told to: the next call gets a new one', async () => {
    authority = await startLocalOpenIdAuthority({ tenantId: appTenantId, clients: { [appId]: secret } });
    const provider = clientCredentialsTokenProvider({
      tokenEndpoint: authority.tokenEndpoint,
      clientId: appId,
      clientSecret: secret,
    });
    const first = await provider.getAccessToken('https://api.botframework.com');
    provider.forget();
    const second = await provider.getAccessToken('https://api.botframework.com');
    expect(second).not.toBe(first);
    expect(tokenRequests(authority)).toBe(2);
  });

  /** A transport whose tokens come from the local authority, with bob installed, and a send of `message` to him. */
  async function teamsWorld(
    acceptToken: (token: string, local: LocalOpenIdAuthority) => boolean,
    provider?: (local: LocalOpenIdAuthority) => TeamsTokenProvider,
  ) {
    authority = await startLocalOpenIdAuthority({ tenantId: appTenantId, clients: { [appId]: secret } });
    const local = authority;
    const tenantId = '55555555-5555-4555-8555-555555555555';
    const bob = { id: '29:bob', aadObjectId: 'aad-bob', name: 'Bob', email: 'bob@acme.test', tenantId };
    const connector = await startFakeBotConnector({
      appId,
      acceptToken: (token) => acceptToken(token, local),
      users: [bob],
    });
    const transport = teamsTransport({
      appId,
      appTenantId,
      authority: local.authority,
      tenants: fixedTeamsTenants({ acme: tenantId }),
      tokenProvider:
        provider?.(local) ??
        clientCredentialsTokenProvider({
          tokenEndpoint: local.tokenEndpoint,
          clientId: appId,
          clientSecret: secret,
        }),
      retry: { retries: 1, minDelayMs: 1, maxDelayMs: 10 },
    });
    const notifier = createNotifier({ storage: memoryStorage(), transports: [transport] });
    await notifier.seed(testSeed);
    for (const activity of connector.installActivities(bob.id)) {
      const response = await transport.routes[0]!.handle(
        {
          method: 'POST',
          path: '/teams/messages',
          query: new URLSearchParams(),
          headers: {
            authorization: `Bearer ${local.activityToken({ audience: appId, serviceUrl: connector.serviceUrl })}`,
          },
          body: new TextEncoder().encode(JSON.stringify(activity)),
          clientAddress: '127.0.0.1',
        },
        {},
      );
      expect(response.status).toBe(200);
    }
    const send = async (message: string) =>
      (
        await notifier.handle({
          method: 'POST',
          url: '/api/notify',
          headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
          body: [Buffer.from(JSON.stringify({ user_emails: ['bob@acme.test'], message }))],
          clientAddress: '127.0.0.1',
        })
      )?.status;
    const close = async () => {
      await notifier.stop();
      await connector.close();
    };
    return { local, bob, connector, send, close };
  }

  it('gives the transport tokens the Bot Connector accepts: every Microsoft endpoint can be local', async () => {
    const { bob, connector, send, close } = await teamsWorld((token, local) => local.issued(token));
    try {
      expect(await send('Hello')).toBe(200);
      expect(connector.messagesOf(bob.id)).toHaveLength(1);
      expect(connector.calls.every((call) => call.authorized)).toBe(true);
      expect(connector.violations).toEqual([]);
    } finally {
      await close();
    }
  });

  /** {@link teamsWorld} whose Bot Connector refuses, once `revoke` is called, every token used so far. */
  async function revocableWorld() {
    const used = new Set<string>();
    const revoked = new Set<string>();
    const world = await teamsWorld((token, issuer) => {
      used.add(token);
      return issuer.issued(token) && !revoked.has(token);
    });
    const revoke = () => {
      for (const token of used) revoked.add(token);
    };
    return { ...world, revoke };
  }

  it('gets a new token when the Bot Connector refuses the one kept (401), and sends with it', async () => {
    const { local, bob, connector, send, close, revoke } = await revocableWorld();
    try {
      expect(await send('one')).toBe(200);
      revoke();
      expect(await send('two')).toBe(200);
      expect(connector.messagesOf(bob.id)).toHaveLength(2);
      expect(tokenRequests(local)).toBe(2);
      expect(connector.violations).toEqual(['send: called without an accepted bearer token']);
    } finally {
      await close();
    }
  });

  it('drops the tokens once for calls refused together: a later refusal keeps the new token', async () => {
    const { local, bob, connector, send, close, revoke } = await revocableWorld();
    try {
      expect(await send('one')).toBe(200);
      revoke();
      // Both sends carry the revoked token; the refusal of the held one comes back after the other
      // was refused, got a new token and was sent with it.
      const release = connector.hold('send');
      const both = Promise.all([send('two'), send('three')]);
      while (connector.messagesOf(bob.id).length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      release();
      expect(await both).toEqual([200, 200]);
      expect(connector.messagesOf(bob.id)).toHaveLength(3);
      expect(tokenRequests(local)).toBe(2);
    } finally {
      await close();
    }
  });

  it('fails the delivery when the Bot Connector refuses a new token too: one more try, not a loop', async () => {
    let refusing = false;
    const { local, bob, connector, send, close } = await teamsWorld(
      (token, issuer) => issuer.issued(token) && !refusing,
    );
    try {
      expect(await send('one')).toBe(200);
      refusing = true;
      const sendsBefore = connector.calls.filter((call) => call.operation === 'send').length;
      expect(await send('two')).toBe(500);
      expect(connector.calls.filter((call) => call.operation === 'send').length - sendsBefore).toBe(2);
      expect(tokenRequests(local)).toBe(2);
      expect(connector.messagesOf(bob.id)).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('makes no second try of a refused call when the provider has nothing to forget', async () => {
    let refusing = false;
    const { bob, connector, send, close } = await teamsWorld(
      (token) => token === 'fixed' && !refusing,
      () => ({ getAccessToken: () => Promise.resolve('fixed') }),
    );
    try {
      expect(await send('one')).toBe(200);
      refusing = true;
      const sendsBefore = connector.calls.filter((call) => call.operation === 'send').length;
      expect(await send('two')).toBe(500);
      expect(connector.calls.filter((call) => call.operation === 'send').length - sendsBefore).toBe(1);
      expect(connector.messagesOf(bob.id)).toHaveLength(1);
    } finally {
      await close();
    }
  });
});
