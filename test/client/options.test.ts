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

  it('an API key that is unset or empty', () => {
    for (const apiKey of [process.env.CHAT_NOTIFY_NEVER_SET as string, '']) {
      expect(() => createClient({ baseUrl: 'https://notify.example.com', apiKey })).toThrow(
        'createClient: apiKey must be a non-empty string',
      );
    }
  });

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

  it('takes a base URL with a path prefix', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:3000/chat/', apiKey: 'cnk_x' })).not.toThrow();
  });
});
