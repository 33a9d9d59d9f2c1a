import { describe, expect, it } from 'vitest';
import { type AdmissionRequest, composedAdmission, type Principal } from '../../core/adapter-kit.js';
import type { BucketSpec } from '../../core/ports/rate-limit-store.js';

const principal: Principal = {
  apiKey: {
    id: 'key_1',
    organizationId: 'acme',
    userId: 'usr_1',
    label: 'tests',
    prefix: 'cnk_test_ali',
    digest: 'valid',
    createdAt: 0,
    lastUsedAt: null,
    revokedAt: null,
  },
  user: {
    id: 'usr_1',
    organizationId: 'acme',
    email: 'alice@acme.test',
    name: 'Alice',
    role: 'admin',
    chatLinks: [],
  },
  organization: { id: 'acme', name: 'Acme Inc' },
};
const revoked: Principal = { ...principal, apiKey: { ...principal.apiKey, digest: 'revoked', revokedAt: 1 } };

const request = (digest: string | null): AdmissionRequest => ({
  digest,
  failedAuth: { key: 'auth-failures:127.0.0.1', capacity: 5, refillPerSecond: 1 },
  perKey: { capacity: 10, refillPerSecond: 2 },
  perOrganization: { capacity: 50, refillPerSecond: 5 },
});

/**
 * Parts over a fixed directory and buckets that are short when named in `short`, answering at once
 * (as memory does) or through promises (as MongoDB does); every take is recorded.
 */
function parts(mode: 'sync' | 'async', short: readonly string[] = []) {
  const takes: string[][] = [];
  const later = <T>(value: T): T | Promise<T> => (mode === 'sync' ? value : Promise.resolve(value));
  return {
    takes,
    findPrincipal: (digest: string) =>
      later([principal, revoked].find((known) => known.apiKey.digest === digest) ?? null),
    take: (buckets: readonly BucketSpec[]) => {
      takes.push(buckets.map((bucket) => bucket.key));
      const index = buckets.findIndex((bucket) => short.includes(bucket.key));
      return later(index === -1 ? null : index);
    },
  };
}

describe.each(['sync', 'async'] as const)('composedAdmission with parts that answer %s', (mode) => {
  it('admits a valid key, taking from its bucket and its organization’s at once', async () => {
    const store = parts(mode);
    expect(await composedAdmission(store).admit(request('valid'))).toEqual({
      outcome: 'admitted',
      principal,
    });
    expect(store.takes).toEqual([['key:key_1', 'org:acme']]);
  });

  it('limits by the bucket that was short: the key’s, else the organization’s', async () => {
    expect(await composedAdmission(parts(mode, ['key:key_1'])).admit(request('valid'))).toEqual({
      outcome: 'limited',
      by: 'key',
      principal,
    });
    expect(await composedAdmission(parts(mode, ['org:acme'])).admit(request('valid'))).toEqual({
      outcome: 'limited',
      by: 'organization',
      principal,
    });
  });

  it('rejects an unknown, a revoked or a missing key, charging the address, and blocks once it is short', async () => {
    for (const digest of ['unknown', 'revoked', null]) {
      const store = parts(mode);
      expect(await composedAdmission(store).admit(request(digest))).toEqual({ outcome: 'rejected' });
      expect(store.takes).toEqual([['auth-failures:127.0.0.1']]);
    }
    const exhausted = parts(mode, ['auth-failures:127.0.0.1']);
    expect(await composedAdmission(exhausted).admit(request('unknown'))).toEqual({ outcome: 'blocked' });
  });

  it('charges each request at its own rates, in the organization its key belongs to then', async () => {
    const charged: BucketSpec[][] = [];
    let owner = principal;
    const store = composedAdmission({
      ...parts(mode),
      findPrincipal: () => owner,
      take: (buckets: readonly BucketSpec[]) => {
        charged.push(buckets.map((bucket) => ({ ...bucket })));
        return null;
      },
    });
    await store.admit(request('valid'));
    await store.admit({ ...request('valid'), perKey: { capacity: 3, refillPerSecond: 1 } });
    owner = { ...principal, organization: { id: 'globex', name: 'Globex' } };
    await store.admit(request('valid'));
    expect(charged).toEqual([
      [
        { key: 'key:key_1', capacity: 10, refillPerSecond: 2 },
        { key: 'org:acme', capacity: 50, refillPerSecond: 5 },
      ],
      [
        { key: 'key:key_1', capacity: 3, refillPerSecond: 1 },
        { key: 'org:acme', capacity: 50, refillPerSecond: 5 },
      ],
      [
        { key: 'key:key_1', capacity: 10, refillPerSecond: 2 },
        { key: 'org:globex', capacity: 50, refillPerSecond: 5 },
      ],
    ]);
  });

  it('answers a part that throws instead of answering through the promise, as an async step would', async () => {
    const broken = new Error('the directory threw at once');
    const store = composedAdmission({
      ...parts(mode),
      findPrincipal: () => {
        throw broken;
      },
    });
    // Calling it must not throw: the caller learns of the failure from the promise alone.
    const admission = store.admit(request('valid'));
    await expect(admission).rejects.toBe(broken);
  });
});
