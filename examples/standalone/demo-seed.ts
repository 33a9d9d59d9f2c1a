import type { Seed } from '../../core/index.js';

/** The API key of the demo organization's admin; printed at start-up and used by the README. */
export const demoApiKey = 'cnk_demo_alice_0000000000000000000000001';

/**
 * Sign-in passwords of the demo users for the account pages (README.md#account-pages): the demo is
 * public, so these are too. The standalone host stores only their scrypt hashes.
 */
export const demoPasswords = {
  alice: 'alice-demo-password',
  bob: 'bob-demo-password',
  carol: 'carol-demo-password',
} as const;

/** The organization the standalone host loads when no `NOTIFY_SEED` is given. */
export const demoSeed: Seed = {
  organizations: [
    {
      id: 'acme',
      name: 'Acme Inc',
      users: [
        {
          email: 'alice@acme.test',
          name: 'Alice Doe',
          role: 'admin',
          password: demoPasswords.alice,
          apiKeys: [{ label: 'demo', key: demoApiKey }],
        },
        { email: 'bob@acme.test', name: 'Bob Roe', role: 'member', password: demoPasswords.bob },
        { email: 'carol@acme.test', name: 'Carol Poe', role: 'member', password: demoPasswords.carol },
      ],
    },
  ],
};
