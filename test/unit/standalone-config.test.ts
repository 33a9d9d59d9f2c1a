import { describe, expect, it } from 'vitest';
import { readConfig } from '../../examples/standalone/config.js';

describe('NOTIFY_RETENTION_DAYS', () => {
  it('keeps finished sends 30 days when unset or empty', () => {
    expect(readConfig({}).NOTIFY_RETENTION_DAYS).toBe(30);
    expect(readConfig({ NOTIFY_RETENTION_DAYS: '' }).NOTIFY_RETENTION_DAYS).toBe(30);
  });

  it('accepts whole and fractional days', () => {
    expect(readConfig({ NOTIFY_RETENTION_DAYS: '7' }).NOTIFY_RETENTION_DAYS).toBe(7);
    expect(readConfig({ NOTIFY_RETENTION_DAYS: '0.0001' }).NOTIFY_RETENTION_DAYS).toBe(0.0001);
  });

  it.each(['0', '-1', 'soon', '100000'])('refuses %s, naming the setting', (value) => {
    expect(() => readConfig({ NOTIFY_RETENTION_DAYS: value })).toThrow(/NOTIFY_RETENTION_DAYS/);
  });
});

describe('NOTIFY_SHUTDOWN_TIMEOUT_MS', () => {
  it('waits 25 s by default: longer than a callback attempt a stop lets finish (15 s, and 5 s of DNS)', () => {
    expect(readConfig({}).NOTIFY_SHUTDOWN_TIMEOUT_MS).toBe(25_000);
  });
});

describe('PORT', () => {
  it('listens on 3000 when unset or empty', () => {
    expect(readConfig({}).PORT).toBe(3000);
    expect(readConfig({ PORT: '' }).PORT).toBe(3000);
  });

  it('accepts 0 (a free port) to 65535', () => {
    expect(readConfig({ PORT: '0' }).PORT).toBe(0);
    expect(readConfig({ PORT: '65535' }).PORT).toBe(65535);
  });

  it.each(['65536', '-1', '80.5', '0x1004', '1e3', ' 80', 'http'])(
    'refuses %j, naming the setting and the rule',
    (value) => {
      expect(() => readConfig({ PORT: value })).toThrow(
        /port number from 0 to 65535, in decimal digits[\s\S]*PORT/,
      );
    },
  );
});

describe('the *_TIMEOUT_MS settings', () => {
  it.each(['NOTIFY_SHUTDOWN_TIMEOUT_MS', 'NOTIFY_HEADERS_TIMEOUT_MS', 'NOTIFY_REQUEST_TIMEOUT_MS'] as const)(
    '%s refuses more than a timer can wait (2147483647 ms), which would fire at once',
    (name) => {
      const longest = { NOTIFY_HEADERS_TIMEOUT_MS: '2147483647', NOTIFY_REQUEST_TIMEOUT_MS: '2147483647' };
      expect(readConfig({ ...longest, [name]: '2147483647' })[name]).toBe(2_147_483_647);
      expect(() => readConfig({ ...longest, [name]: '2147483648' })).toThrow(
        new RegExp(`at most 2147483647[\\s\\S]*${name}`),
      );
    },
  );
});

describe('the rate limits', () => {
  it.each(['NOTIFY_RATE_LIMIT_PER_KEY', 'NOTIFY_RATE_LIMIT_PER_ORGANIZATION'] as const)(
    '%s refuses a limit that lets nothing through, now or later',
    (name) => {
      expect(readConfig({ [name]: '1/0.5' })[name]).toEqual({ burst: 1, perSecond: 0.5 });
      for (const value of ['0/0', '0/5', '10/0']) {
        expect(() => readConfig({ [name]: value })).toThrow(
          new RegExp(`must let requests through[\\s\\S]*${name}`),
        );
      }
    },
  );
});
