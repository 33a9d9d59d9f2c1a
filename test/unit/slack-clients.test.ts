import { describe, expect, it } from 'vitest';
import { slackClients } from '../../adapters/chat/slack/clients.js';
import { silentLogger } from '../../core/index.js';

const clientsOf = () =>
  slackClients({
    apiUrl: 'http://127.0.0.1:9/api/',
    retry: {},
    requestTimeoutMs: 1_000,
    concurrency: 4,
    logger: silentLogger,
  });

describe('the Web API clients of the Slack transport', () => {
  it('keeps one client per workspace while its bot token stays the same', () => {
    const clientFor = clientsOf();
    const acme = clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-1' });
    expect(clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-1' })).toBe(acme);
    expect(clientFor({ teamId: 'T0GLOBEX', botToken: 'xoxb-globex-1' })).not.toBe(acme);
  });

  it('keeps the clients of the last two tokens of a workspace, and lets older ones go', () => {
    const clientFor = clientsOf();
    const first = clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-1' });
    const rotated = clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-2' });
    expect(rotated).not.toBe(first);
    expect(rotated.token).toBe('xoxb-acme-2');
    // Two organizations of the workspace whose installations hold either token keep their clients.
    for (let call = 0; call < 5; call += 1) {
      expect(clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-1' })).toBe(first);
      expect(clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-2' })).toBe(rotated);
    }
    clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-3' });
    // The oldest was let go: its token, were it used again, gets a client of its own.
    expect(clientFor({ teamId: 'T0ACME', botToken: 'xoxb-acme-1' })).not.toBe(first);
  });
});
