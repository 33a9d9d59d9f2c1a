import { beforeEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { isNotifyError } from '../../core/errors.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { digestApiKey } from '../../core/security/api-key-format.js';
import { type ManualClock, manualClock } from '../support/manual-clock.js';
import { memoryAndRedisStorages } from '../support/redis.js';
import { testKeys, testSeed } from '../support/test-seed.js';

let clock: ManualClock;
let storage: StoragePorts;
let notifier: Notifier;
let alice: { userId: string; admin: boolean };
let bob: { userId: string; admin: boolean };

const userId = async (email: string) => {
  const [user] = await storage.directory.findUsersByEmail('acme', [email]);
  if (!user) throw new Error(email);
  return user.id;
};

beforeEach(async () => {
  clock = manualClock();
  storage = memoryStorage({ clock });
  notifier = createNotifier({
    storage,
    clock,
    transports: [inboxTransport({ clock })],
  });
  await notifier.seed(testSeed);
  alice = { userId: await userId('alice@acme.test'), admin: true };
  bob = { userId: await userId('bob@acme.test'), admin: false };
});

describe('API keys (docs/behaviour.md#api-keys)', () => {
  it('creates a cnk_ key of 40 base62 characters, shown once, stored only as its SHA-256 digest', async () => {
    const { apiKey, key } = await notifier.apiKeys.create(bob, '  deploy bot  ');
    expect(apiKey).toMatch(/^cnk_[A-Za-z0-9]{40}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      label: 'deploy bot',
      prefix: apiKey.slice(0, 12),
      createdAt: new Date(clock.now()).toISOString(),
      lastUsedAt: null,
      revokedAt: null,
      owner: { name: 'Bob Roe', email: 'bob@acme.test' },
    });
    const stored = await storage.directory.listApiKeys({ organizationId: 'acme', userId: bob.userId });
    expect(JSON.stringify(stored)).not.toContain(apiKey);
    expect(stored.map((k) => k.digest)).toContain(digestApiKey(apiKey));
    expect((await notifier.authenticate(apiKey)).user.email).toBe('bob@acme.test');
  });

  it('refuses an empty or overlong label', async () => {
    for (const label of ['', '   ', 'x'.repeat(101)]) {
      await expect(notifier.apiKeys.create(bob, label)).rejects.toSatisfy((e) =>
        isNotifyError(e, 'invalid_request'),
      );
    }
  });

  it('refuses a label holding a control character, a line separator or a bidirectional control, saying so', async () => {
    const before = await notifier.apiKeys.list(bob);
    for (const label of [
      'deploy\nbot',
      'deploy\tbot',
      'a\u0000b',
      'esc\u001b[31m',
      'c1\u0085',
      'line\u2028separator',
      'paragraph\u2029separator',
      'override\u202Eexe.txt',
      'isolate\u2067x\u2069',
    ]) {
      await expect(notifier.apiKeys.create(bob, label)).rejects.toThrow(/label: must be one line of text/);
    }
    expect(await notifier.apiKeys.list(bob)).toEqual(before);
  });

  it('lists a member’s own keys only; an admin lists and searches the whole organization with owners', async () => {
    await notifier.apiKeys.create(bob, 'ci pipeline');
    const own = await notifier.apiKeys.list(bob);
    expect(own.map((k) => k.label).sort()).toEqual(['ci pipeline', 'tests']);
    await expect(notifier.apiKeys.list(bob, { scope: 'organization' })).rejects.toSatisfy((e) =>
      isNotifyError(e, 'not_found'),
    );
    const all = await notifier.apiKeys.list(alice, { scope: 'organization' });
    expect(all.map((k) => k.owner.email).sort()).toEqual([
      'alice@acme.test',
      'bob@acme.test',
      'bob@acme.test',
    ]);
    expect(
      (await notifier.apiKeys.list(alice, { scope: 'organization', search: 'PIPE' })).map((k) => k.label),
    ).toEqual(['ci pipeline']);
    expect((await notifier.apiKeys.list(alice, { scope: 'organization', search: 'bob roe' })).length).toBe(2);
  });

  it('revokes at once: a member only their own keys, an admin any key of the organization', async () => {
    const [aliceKey] = await notifier.apiKeys.list(alice);
    await expect(notifier.apiKeys.revoke(bob, aliceKey?.id ?? '')).rejects.toSatisfy((e) =>
      isNotifyError(e, 'not_found'),
    );
    const [bobKey] = await notifier.apiKeys.list(bob);
    await notifier.apiKeys.revoke(alice, bobKey?.id ?? '');
    await expect(notifier.authenticate(testKeys.bob)).rejects.toSatisfy((e) =>
      isNotifyError(e, 'unauthenticated'),
    );
    expect((await notifier.apiKeys.list(bob))[0]?.revokedAt).toBe(new Date(clock.now()).toISOString());
  });

  it('records the last use within a minute, without a write on every call', async () => {
    const writes: number[] = [];
    const touch = storage.directory.touchApiKey;
    storage.directory.touchApiKey = async (id, at) => {
      writes.push(at);
      await touch(id, at);
    };
    await notifier.authenticate(testKeys.bob);
    clock.advance(30_000);
    await notifier.authenticate(testKeys.bob);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    clock.advance(30_000);
    await notifier.authenticate(testKeys.bob);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(2);
    const [key] = await notifier.apiKeys.list(bob);
    expect(Date.parse(key?.lastUsedAt ?? '')).toBe(clock.now());
  });

  it('seeds idempotently: loading the same file twice creates no duplicate user or key', async () => {
    await notifier.seed(testSeed);
    expect((await storage.directory.listUsers('acme')).length).toBe(64);
    expect((await notifier.apiKeys.list(alice, { scope: 'organization' })).length).toBe(2);
  });
});

