import { describe, expect, it } from 'vitest';
import { chatTransports } from '../../examples/standalone/chat-transports.js';
import { readConfig } from '../../examples/standalone/config.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The warnings the start logs about the settings of `environment`. */
async function warningsFor(environment: NodeJS.ProcessEnv): Promise<string[]> {
  const warnings: string[] = [];
  const logger = { ...quiet, warn: (message: string) => void warnings.push(message) };
  await chatTransports(readConfig(environment), { organizations: [] }, logger);
  return warnings;
}

describe('variables named like settings that are none (README.md#the-standalone-service)', () => {
  it('are listed, and only those with a prefix of the settings', () => {
    const config = readConfig({
      NOTIFY_STORGE: 'redis://127.0.0.1:6379',
      NOTIFY_RETENTON_DAYS: '1',
      SLACK_SIGNING_SECERT: 's',
      TEAMS_APPID: 'a',
      NOTIFY_STORAGE: 'memory',
      PATH: '/usr/bin',
      NODE_ENV: 'production',
      MY_NOTIFY_THING: 'x',
    });
    expect(config.unreadVariables).toEqual([
      'NOTIFY_RETENTON_DAYS',
      'NOTIFY_STORGE',
      'SLACK_SIGNING_SECERT',
      'TEAMS_APPID',
    ]);
    expect(config.NOTIFY_STORAGE).toBe('memory');
  });

  it('are warned of at start, each by name', async () => {
    const warnings = await warningsFor({
      NOTIFY_STORGE: 'redis://127.0.0.1:6379',
      NOTIFY_RETENTON_DAYS: '1',
    });
    expect(warnings).toEqual([
      'NOTIFY_RETENTON_DAYS is no setting of the service: ignoring it (misspelled?)',
      'NOTIFY_STORGE is no setting of the service: ignoring it (misspelled?)',
    ]);
  });

  it('leave the settings the service reads unwarned of', async () => {
    expect(
      await warningsFor({
        NOTIFY_STORAGE: 'memory',
        NOTIFY_RETENTION_DAYS: '1',
        NOTIFY_INBOX: '1',
        // Read by a client of the service sharing the environment, as the client's docs suggest.
        NOTIFY_API_KEY: 'cnk_example',
        HOME: '/root',
      }),
    ).toEqual([]);
  });
});
