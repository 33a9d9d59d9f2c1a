import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/index.js';

describe('createClient refuses options that could not work, at creation', () => {
  it.each(['127.0.0.1:3000', 'not a url', '', 'ftp://notify.example.com', '/api'])(
    'a baseUrl that is no absolute http: or https: URL: %j',
    (baseUrl) => {
      expect(() => createClient({ baseUrl, apiKey: 'cnk_x' })).toThrow(
        /^createClient: baseUrl must be an absolute http: or https: URL/,
      );
    },
  );

  it.each([
    'https://notify.example.com/prefix?tenant=a',
    'https://notify.example.com/#x',
    'https://notify.example.com/?',
  ])('a baseUrl with a query or a fragment, after which every path would land: %j', (baseUrl) => {
    expect(() => createClient({ baseUrl, apiKey: 'cnk_x' })).toThrow(
      /^createClient: baseUrl must have no query or fragment/,
    );
  });

  it.each(['https://user:pw@notify.example.com', 'https://token@notify.example.com/base'])(
    'a baseUrl with credentials, with which fetch refuses every call: %j',
    (baseUrl) => {
      expect(() => createClient({ baseUrl, apiKey: 'cnk_x' })).toThrow(
        'createClient: baseUrl must carry no user name or password',
      );
    },
  );

  it('an API key that is unset or empty', () => {
    for (const apiKey of [process.env.CHAT_NOTIFY_NEVER_SET as string, '']) {
      expect(() => createClient({ baseUrl: 'https://notify.example.com', apiKey })).toThrow(
        'createClient: apiKey must be a non-empty string',
      );
    }
  });

  it.each([
    ['a character beyond Latin-1', 'cnk_“quoted”'],
    ['a line break', 'cnk_a\nb'],
    ['a space at its end', 'cnk_x '],
    ['a character beyond ASCII', 'cnk_clé'],
  ])('an API key that no header could carry as it is: %s', (_what, apiKey) => {
    expect(() => createClient({ baseUrl: 'https://notify.example.com', apiKey })).toThrow(
      'createClient: apiKey must be printable ASCII, without spaces at either end',
    );
  });

  it.each(['ключ', 'a\nb', '', 'x'.repeat(256), '   ', 'deploy-42 '])(
    'an idempotency key the service would refuse, or fetch would trim (%j), at once and without a call',
    async (idempotencyKey) => {
      let calls = 0;
      const client = createClient({
        baseUrl: 'https://notify.example.com',
        apiKey: 'cnk_x',
        fetch: async () => {
          calls += 1;
          return new Response('{}');
        },
      });
      await expect(
        client.send({ user_emails: ['bob@acme.test'], message: 'Hi' }, { idempotencyKey }),
      ).rejects.toThrow(
        new TypeError(
          'send: idempotencyKey must be 1 to 255 printable ASCII characters (codes 0x20 to 0x7E), without spaces at either end',
        ),
      );
      expect(calls).toBe(0);
    },
  );

  it.each([
    [{ maxAttempts: Number.NaN }],
    [{ maxAttempts: 0 }],
    [{ maxAttempts: Number.POSITIVE_INFINITY }],
    [{ baseDelayMs: -1 }],
    [{ maxDelayMs: Number.NaN }],
  ])('retry settings that are not finite or below their least: %j', (retry) => {
    expect(() => createClient({ baseUrl: 'https://notify.example.com', apiKey: 'cnk_x', retry })).toThrow(
      RangeError,
    );
  });

  it.each([Number.NaN, 0, -5, Number.POSITIVE_INFINITY])(
    "an attempt's time that is no finite number of at least 1 ms: %d",
    (attemptTimeoutMs) => {
      expect(() =>
        createClient({ baseUrl: 'https://notify.example.com', apiKey: 'cnk_x', attemptTimeoutMs }),
      ).toThrow(/^createClient: attemptTimeoutMs must be a finite number of at least 1/);
    },
  );

  it("an attempt's time longer than a Node timer holds, which would fire at once", () => {
    expect(() =>
      createClient({ baseUrl: 'https://notify.example.com', apiKey: 'cnk_x', attemptTimeoutMs: 2 ** 31 }),
    ).toThrow(/^createClient: attemptTimeoutMs must be at most 2147483647/);
  });

  it('takes a base URL with a path prefix', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:3000/chat/', apiKey: 'cnk_x' })).not.toThrow();
  });
});
