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
