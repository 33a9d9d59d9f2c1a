import type { Seed } from '../../core/use-cases/seed.js';

/** Plaintext keys of the test seed. */
export const testKeys = {
  alice: 'cnk_test_alice_000000000000000000000001',
  bob: 'cnk_test_bob_00000000000000000000000002',
  gina: 'cnk_test_gina_000000000000000000000003',
} as const;

/** `user01@acme.test` … `user60@acme.test`: enough recipients to cross the 50-recipient limit. */
export const numberedUsers = Array.from(
  { length: 60 },
  (_, i) => `user${String(i + 1).padStart(2, '0')}@acme.test`,
);

/**
 * Two organizations: acme (alice, an admin; bob; carol; dave; 60 numbered users) and globex (gina,
 * and a `bob@acme.test` look-alike is absent there on purpose: cross-organization recipients are unknown).
 */
export const testSeed: Seed = {
  organizations: [
    {
      id: 'acme',
      name: 'Acme Inc',
      users: [
        {
          email: 'alice@acme.test',
          name: 'Alice Doe',
          role: 'admin',
          apiKeys: [{ label: 'tests', key: testKeys.alice }],
        },
        {
          email: 'bob@acme.test',
          name: 'Bob Roe',
          role: 'member',
          apiKeys: [{ label: 'tests', key: testKeys.bob }],
        },
        { email: 'Carol@Acme.test', name: 'Carol Poe', role: 'member' },
        { email: 'dave@acme.test', name: 'Dave Moe', role: 'member' },
        ...numberedUsers.map((email, i) => ({ email, name: `User ${i + 1}`, role: 'member' as const })),
      ],
    },
    {
      id: 'globex',
      name: 'Globex',
      users: [
        {
          email: 'gina@globex.test',
          name: 'Gina Globex',
          role: 'admin',
          apiKeys: [{ label: 'tests', key: testKeys.gina }],
        },
      ],
    },
  ],
};
