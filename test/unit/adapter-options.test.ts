import { describe, expect, it } from 'vitest';
import { slackTransport } from '../../adapters/chat/slack/index.js';
import { teamsTransport } from '../../adapters/chat/teams/index.js';
import { type KoaNotifier, notifyMiddleware } from '../../hosts/koa/index.js';

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

  it('Slack retry settings that are not whole counts or milliseconds of 0 or more', () => {
    const transport = (retry: object) => () =>
      slackTransport({ signingSecret: 'secret', installation: () => null, retry });
    expect(transport({ maxRetryAfterMs: Number.NaN })).toThrow(
      'slackTransport: retry.maxRetryAfterMs must be a number of milliseconds, 0 or more, got NaN',
    );
    expect(transport({ minDelayMs: -1 })).toThrow('retry.minDelayMs must be a number of milliseconds');
    expect(transport({ maxDelayMs: Number.POSITIVE_INFINITY })).toThrow('retry.maxDelayMs');
    expect(transport({ retries: 1.5 })).toThrow(
      'slackTransport: retry.retries must be a whole number, 0 or more, got 1.5',
    );
    expect(transport({ maxRetryAfterMs: '60000' })).toThrow('retry.maxRetryAfterMs');
    expect(transport({ retries: 0, minDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 })).not.toThrow();
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

  it('a Koa prefix that does not start with a slash', () => {
    const notifier: KoaNotifier = { handle: async () => null };
    expect(() => notifyMiddleware(notifier, { prefix: 'chat' })).toThrow(
      'notifyMiddleware: prefix must start with "/", got "chat"',
    );
    expect(() => notifyMiddleware(notifier, { prefix: '/chat/' })).not.toThrow();
  });
});
