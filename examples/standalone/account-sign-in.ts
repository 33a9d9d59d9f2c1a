import type { PasswordSignIn } from '../../account/index.js';
import { normalizeEmail } from '../../core/adapter-kit.js';
import { type Logger, type StoragePorts, seedSchema } from '../../core/index.js';

/**
 * Gives every seeded user with a `password` a sign-in to the account pages: the password is hashed
 * (scrypt) and only the hash is stored. Run after the seed is loaded, so that the users have their
 * ids. An email in several organizations signs in to the first of them. Every other user the
 * directory knows loses any sign-in an earlier start gave them (a password taken out of the seed, a
 * user taken out of it), on a shared store too. Answers how many users can sign in.
 *
 * @throws Error when the seed is malformed.
 */
export async function loadPasswords(
  signIn: PasswordSignIn,
  directory: StoragePorts['directory'],
  seed: unknown,
  logger: Logger,
): Promise<number> {
  const seen = new Set<string>();
  let loaded = 0;
  for (const organization of seedSchema.parse(seed).organizations) {
    const entries = organization.users.filter((entry) => {
      const email = normalizeEmail(entry.email);
      if (!entry.password) return false;
      if (!seen.has(email)) return seen.add(email);
      logger.warn('a seeded email is in several organizations: it signs in to the first one only', {
        email,
        organization: organization.id,
      });
      return false;
    });
    const users = await directory.findUsersByEmail(
      organization.id,
      entries.map((entry) => normalizeEmail(entry.email)),
    );
    const byEmail = new Map(users.map((user) => [normalizeEmail(user.email), user]));
    await Promise.all(
      entries.map(async ({ email, password = '' }) => {
        const user = byEmail.get(normalizeEmail(email));
        if (user === undefined) return;
        const { id: userId, organizationId, name } = user;
        await signIn.setPassword(
          { userId, organizationId, admin: user.role === 'admin', name, email: user.email },
          password,
        );
        loaded += 1;
      }),
    );
  }
  const withoutPassword = (await directory.listUsers()).filter(
    (user) => !seen.has(normalizeEmail(user.email)),
  );
  await Promise.all(withoutPassword.map((user) => signIn.removePassword(user.email)));
  return loaded;
}
