import { describe, expect, it } from 'vitest';
import { baseUrl } from '../../examples/standalone/app.js';
import { redactUrl } from '../../examples/standalone/open-storage.js';

describe('redactUrl', () => {
  it.each([
    ['redis://app:s3cret@127.0.0.1:6379', 'redis://app:***@127.0.0.1:6379'],
    ['redis://:s3cret@127.0.0.1:6379/2', 'redis://:***@127.0.0.1:6379/2'],
    // Passwords the operator did not percent-encode: an `@` or a `/` inside.
    ['redis://:p@ssw0rd@127.0.0.1:6379', 'redis://:***@127.0.0.1:6379'],
    ['redis://user:se/cret@127.0.0.1:6379', 'redis://user:***@127.0.0.1:6379'],
    ['mongodb+srv://u:a/b@c@cluster.example/notify', 'mongodb+srv://u:***@cluster.example/notify'],
  ])('masks the whole password of %s', (url, masked) => {
    expect(redactUrl(url)).toBe(masked);
  });

  it.each([
    [
      'mongodb://127.0.0.1/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:s3cret',
      'mongodb://127.0.0.1/db?authMechanism=***&authMechanismProperties=***',
    ],
    [
      'mongodb://u:pw@h/db?tls=true&tlsCertificateKeyFilePassword=s3cret',
      'mongodb://u:***@h/db?tls=***&tlsCertificateKeyFilePassword=***',
    ],
    ['redis://h:6379/?flag', 'redis://h:6379/?flag'],
  ])('masks the values of the options of %s, which may hold credentials', (url, masked) => {
    expect(redactUrl(url)).toBe(masked);
  });

  it('leaves a URL without a password as it is', () => {
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('redis://user@127.0.0.1:6379')).toBe('redis://user@127.0.0.1:6379');
    expect(redactUrl('memory')).toBe('memory');
  });
});

describe('baseUrl', () => {
  it('names localhost for every address, and the address itself otherwise', () => {
    expect(baseUrl('0.0.0.0', 3000)).toBe('http://localhost:3000');
    expect(baseUrl('::', 3000)).toBe('http://localhost:3000');
    expect(baseUrl('127.0.0.2', 47662)).toBe('http://127.0.0.2:47662');
    expect(baseUrl('::1', 3000)).toBe('http://[::1]:3000');
    expect(baseUrl('notify.internal', 80)).toBe('http://notify.internal:80');
  });
});
