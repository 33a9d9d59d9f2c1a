import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { ApiKeyRecord } from '../../core/domain/directory.js';
import { createNotifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { digestApiKey } from '../../core/security/api-key-format.js';
import { testKeys, testSeed } from '../support/test-seed.js';

/** The stored record of alice's key. */
async function aliceKey(storage: StoragePorts): Promise<ApiKeyRecord> {
  const principal = await storage.directory.findPrincipalByDigest(digestApiKey(testKeys.alice));
  if (!principal) throw new Error('alice’s key was not seeded');
  return principal.apiKey;
}

/** A memory store seeded once with the test seed, and a notifier over it. */
async function seeded() {
  const storage = memoryStorage();
  const notifier = createNotifier({ storage, transports: [] });
  await notifier.seed(testSeed);
  return { storage, notifier, alice: await aliceKey(storage) };
}

describe('seeding API keys', () => {
  it('gives a seeded key a random id that reveals nothing of the key', async () => {
    const first = await seeded();
    const second = await seeded();
    expect(first.alice.id).toMatch(/^key_[A-Za-z0-9]{24}$/);
    // Two stores seeded from one file share the keys, not their ids.
    expect(second.alice.id).not.toBe(first.alice.id);
    const digest = digestApiKey(testKeys.alice);
    for (let start = 0; start + 8 <= digest.length; start += 1) {
      expect(first.alice.id).not.toContain(digest.slice(start, start + 8));
    }
  });

  it('stays idempotent: seeding again keeps the one record of each key, with its id', async () => {
    const { storage, notifier, alice } = await seeded();
    await notifier.seed(testSeed);
    await notifier.seed(testSeed);
    expect(await aliceKey(storage)).toEqual(alice);
    const keys = await storage.directory.listApiKeys({ organizationId: 'acme' });
    expect(keys.map((key) => key.digest).sort()).toEqual(
      [digestApiKey(testKeys.alice), digestApiKey(testKeys.bob)].sort(),
    );
    expect(keys.find((key) => key.digest === alice.digest)?.id).toBe(alice.id);
  });
});
