import type { CoreContext } from '../context.js';
import { normalizeEmail, type User } from '../domain/directory.js';
import { NotifyError } from '../errors.js';
import type { ResolvedRecipient } from './deliver-copies.js';

/** Each distinct recipient of a send, by normalized address, under the first spelling the caller gave it (trimmed). */
export function recipientSpellings(emails: readonly string[]): Map<string, string> {
  const spelling = new Map<string, string>();
  for (const email of emails) {
    const key = normalizeEmail(email);
    if (!spelling.has(key)) spelling.set(key, email.trim());
  }
  return spelling;
}

/**
 * Matches the recipients ({@link recipientSpellings}) against the users found for their normalized
 * addresses, refusing the whole send when any address matches nobody, naming every such address
 * once, in request order.
 */
export function matchRecipients(
  spelling: ReadonlyMap<string, string>,
  users: readonly User[],
): ResolvedRecipient[] {
  const userByKey = new Map(users.map((user) => [normalizeEmail(user.email), user]));
  const resolved: ResolvedRecipient[] = [];
  const unknown: string[] = [];
  for (const [key, email] of spelling) {
    const user = userByKey.get(key);
    if (user) resolved.push({ key, email, user });
    else unknown.push(email);
  }
  if (unknown.length > 0)
    throw new NotifyError('unprocessable', `Unknown user emails: ${unknown.join(', ')}`);
  return resolved;
}

/**
 * Matches the caller's addresses against the organization's users (case-insensitively, after
 * trimming), delivering duplicates once under their first spelling, as {@link matchRecipients} does.
 */
export async function resolveRecipients(
  context: CoreContext,
  organizationId: string,
  emails: readonly string[],
): Promise<ResolvedRecipient[]> {
  const spelling = recipientSpellings(emails);
  const users = await context.storage.directory.findUsersByEmail(organizationId, [...spelling.keys()]);
  return matchRecipients(spelling, users);
}
