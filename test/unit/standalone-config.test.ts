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

describe('a variable set to nothing', () => {
  it('reads as unset, but for HOST and the storage, seed and prefix: it gets its default', () => {
    const names = [
      'PORT',
      'NOTIFY_RATE_LIMIT_PER_KEY',
      'NOTIFY_RATE_LIMIT_PER_ORGANIZATION',
      'NOTIFY_RATE_LIMIT_KEY_CREATION',
      'LOG_LEVEL',
      'NOTIFY_ALLOW_INSECURE_CALLBACKS',
      'NOTIFY_TRUST_PROXY',
      'NOTIFY_INBOX',
      'NOTIFY_INBOX_HOSTS',
      'NOTIFY_WAIT_FOR_STORAGE',
      'NOTIFY_RETENTION_DAYS',
      'NOTIFY_SHUTDOWN_TIMEOUT_MS',
      'NOTIFY_HEADERS_TIMEOUT_MS',
      'NOTIFY_REQUEST_TIMEOUT_MS',
      'SLACK_SIGNING_SECRET',
      'SLACK_API_URL',
      'TEAMS_APP_ID',
      'TEAMS_APP_PASSWORD',
      'TEAMS_TENANT_ID',
      'TEAMS_AUTHORITY',
      'TEAMS_TOKEN_ENDPOINT',
    ];
    expect(readConfig(Object.fromEntries(names.map((name) => [name, ''])))).toEqual(readConfig({}));
  });

  it('keeps an empty HOST, which listens on every address, IPv6 too', () => {
    expect(readConfig({ HOST: '' }).HOST).toBe('');
  });

  it.each([
    ['NOTIFY_STORAGE', 'must not be empty'],
    ['NOTIFY_SEED', 'must name a seed file'],
    ['NOTIFY_REDIS_PREFIX', 'must not be empty'],
  ])('refuses an empty %s rather than run on its default', (name, rule) => {
    expect(() => readConfig({ [name]: '' })).toThrow(new RegExp(`${rule}[\\s\\S]*${name}`));
  });

  it.each([
    ['LOG_LEVEL', 'verbose', 'must be debug, info, warn or error'],
    ['NOTIFY_RETENTION_DAYS', '40000', 'must be at most 36500 (100 years)'],
    ['NOTIFY_RETENTION_DAYS', '0', 'must be more than 0'],
  ])('%s=%s is refused with its rule', (name, value, rule) => {
    expect(() => readConfig({ [name]: value })).toThrow(rule);
  });
});

describe('the URLs the service calls', () => {
  it.each(['SLACK_API_URL', 'TEAMS_AUTHORITY', 'TEAMS_TOKEN_ENDPOINT'] as const)(
    '%s takes http: and https: URLs, and refuses anything else, the scheme left off included',
    (name) => {
      // An http: authority needs a token endpoint beside it (below).
      const beside =
        name === 'TEAMS_AUTHORITY' ? { TEAMS_TOKEN_ENDPOINT: 'http://127.0.0.1:3000/token' } : {};
      expect(readConfig({ ...beside, [name]: 'http://127.0.0.1:3000/api/' })[name]).toBe(
        'http://127.0.0.1:3000/api/',
      );
      expect(readConfig({ ...beside, [name]: 'https://slack.com/api/' })[name]).toBe(
        'https://slack.com/api/',
      );
      for (const value of ['localhost:3000/api/', 'ftp://example.com/', 'not a url']) {
        expect(() => readConfig({ [name]: value }), value).toThrow(
          new RegExp(`must be an absolute http: or https: URL[\\s\\S]*${name}`),
        );
      }
    },
  );
});

