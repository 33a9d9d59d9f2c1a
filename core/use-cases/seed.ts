import { z } from 'zod';
import type { CoreContext } from '../context.js';
import { normalizeEmail } from '../domain/directory.js';
import { NotifyError } from '../errors.js';
import { emailAddress } from '../schemas/email-address.js';
import { boundedText, isBlank, oneLine, oneLineMessage } from '../schemas/text-rules.js';
import { maxValidKeysPerUser, storeApiKey } from './api-keys.js';

/**
 * A key as a caller can send it in `X-API-Key`: printable ASCII, since a header carries bytes read as
 * Latin-1 (the key is digested as UTF-8), and nothing to trim at either end, since HTTP drops it.
 */
const sendableKey = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * A name or label: 1 to `max` characters, not blank, each a whole character. A half of a surrogate
 * pair would reach a store that keeps text as UTF-8 (Redis, MongoDB) as U+FFFD, or be refused by its
 * JSON decoder: two ids would become one, or every request of a key would fail.
 */
const seedText = (max: number) => boundedText(1, max).refine((value) => !isBlank(value), 'must not be blank');

const seedKeySchema = z.strictObject({
  label: seedText(100).refine(oneLine, oneLineMessage),
  key: z
    .string()
    .min(16)
    .regex(sendableKey, 'must be printable ASCII, without spaces at either end, to be sent in X-API-Key'),
});
/** A name shown in messages' footers and on the account pages: one line, as a key's label is. */
const seedName = seedText(200).refine(oneLine, oneLineMessage);

const seedUserSchema = z.strictObject({
  email: emailAddress(),
  name: seedName,
  role: z.enum(['admin', 'member']).default('member'),
  /** Sign-in password for the account pages of the embedding application (empty: none); not used by the API. */
  password: boundedText(0, 1024).optional(),
  apiKeys: z
    .array(seedKeySchema)
    .max(maxValidKeysPerUser, `must hold at most ${maxValidKeysPerUser} keys, the most a user may`)
    .default([]),
});

/**
 * The seed file of README.md#the-standalone-service: organizations, their users and their users' keys
 * (plaintext). An organization id, a user's address within an organization (as the directory compares
 * them, case aside) and a key may each appear once: a second would silently replace the first (a
 * user's name and role) or be dropped (a key stays with the user it was first given to).
 */
export const seedSchema = z
  .strictObject({
    organizations: z.array(
      z.strictObject({
        id: seedText(200),
        name: seedName,
        users: z.array(seedUserSchema),
        /** The organization's Slack workspace installation, read by the standalone host's Slack transport. */
        slack: z.strictObject({ teamId: z.string().min(1), botToken: z.string().min(1) }).optional(),
        /** The organization's Microsoft 365 tenant, read by the standalone host's Teams transport. */
        teams: z.strictObject({ tenantId: z.string().min(1) }).optional(),
      }),
    ),
  })
  .superRefine(({ organizations }, context) => {
    const once = (seen: Map<string, string>, value: string, path: (string | number)[], what: string) => {
      const first = seen.get(value);
      if (first === undefined)
        seen.set(
          value,
          path
            .map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`))
            .join('')
            .slice(1),
        );
      else context.addIssue({ code: 'custom', path, message: `${what} already given at ${first}` });
    };
    const organizationIds = new Map<string, string>();
    const keys = new Map<string, string>();
    organizations.forEach((organization, o) => {
      once(organizationIds, organization.id, ['organizations', o, 'id'], 'this organization id is');
      const emails = new Map<string, string>();
      organization.users.forEach((user, u) => {
        const at: (string | number)[] = ['organizations', o, 'users', u];
        once(emails, normalizeEmail(user.email), [...at, 'email'], 'this user is');
        user.apiKeys.forEach((key, k) => {
          once(keys, key.key, [...at, 'apiKeys', k, 'key'], 'this key is');
        });
      });
    });
  });

/** A seed, as written in its file. */
export type Seed = z.input<typeof seedSchema>;

/**
 * Loads organizations, users and keys. Idempotent: several instances may seed one store with the
 * same file (users are matched by email, keys by digest), and keys are stored hashed, under random ids.
 */
export async function applySeed(context: CoreContext, seed: unknown): Promise<void> {
  const parsed = seedSchema.safeParse(seed);
  if (!parsed.success) {
    throw new NotifyError('invalid_request', `Invalid seed: ${z.prettifyError(parsed.error)}`);
  }
  const { directory } = context.storage;
  for (const organization of parsed.data.organizations) {
    await directory.saveOrganization({ id: organization.id, name: organization.name });
    for (const entry of organization.users) {
      const user = await directory.saveUser({
        id: context.ids.internalId('usr'),
        organizationId: organization.id,
        email: entry.email,
        name: entry.name,
        role: entry.role,
        chatLinks: [],
      });
      for (const key of entry.apiKeys) {
        // A random id, so that a leaked id says nothing about the key. A key the store already holds
        // keeps its record and id: `saveApiKey` ignores a digest it knows, even under another id, so a
        // second load (or another instance loading at the same time) adds nothing.
        await storeApiKey(context, user, key.label, key.key, context.ids.internalId('key'));
      }
    }
  }
}
