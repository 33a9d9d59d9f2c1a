import type { CoreContext } from '../context.js';
import type { ApiKeyRecord, User } from '../domain/directory.js';
import { NotifyError } from '../errors.js';
import { boundedText, isBlank, oneLine, oneLineMessage } from '../schemas/text-rules.js';
import { digestApiKey, generateApiKey, visiblePrefix } from '../security/api-key-format.js';

/** A key's label, once trimmed: one line of text, as the key lists and the audit record show it. */
const labelRule = boundedText(1, 100).refine(oneLine, oneLineMessage);

/** The most valid (unrevoked) keys one user may hold at once. */
export const maxValidKeysPerUser = 50;

/**
 * The signed-in user of the embedding application, on whose behalf keys are managed. The
 * application vouches for who it is and whether it administers its organization (docs/behaviour.md#api-keys).
 */
export interface KeyActor {
  userId: string;
  admin: boolean;
}

/** An API key as listings show it: never the plaintext nor the digest. */
export interface ApiKeyView {
  id: string;
  label: string;
  /** First 12 characters of the key. */
  prefix: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, or null when never used. */
  lastUsedAt: string | null;
  /** ISO 8601, or null while valid. */
  revokedAt: string | null;
  owner: { name: string; email: string };
}

/** The answer of a key creation: the plaintext, shown this once, and the stored key. */
export interface CreatedApiKey {
  apiKey: string;
  key: ApiKeyView;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function view(record: ApiKeyRecord, owner: User): ApiKeyView {
  return {
    id: record.id,
    label: record.label,
    prefix: record.prefix,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUsedAt: iso(record.lastUsedAt),
    revokedAt: iso(record.revokedAt),
    owner: { name: owner.name, email: owner.email },
  };
}

async function actorUser(context: CoreContext, actor: KeyActor): Promise<User> {
  const user = await context.storage.directory.getUser(actor.userId);
  if (!user) throw new NotifyError('not_found', 'User not found');
  return user;
}

/** Stores a key record for a plaintext key (creation and seeding share it). */
export async function storeApiKey(
  context: CoreContext,
  owner: User,
  label: string,
  plaintext: string,
  id: string,
): Promise<ApiKeyRecord> {
  const record: ApiKeyRecord = {
    id,
    organizationId: owner.organizationId,
    userId: owner.id,
    label,
    prefix: visiblePrefix(plaintext),
    digest: digestApiKey(plaintext),
    createdAt: context.clock.now(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await context.storage.directory.saveApiKey(record);
  return record;
}

/**
 * Refuses a creation past the user's valid keys or their creation rate, which would let one member
 * grow without bound what every admin page and revocation reads. A refusal here takes no token; one
 * taken back after the store (racing creations, `createApiKey`) has used its token.
 */
async function admitKeyCreation(context: CoreContext, owner: User): Promise<void> {
  if ((await validKeysOf(context, owner)) >= maxValidKeysPerUser) throw tooManyKeys();
  const { burst, perSecond } = context.rateLimits.keyCreation;
  const short = await context.storage.rateLimits.take(
    [{ key: `key-creations:${owner.id}`, capacity: burst, refillPerSecond: perSecond }],
    1,
  );
  if (short !== null) {
    // The wait for one token from an empty bucket, at most a day: a rate so low that it is longer
    // would say nothing useful.
    const wait = Math.min(Math.ceil(1 / perSecond), 24 * 3600);
    throw new NotifyError(
      'rate_limited',
      `Too many API keys created: try again in ${wait >= 120 ? `${Math.ceil(wait / 60)} minutes` : `${wait} seconds`}`,
      { retryAfterSeconds: wait },
    );
  }
}

/** How many unrevoked keys `owner` holds. */
async function validKeysOf(context: CoreContext, owner: User): Promise<number> {
  const keys = await context.storage.directory.listApiKeys({
    organizationId: owner.organizationId,
    userId: owner.id,
  });
  return keys.filter((key) => key.revokedAt === null).length;
}

const tooManyKeys = () =>
  new NotifyError(
    'unprocessable',
    `You hold ${maxValidKeysPerUser} valid API keys, the most a user may: revoke one to create another`,
  );

/** Creates a personal key for the actor; the plaintext exists only in this answer. */
export async function createApiKey(
  context: CoreContext,
  actor: KeyActor,
  label: string,
): Promise<CreatedApiKey> {
  const trimmed = label.trim();
  // Counted as every text of the API is: in characters (code points), each a whole one.
  const checked = labelRule.safeParse(trimmed);
  if (!checked.success || isBlank(trimmed)) {
    const rule = checked.success ? 'must be 1 to 100 characters' : checked.error.issues[0]?.message;
    throw new NotifyError('invalid_request', `label: ${rule}`);
  }
  const owner = await actorUser(context, actor);
  await admitKeyCreation(context, owner);
  const plaintext = generateApiKey();
  const record = await storeApiKey(context, owner, trimmed, plaintext, context.ids.internalId('key'));
  // Creations at once (several tabs, instances) all passed the count before any was stored: each
  // counts again once stored, and one that finds the user past the limit takes itself back, so that
  // racing creations may all be refused but never leave more than the limit valid.
  if ((await validKeysOf(context, owner)) > maxValidKeysPerUser) {
    await context.storage.directory.revokeApiKey(record.id, context.clock.now());
    throw tooManyKeys();
  }
  return { apiKey: plaintext, key: view(record, owner) };
}

/**
 * Keys the actor may see: their own, or with `scope: 'organization'` (admins only) every key of
 * their organization, optionally filtered by a case-insensitive search over label, prefix and
 * owner name and email.
 */
export async function listApiKeys(
  context: CoreContext,
  actor: KeyActor,
  options: { scope?: 'own' | 'organization'; search?: string } = {},
): Promise<ApiKeyView[]> {
  const user = await actorUser(context, actor);
  const everyone = options.scope === 'organization';
  if (everyone && !actor.admin)
    throw new NotifyError('not_found', 'Only organization admins can list every key');
  const { directory } = context.storage;
  const [records, users] = await Promise.all([
    directory.listApiKeys({ organizationId: user.organizationId, ...(everyone ? {} : { userId: user.id }) }),
    everyone ? directory.listUsers(user.organizationId) : [user],
  ]);
  const owners = new Map(users.map((u) => [u.id, u]));
  const needle = options.search?.trim().toLowerCase() ?? '';
  return records.flatMap((record) => {
    const owner = owners.get(record.userId);
    if (!owner) return [];
    const keyView = view(record, owner);
    const haystack = [keyView.label, keyView.prefix, owner.name, owner.email].join('\n').toLowerCase();
    return needle === '' || haystack.includes(needle) ? [keyView] : [];
  });
}

/**
 * Revokes a key of the actor, or any key of the organization for an admin; immediate and final.
 * Answers whether this call revoked it: false when it was revoked already, by an earlier call or by
 * one racing this one on any instance (the store revokes once, and the first time stands), so that
 * only its caller records it.
 */
export async function revokeApiKey(context: CoreContext, actor: KeyActor, keyId: string): Promise<boolean> {
  const user = await actorUser(context, actor);
  const { directory } = context.storage;
  const filter = { organizationId: user.organizationId, ...(actor.admin ? {} : { userId: user.id }) };
  const key = (await directory.listApiKeys(filter)).find((each) => each.id === keyId);
  if (key === undefined) throw new NotifyError('not_found', 'API key not found');
  if (key.revokedAt !== null) return false;
  return directory.revokeApiKey(keyId, context.clock.now());
}