describe('limits on creating API keys', () => {
  it('lets a user create 10 keys at once, then one every 6 minutes, each user apart', async () => {
    for (let i = 0; i < 10; i += 1) await notifier.apiKeys.create(bob, `key ${i}`);
    const refusal = notifier.apiKeys.create(bob, 'one too many');
    await expect(refusal).rejects.toSatisfy((e) => isNotifyError(e, 'rate_limited'));
    await expect(refusal).rejects.toMatchObject({
      details: 'Too many API keys created: try again in 6 minutes',
      retryAfterSeconds: 360,
    });
    // Alice has a bucket of her own.
    await notifier.apiKeys.create(alice, 'hers');
    clock.advance(359_000);
    await expect(notifier.apiKeys.create(bob, 'still too soon')).rejects.toSatisfy((e) =>
      isNotifyError(e, 'rate_limited'),
    );
    clock.advance(1_000);
    await notifier.apiKeys.create(bob, 'after the wait');
    expect((await notifier.apiKeys.list(bob)).length).toBe(12);
  });

  it('caps the valid keys of a user at 50; a revocation makes room, and a refusal takes no token', async () => {
    const generous = createNotifier({
      storage,
      clock,
      transports: [],
      rateLimits: { keyCreation: { burst: 50, perSecond: 0.001 } },
    });
    // Bob holds the seeded key already.
    for (let i = 0; i < 49; i += 1) await generous.apiKeys.create(bob, `key ${i}`);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await expect(generous.apiKeys.create(bob, 'the 51st')).rejects.toMatchObject({
        code: 'unprocessable',
        details: 'You hold 50 valid API keys, the most a user may: revoke one to create another',
      });
    }
    const [first] = await generous.apiKeys.list(bob);
    await generous.apiKeys.revoke(bob, first?.id ?? '');
    await generous.apiKeys.create(bob, 'in its place');
    const keys = await generous.apiKeys.list(bob);
    expect(keys.length).toBe(51);
    expect(keys.filter((key) => key.revokedAt === null).length).toBe(50);
  });
});

const storages = await memoryAndRedisStorages('API key limits');

describe.each(storages)('creations of API keys at once, on %s', (_name, make) => {
  it('never leave a user more than 50 valid keys, however many race', async () => {
    const racing = createNotifier({
      storage: make(),
      transports: [],
      rateLimits: { keyCreation: { burst: 100, perSecond: 0.001 } },
    });
    await racing.seed(testSeed);
    const user = await racing.findUser('acme', 'bob@acme.test');
    if (!user) throw new Error('bob was not seeded');
    const member = { userId: user.id, admin: false };
    // Bob holds the seeded key: 45 valid keys, then 20 creations at once.
    for (let i = 0; i < 44; i += 1) await racing.apiKeys.create(member, `key ${i}`);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => racing.apiKeys.create(member, `racing ${i}`)),
    );
    const valid = (await racing.apiKeys.list(member)).filter((key) => key.revokedAt === null);
    expect(valid.length).toBeLessThanOrEqual(50);
    const created = outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
    expect(valid.length).toBe(45 + created);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(isNotifyError(outcome.reason, 'unprocessable')).toBe(true);
    }
    await racing.stop();
  });
});

describe.each(storages)('revocations of one API key at once, on %s', (_name, make) => {
  it('answer true to the one that revoked it only, so that one revocation is recorded', async () => {
    const shared = make();
    const [first, second] = await Promise.all(
      [0, 1].map(async () => {
        const instance = createNotifier({ storage: shared, transports: [] });
        await instance.seed(testSeed);
        return instance;
      }),
    );
    if (!first || !second) throw new Error('no notifiers');
    const user = await first.findUser('acme', 'bob@acme.test');
    const admin = await first.findUser('acme', 'alice@acme.test');
    if (!user || !admin) throw new Error('bob and alice were not seeded');
    const owner = { userId: user.id, admin: false };
    const { key } = await first.apiKeys.create(owner, 'racing revocations');
    // The owner and an admin on two instances, twice each, at once.
    const answers = await Promise.all([
      first.apiKeys.revoke(owner, key.id),
      second.apiKeys.revoke({ userId: admin.id, admin: true }, key.id),
      second.apiKeys.revoke(owner, key.id),
      first.apiKeys.revoke({ userId: admin.id, admin: true }, key.id),
    ]);
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(await second.apiKeys.revoke(owner, key.id)).toBe(false);
    await Promise.all([first.stop(), second.stop()]);
  });
});
