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

describe('a seed that names something twice', () => {
  const user = (email: string, key?: string) => ({
    email,
    name: email,
    ...(key === undefined ? {} : { apiKeys: [{ label: 'key', key }] }),
  });
  const organization = (id: string, users: ReturnType<typeof user>[]) => ({ id, name: id, users });

  it.each([
    [
      'an organization id',
      [organization('o1', [user('a@o1.test')]), organization('o1', [user('b@o1.test')])],
      'this organization id is already given at organizations[0].id\n  → at organizations[1].id',
    ],
    [
      'a user of one organization, case aside',
      [organization('o1', [user('alice@o1.test'), user('ALICE@o1.test')])],
      'this user is already given at organizations[0].users[0].email\n  → at organizations[0].users[1].email',
    ],
    [
      'a key, given to two users',
      [
        organization('o1', [user('alice@o1.test', 'cnk_shared_0000000000000001')]),
        organization('o2', [user('bob@o2.test', 'cnk_shared_0000000000000001')]),
      ],
      'this key is already given at organizations[0].users[0].apiKeys[0].key\n  → at organizations[1].users[0].apiKeys[0].key',
    ],
  ])('is refused, naming where (%s), and loads nothing', async (_what, organizations, where) => {
    const storage = memoryStorage();
    const notifier = createNotifier({ storage, transports: [] });
    await expect(notifier.seed({ organizations })).rejects.toThrow(where);
    expect(await storage.directory.listUsers()).toEqual([]);
  });

  it.each([
    ['a space at its end', 'cnk_trailing_space_000001 '],
    ['a tab at its start', '\tcnk_leading_tab_0000001'],
    ['a character beyond ASCII', 'cnk_euro_€_000000000000001'],
    ['a control character', 'cnk_control_\u0001_0000000001'],
  ])('refuses a key with %s, which no request could send, and loads nothing', async (_what, key) => {
    const storage = memoryStorage();
    const notifier = createNotifier({ storage, transports: [] });
    await expect(
      notifier.seed({ organizations: [organization('o1', [user('a@o1.test', key)])] }),
    ).rejects.toThrow(
      'must be printable ASCII, without spaces at either end, to be sent in X-API-Key\n  → at organizations[0].users[0].apiKeys[0].key',
    );
    expect(await storage.directory.listUsers()).toEqual([]);
  });

  it('allows one address in two organizations', async () => {
    const notifier = createNotifier({ storage: memoryStorage(), transports: [] });
    await notifier.seed({
      organizations: [organization('o1', [user('alice@x.test')]), organization('o2', [user('alice@x.test')])],
    });
  });
});

describe('a seed whose names and labels no store could keep as text', () => {
  const lone = 'deploy \ud800 bot';
  const seedWith = (change: {
    id?: string;
    name?: string;
    userName?: string;
    label?: string;
    password?: string;
    /** How many keys the user is given (one by default). */
    keys?: number;
  }) => ({
    organizations: [
      {
        id: change.id ?? 'o1',
        name: change.name ?? 'Org One',
        users: [
          {
            email: 'a@o1.test',
            name: change.userName ?? 'Ann',
            ...(change.password === undefined ? {} : { password: change.password }),
            apiKeys: Array.from({ length: change.keys ?? 1 }, (_, index) => ({
              label: change.label ?? 'deploy bot',
              key: `cnk_seeded_text_${String(index + 1).padStart(11, '0')}`,
            })),
          },
        ],
      },
    ],
  });
  const halfPair = 'must be Unicode text: it holds half of a surrogate pair';

  // A lone surrogate reaches Redis and MongoDB as U+FFFD, or is refused by Redis's JSON decoder:
  // two organization ids became one, and every request of a key so labelled answered 500.
  it.each([
    ['an organization id', { id: `org${lone}` }, `${halfPair}`, 'organizations[0].id'],
    ['an organization name', { name: lone }, halfPair, 'organizations[0].name'],
    ['a user name', { userName: lone }, halfPair, 'organizations[0].users[0].name'],
    ['a key label', { label: lone }, halfPair, 'organizations[0].users[0].apiKeys[0].label'],
    ['a password', { password: lone }, halfPair, 'organizations[0].users[0].password'],
    [
      'a blank key label',
      { label: ' \u200b ' },
      'must not be blank',
      'organizations[0].users[0].apiKeys[0].label',
    ],
    ['a blank user name', { userName: '   ' }, 'must not be blank', 'organizations[0].users[0].name'],
    [
      'a key label of two lines',
      { label: 'deploy\nbot' },
      'must be one line of text',
      'organizations[0].users[0].apiKeys[0].label',
    ],
    [
      'a user name of two lines',
      { userName: 'Bob\nRoe' },
      'must be one line of text',
      'organizations[0].users[0].name',
    ],
    [
      'an organization name of two lines',
      { name: 'Acme\r\nCorp' },
      'must be one line of text',
      'organizations[0].name',
    ],
    [
      'a user given 51 keys, one more than a user may hold',
      { keys: 51 },
      'must hold at most 50 keys, the most a user may',
      'organizations[0].users[0].apiKeys',
    ],
    [
      'a key label of 101 characters',
      { label: 'é'.repeat(101) },
      'must be 1 to 100 characters',
      'organizations[0].users[0].apiKeys[0].label',
    ],
  ])('is refused for %s, naming where, and loads nothing', async (_what, change, rule, path) => {
    const storage = memoryStorage();
    const notifier = createNotifier({ storage, transports: [] });
    const refusal = notifier.seed(seedWith(change));
    await expect(refusal).rejects.toThrow(rule);
    await expect(refusal).rejects.toThrow(`→ at ${path}`);
    expect(await storage.directory.listUsers()).toEqual([]);
  });

  it('takes an empty password, which gives no sign-in, as before', async () => {
    const notifier = createNotifier({ storage: memoryStorage(), transports: [] });
    await expect(notifier.seed(seedWith({ password: '' }))).resolves.toBeUndefined();
  });

  it('loads names and labels of whole characters, emoji and accents included, as given', async () => {
    const storage = memoryStorage();
    const notifier = createNotifier({ storage, transports: [] });
    await notifier.seed(seedWith({ name: 'Acmé 🚀', userName: 'Zoë', label: '🔑'.repeat(100) }));
    const [user] = await storage.directory.listUsers('o1');
    expect(user?.name).toBe('Zoë');
    expect((await storage.directory.getOrganization('o1'))?.name).toBe('Acmé 🚀');
    const [key] = await storage.directory.listApiKeys({ organizationId: 'o1' });
    expect(key?.label).toBe('🔑'.repeat(100));
  });
});
