import { describe, expect, it } from 'vitest';
import { type SlackTransportOptions, slackTransport } from '../../adapters/chat/slack/index.js';
import { clientCredentialsTokenProvider, teamsTransport } from '../../adapters/chat/teams/index.js';
import { createNotifier } from '../../core/index.js';
import { type ExpressNotifier, notifyRouter } from '../../hosts/express/index.js';
import { type KoaNotifier, notifyMiddleware } from '../../hosts/koa/index.js';

/** A Teams transport made with `options` over settings it can run with, as a function to expect on. */
const teamsWith = (options: object) => () =>
  teamsTransport({
    appId: 'app',
    appPassword: 'secret',
    appTenantId: 'tenant',
    tenants: { tenantOf: () => null, serves: () => true },
    ...options,
  });

/** What `process.env.X!` gives when X is unset: the type says string, the value is undefined. */
const unset = process.env.CHAT_NOTIFY_NEVER_SET as string;

describe('transports and hosts refuse options they could not run with, at creation', () => {
  it('a Slack signing secret that is unset or empty', () => {
    for (const signingSecret of [unset, '']) {
      expect(() => slackTransport({ signingSecret, installation: () => null })).toThrow(
        'slackTransport: signingSecret must be a non-empty string',
      );
    }
  });

  it('Slack numbers that are not whole counts or milliseconds it can run with', () => {
    const transport = (options: object) => () =>
      slackTransport({ signingSecret: 'secret', installation: () => null, ...options });
    expect(transport({ retry: { maxRetryAfterMs: Number.NaN } })).toThrow(
      'slackTransport: retry.maxRetryAfterMs must be a number of milliseconds from 0 to 2147483647, got NaN',
    );
    expect(transport({ retry: { minDelayMs: -1 } })).toThrow(
      'retry.minDelayMs must be a number of milliseconds',
    );
    expect(transport({ retry: { maxDelayMs: Number.POSITIVE_INFINITY } })).toThrow('retry.maxDelayMs');
    expect(transport({ retry: { retries: 1.5 } })).toThrow(
      'slackTransport: retry.retries must be a whole number, 0 or more, got 1.5',
    );
    expect(transport({ retry: { maxRetryAfterMs: '60000' } })).toThrow('retry.maxRetryAfterMs');
    for (const concurrency of [0, -1, 2.5, Number.NaN]) {
      expect(transport({ concurrency })).toThrow(
        'slackTransport: concurrency must be a whole number, 1 or more',
      );
    }
    for (const userCacheTtlMs of [0, -1, Number.NaN]) {
      expect(transport({ userCacheTtlMs })).toThrow(
        'slackTransport: userCacheTtlMs must be a number of milliseconds, more than 0',
      );
    }
    expect(transport({ requestTimeoutMs: -5 })).toThrow('slackTransport: requestTimeoutMs must be');
    // What a timer waits for ends at 2^31-1 ms (a longer one fires at once); a cache's lifetime does not.
    expect(transport({ retry: { maxRetryAfterMs: 3e9 } })).toThrow(
      'slackTransport: retry.maxRetryAfterMs must be a number of milliseconds from 0 to 2147483647, got 3000000000',
    );
    expect(transport({ requestTimeoutMs: 3e9 })).toThrow('requestTimeoutMs');
    expect(transport({ userCacheTtlMs: 30 * 24 * 60 * 60_000 })).not.toThrow();
    expect(
      transport({
        retry: { retries: 0, minDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 },
        concurrency: 1,
        userCacheTtlMs: 1,
        requestTimeoutMs: 1,
      }),
    ).not.toThrow();
    // undici reads a timeout of 0 as none at all: a Slack that never answers would hold a delivery for good.
    expect(transport({ requestTimeoutMs: 0 })).toThrow(
      'slackTransport: requestTimeoutMs must be a number of milliseconds from 1 to 2147483647, got 0',
    );
  });

  it('retry pauses whose first is longer than their longest, given or by default', () => {
    const slack = (retry: object) => () =>
      slackTransport({ signingSecret: 'secret', installation: () => null, retry });
    expect(slack({ minDelayMs: 5000, maxDelayMs: 10 })).toThrow(
      'slackTransport: retry.minDelayMs (5000) must not be above retry.maxDelayMs (10)',
    );
    expect(slack({ minDelayMs: 20_000 })).toThrow(
      'retry.minDelayMs (20000) must not be above retry.maxDelayMs (10000)',
    );
    expect(slack({ minDelayMs: 10, maxDelayMs: 10 })).not.toThrow();
    const teams = (retry: object) => teamsWith({ retry });
    expect(teams({ maxDelayMs: 500 })).toThrow(
      'teamsTransport: retry.minDelayMs (1000) must not be above retry.maxDelayMs (500)',
    );
    expect(teams({ minDelayMs: 500, maxDelayMs: 500 })).not.toThrow();
  });

  it.each([
    ['a URL without its scheme', 'localhost:3000/api/'],
    ['a path', '/api/'],
    ['another scheme', 'ftp://slack.example/api/'],
    ['no URL at all', 'slack.com api'],
  ])('a platform address that is %s', (_what, url) => {
    expect(() => slackTransport({ signingSecret: 's', installation: () => null, apiUrl: url })).toThrow(
      `slackTransport: apiUrl must be an absolute http: or https: URL, got ${url}`,
    );
    expect(teamsWith({ authority: url })).toThrow(
      `teamsTransport: authority must be an absolute http: or https: URL, got ${url}`,
    );
    expect(() =>
      clientCredentialsTokenProvider({ tokenEndpoint: url, clientId: 'app', clientSecret: 'secret' }),
    ).toThrow(
      `clientCredentialsTokenProvider: tokenEndpoint must be an absolute http: or https: URL, got ${url}`,
    );
  });

  it('platform addresses of http: (a local server) and https:', () => {
    expect(() =>
      slackTransport({ signingSecret: 's', installation: () => null, apiUrl: 'http://127.0.0.1:3999/api' }),
    ).not.toThrow();
    expect(() =>
      clientCredentialsTokenProvider({
        tokenEndpoint: 'https://login.microsoftonline.com/t/oauth2/v2.0/token',
        clientId: 'app',
        clientSecret: 'secret',
      }),
    ).not.toThrow();
  });

  it('Teams numbers that are not whole counts or milliseconds it can run with', () => {
    const transport = teamsWith;
    expect(transport({ requestTimeoutMs: 0 })).toThrow(
      'teamsTransport: requestTimeoutMs must be a number of milliseconds from 1 to 2147483647, got 0',
    );
    // A timer set for longer fires at once: every call would time out.
    expect(transport({ requestTimeoutMs: 3e9 })).toThrow('requestTimeoutMs must be a number of milliseconds');
    expect(transport({ retry: { retries: -1 } })).toThrow(
      'teamsTransport: retry.retries must be a whole number',
    );
    expect(transport({ retry: { maxDelayMs: Number.NaN } })).toThrow('teamsTransport: retry.maxDelayMs');
    expect(
      transport({ requestTimeoutMs: 1, retry: { retries: 0, minDelayMs: 0, maxDelayMs: 0 } }),
    ).not.toThrow();
  });

  it('a Teams app id that is unset or blank', () => {
    for (const appId of [unset, ' ']) {
      expect(() =>
        teamsTransport({
          appId,
          appPassword: 'secret',
          appTenantId: 'tenant',
          tenants: { tenantOf: () => null, serves: () => true },
        }),
      ).toThrow('teamsTransport: appId must be a non-empty string');
    }
  });

  it('a Teams app tenant that is unset or blank, and tenants that are no resolver', () => {
    const options = {
      appId: 'app',
      appPassword: 'secret',
      appTenantId: 'tenant',
      tenants: { tenantOf: () => null, serves: () => true },
    };
    for (const appTenantId of [unset, '', '  ']) {
      expect(() => teamsTransport({ ...options, appTenantId })).toThrow(
        'teamsTransport: appTenantId must be a non-empty string (the tenant of the app registration)',
      );
    }
    for (const tenants of [unset, null, { acme: 'tenant' }]) {
      expect(() => teamsTransport({ ...options, tenants: tenants as never })).toThrow(
        'teamsTransport: tenants must give each organization its tenant ({ tenantOf, serves }',
      );
    }
  });

  it('a Koa prefix that does not start with a slash', () => {
    const notifier: KoaNotifier = { handle: async () => null };
    expect(() => notifyMiddleware(notifier, { prefix: 'chat' })).toThrow(
      'notifyMiddleware: prefix must start with "/", got "chat"',
    );
    expect(() => notifyMiddleware(notifier, { prefix: '/chat/' })).not.toThrow();
    expect(() => notifyMiddleware(notifier, { prefix: 5 as unknown as string })).toThrow(
      'notifyMiddleware: prefix must be a path such as "/notifications", got number',
    );
  });

  it('a host given nothing to serve (an undefined notifier from plain JavaScript)', () => {
    for (const served of [undefined, {}, createNotifier]) {
      expect(() => notifyRouter(served as unknown as ExpressNotifier)).toThrow(
        'notifyRouter needs what it serves: a notifier (createNotifier(...)) or the account pages (accountPages(...))',
      );
      expect(() => notifyMiddleware(served as unknown as KoaNotifier)).toThrow(
        'notifyMiddleware needs what it serves',
      );
    }
  });

  it('a Slack transport without its options, or without the installation of each organization', () => {
    expect(() => slackTransport(undefined as unknown as SlackTransportOptions)).toThrow(
      'slackTransport needs its options: { signingSecret, installation }',
    );
    expect(() => slackTransport({ signingSecret: 'secret' } as SlackTransportOptions)).toThrow(
      "slackTransport: installation must be a function answering an organization's Slack workspace and bot token",
    );
  });
});