describe('TEAMS_AUTHORITY', () => {
  it('refuses http: without TEAMS_TOKEN_ENDPOINT, since MSAL then gets the tokens and takes only https:', () => {
    expect(() => readConfig({ TEAMS_AUTHORITY: 'http://127.0.0.1:3000' })).toThrow(
      /must be an https: URL unless TEAMS_TOKEN_ENDPOINT is set[\s\S]*TEAMS_AUTHORITY/,
    );
    expect(readConfig({ TEAMS_AUTHORITY: 'https://login.example.com' }).TEAMS_AUTHORITY).toBe(
      'https://login.example.com',
    );
    expect(
      readConfig({
        TEAMS_AUTHORITY: 'http://127.0.0.1:3000',
        TEAMS_TOKEN_ENDPOINT: 'http://127.0.0.1:3000/token',
      }).TEAMS_AUTHORITY,
    ).toBe('http://127.0.0.1:3000');
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
  it.each([
    'NOTIFY_RATE_LIMIT_PER_KEY',
    'NOTIFY_RATE_LIMIT_PER_ORGANIZATION',
    'NOTIFY_RATE_LIMIT_KEY_CREATION',
  ] as const)('%s refuses a limit that lets nothing through, now or later', (name) => {
    expect(readConfig({ [name]: '1/0.5' })[name]).toEqual({ burst: 1, perSecond: 0.5 });
    for (const value of ['0/0', '0/5', '10/0']) {
      expect(() => readConfig({ [name]: value })).toThrow(
        new RegExp(`must let requests through[\\s\\S]*${name}`),
      );
    }
  });
});

describe('numbers too large to represent', () => {
  const endless = '9'.repeat(400);

  it.each([
    ['NOTIFY_RATE_LIMIT_PER_KEY', `${endless}/1`],
    ['NOTIFY_RATE_LIMIT_PER_ORGANIZATION', `1/${endless}`],
    ['NOTIFY_RATE_LIMIT_KEY_CREATION', `${endless}/${endless}`],
    ['NOTIFY_WAIT_FOR_STORAGE', endless],
    ['NOTIFY_RETENTION_DAYS', endless],
    ['NOTIFY_SHUTDOWN_TIMEOUT_MS', endless],
    ['NOTIFY_HEADERS_TIMEOUT_MS', endless],
    ['NOTIFY_REQUEST_TIMEOUT_MS', endless],
  ])('are refused for %s, which read them as Infinity, naming the setting', (name, value) => {
    expect(() => readConfig({ [name]: value })).toThrow(
      new RegExp(`must be a number small enough to represent[\\s\\S]*${name}`),
    );
  });

  it.each(['PORT', 'NOTIFY_TRUST_PROXY'])('are refused for %s, naming the setting', (name) => {
    expect(() => readConfig({ [name]: endless })).toThrow(new RegExp(`→ at ${name}`));
  });
});

describe('the limit of key creations', () => {
  it('is the library default (10 at once, 10 an hour) unless set', () => {
    expect(readConfig({}).NOTIFY_RATE_LIMIT_KEY_CREATION).toBeUndefined();
    expect(readConfig({ NOTIFY_RATE_LIMIT_KEY_CREATION: '20/0.01' }).NOTIFY_RATE_LIMIT_KEY_CREATION).toEqual({
      burst: 20,
      perSecond: 0.01,
    });
  });
});

describe('numbers of the other settings', () => {
  it.each([
    ['NOTIFY_RETENTION_DAYS', '0x1E'],
    ['NOTIFY_RETENTION_DAYS', '3e1'],
    ['NOTIFY_WAIT_FOR_STORAGE', '0x10'],
    ['NOTIFY_SHUTDOWN_TIMEOUT_MS', '0x10'],
    ['NOTIFY_REQUEST_TIMEOUT_MS', '1e4'],
    ['NOTIFY_HEADERS_TIMEOUT_MS', '1000.5'],
  ])('refuses %s=%s, a number not in decimal digits', (name, value) => {
    expect(() => readConfig({ [name]: value })).toThrow(new RegExp(`${name}`));
  });

  it('reads decimal digits, and a fraction where one makes sense', () => {
    const config = readConfig({ NOTIFY_WAIT_FOR_STORAGE: '2.5', NOTIFY_SHUTDOWN_TIMEOUT_MS: '2000' });
    expect(config.NOTIFY_WAIT_FOR_STORAGE).toBe(2.5);
    expect(config.NOTIFY_SHUTDOWN_TIMEOUT_MS).toBe(2000);
  });
});

describe('NOTIFY_HEADERS_TIMEOUT_MS', () => {
  it('follows a shorter NOTIFY_REQUEST_TIMEOUT_MS when unset, and is 30 s otherwise', () => {
    expect(readConfig({ NOTIFY_REQUEST_TIMEOUT_MS: '5000' }).NOTIFY_HEADERS_TIMEOUT_MS).toBe(5000);
    expect(readConfig({}).NOTIFY_HEADERS_TIMEOUT_MS).toBe(30_000);
    expect(readConfig({ NOTIFY_REQUEST_TIMEOUT_MS: '60000' }).NOTIFY_HEADERS_TIMEOUT_MS).toBe(30_000);
  });

  it('is refused when set longer than the request', () => {
    expect(() =>
      readConfig({ NOTIFY_REQUEST_TIMEOUT_MS: '5000', NOTIFY_HEADERS_TIMEOUT_MS: '6000' }),
    ).toThrow(/NOTIFY_HEADERS_TIMEOUT_MS/);
  });
});

describe('NOTIFY_TRUST_PROXY', () => {
  it('refuses a hop count too large to count exactly', () => {
    expect(() => readConfig({ NOTIFY_TRUST_PROXY: '99999999999999999999999' })).toThrow(/NOTIFY_TRUST_PROXY/);
    expect(readConfig({ NOTIFY_TRUST_PROXY: '2' }).NOTIFY_TRUST_PROXY).toBe(2);
  });
});
