import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdmissionRequest,
  type ApiKeyRecord,
  admittedRequest,
  apiKeyBucketKey,
  type BucketRate,
  type BucketSpec,
  type ClaimedDueItem,
  type DeliveryRecord,
  type DueItem,
  type DueWorkChanges,
  type FailedCallback,
  type IdempotencyClaim,
  type IdempotencyScope,
  type IdempotencyTiming,
  type InteractiveRequest,
  type Organization,
  organizationBucketKey,
  type RequestToCreate,
  type StoragePorts,
  timeoutItemId,
  type User,
} from '../core/adapter-kit.js';

/** What an adapter hands the contract suite for one test. */
export interface StorageContractHarness {
  /** Fresh, empty storage: nothing another test wrote may be visible (use a unique key prefix or database). */
  storage: StoragePorts;
  /**
   * Advances the clock the store itself reads (rate-limit refill, idempotency expiry). Omit it when
   * that clock is a server's; the suite then waits in real time, briefly.
   */
  clock?: { advance(ms: number): void };
  /** Releases what the setup took (drops keys, closes clients). */
  teardown(): Promise<void>;
  /**
   * Another instance of the service on the same store, over a connection of its own. Omit it for a
   * store held in one process; the suite then uses `storage` as the other instance too.
   */
  secondInstance?(): Promise<StoragePorts>;
}

/** Builds the storage of one test; called before each test, and its teardown after. */
export type StorageContractSetup = () => Promise<StorageContractHarness>;

/** A fixed instant for every time the caller passes in (due work, leases). */
const t0 = Date.UTC(2030, 0, 1);
const hour = 3_600_000;
const noDue: DueWorkChanges = { enqueue: [], cancel: [] };

const uid = (prefix: string): string => `${prefix}_${randomUUID().replaceAll('-', '')}`;
const byId = <T extends { id: string }>(items: T[]): T[] =>
  [...items].sort((a, b) => a.id.localeCompare(b.id));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const organization = (overrides: Partial<Organization> = {}): Organization => ({
  id: uid('org'),
  name: 'Acme',
  ...overrides,
});

const user = (organizationId: string, overrides: Partial<User> = {}): User => ({
  id: uid('usr'),
  organizationId,
  email: `${uid('u')}@example.test`,
  name: 'Ada',
  role: 'member',
  chatLinks: [{ platform: 'slack', installationId: 'T1', userRef: 'U1' }],
  ...overrides,
});

const apiKey = (
  organizationId: string,
  userId: string,
  overrides: Partial<ApiKeyRecord> = {},
): ApiKeyRecord => ({
  id: uid('key'),
  organizationId,
  userId,
  label: 'ci',
  prefix: 'cn_abcd',
  digest: randomUUID().replaceAll('-', '').repeat(2),
  createdAt: t0,
  lastUsedAt: null,
  revokedAt: null,
  ...overrides,
});

const interactiveRequest = (overrides: Partial<InteractiveRequest> = {}): InteractiveRequest => ({
  id: uid('req'),
  organizationId: 'org_1',
  version: 0,
  status: 'pending',
  message: 'Deploy to production?',
  options: [
    { text: 'Yes', value: 'yes' },
    { text: 'No', value: 'no' },
  ],
  mode: 'onUserAction',
  timeoutMinutes: 60,
  createdAt: t0,
  expiresAt: t0 + hour,
  finishedAt: null,
  externalReferenceId: null,
  sender: { userId: 'usr_1', name: 'Ada' },
  callback: null,
  recipients: [
    { email: 'Bob@Example.test', key: 'bob@example.test', value: null, respondedAt: null, expired: false },
  ],
  ...overrides,
});

/** A due item whose id, unless given, is `<kind>:<requestId>` as the core's are (`timeoutItemId`). */
const dueItem = (overrides: Partial<DueItem> = {}): DueItem => {
  const kind = overrides.kind ?? 'timeout';
  const requestId = overrides.requestId ?? uid('req');
  return { id: `${kind}:${requestId}`, kind, requestId, runAt: t0, attempt: 0, ...overrides };
};

const delivery = (sendId: string, recipient: string, platform: string, ts: string): DeliveryRecord => ({
  sendId,
  recipient,
  platform,
  ref: { channel: 'C1', ts },
  deliveredAt: t0,
});

/**
 * The behaviour every storage adapter must share, one `describe` per port. Nothing here relies on
 * an adapter's internals: times the caller passes are fixed, and the store's own clock is advanced
 * through the harness, or really waited for when the harness has no clock.
 */
export function describeStorageContract(name: string, setup: StorageContractSetup): void {
  describe(`storage contract: ${name}`, () => {
    let harness: StorageContractHarness;
    let storage: StoragePorts;

    beforeEach(async () => {
      harness = await setup();
      storage = harness.storage;
    });

    afterEach(async () => {
      await harness.teardown();
    });

    /** Lets `ms` pass on the store's own clock. */
    const elapse = async (ms: number): Promise<void> => {
      if (harness.clock === undefined) await sleep(ms);
      else harness.clock.advance(ms);
    };

    describe('DirectoryStore', () => {
      it('saves, replaces and reads organizations', async () => {
        const org = organization();
        await storage.directory.saveOrganization(org);
        await storage.directory.saveOrganization(org);
        expect(await storage.directory.getOrganization(org.id)).toEqual(org);
        await storage.directory.saveOrganization({ ...org, name: 'Acme Corp' });
        expect(await storage.directory.getOrganization(org.id)).toEqual({ ...org, name: 'Acme Corp' });
        expect(await storage.directory.getOrganization(uid('org'))).toBeNull();
      });

      it('saves a user and reads it back by id', async () => {
        const ada = user('org_1');
        expect(await storage.directory.saveUser(ada)).toEqual(ada);
        expect(await storage.directory.getUser(ada.id)).toEqual(ada);
        expect(await storage.directory.getUser(uid('usr'))).toBeNull();
      });

      it('upserts users by organization and normalized email, keeping the first id', async () => {
        const first = user('org_1', { email: 'Ada@Example.test' });
        await storage.directory.saveUser(first);
        const again = user('org_1', { email: '  ada@EXAMPLE.test ', name: 'Ada L.', role: 'admin' });
        const stored = await storage.directory.saveUser(again);
        expect(stored).toEqual({ ...again, id: first.id });
        expect(await storage.directory.getUser(first.id)).toEqual(stored);
        expect(await storage.directory.getUser(again.id)).toBeNull();
        expect(await storage.directory.listUsers('org_1')).toEqual([stored]);
        expect(await storage.directory.saveUser(again)).toEqual(stored);
        expect(await storage.directory.listUsers('org_1')).toHaveLength(1);
      });

      it('keeps one user of many saved at once with one organization and email, answering each its id', async () => {
        const saves = Array.from({ length: 20 }, (_, index) =>
          user('org_1', { email: index % 2 === 0 ? 'Ada@Example.test' : 'ada@example.TEST' }),
        );
        const stored = await Promise.all(saves.map((save) => storage.directory.saveUser(save)));
        const [first] = await storage.directory.listUsers('org_1');
        expect(await storage.directory.listUsers('org_1')).toHaveLength(1);
        expect(new Set(stored.map((one) => one.id))).toEqual(new Set([first?.id]));
        expect(saves.map((save) => save.id)).toContain(first?.id);
      });

      it('keeps users of different organizations apart even with the same email', async () => {
        const a = await storage.directory.saveUser(user('org_a', { email: 'same@example.test' }));
        const b = await storage.directory.saveUser(user('org_b', { email: 'same@example.test' }));
        expect(a.id).not.toBe(b.id);
        expect(await storage.directory.listUsers('org_a')).toEqual([a]);
        expect(byId(await storage.directory.listUsers())).toEqual(expect.arrayContaining(byId([a, b])));
      });

      it('stops finding a user under an email it no longer has', async () => {
        const ada = await storage.directory.saveUser(user('org_1', { email: 'old@example.test' }));
        await storage.directory.saveUser({ ...ada, email: 'new@example.test' });
        expect(await storage.directory.findUsersByEmail('org_1', ['old@example.test'])).toEqual([]);
        expect(await storage.directory.findUsersByEmail('org_1', ['new@example.test'])).toEqual([
          { ...ada, email: 'new@example.test' },
        ]);
      });

      it('finds users by normalized email within one organization only', async () => {
        const ada = await storage.directory.saveUser(user('org_1', { email: 'Ada@Example.test' }));
        const bob = await storage.directory.saveUser(user('org_1', { email: 'bob@example.test' }));
        await storage.directory.saveUser(user('org_2', { email: 'carol@example.test' }));
        const found = await storage.directory.findUsersByEmail('org_1', [
          'ada@example.test',
          'bob@example.test',
          'carol@example.test',
          'nobody@example.test',
        ]);
        expect(byId(found)).toEqual(byId([ada, bob]));
        expect(await storage.directory.findUsersByEmail('org_1', [])).toEqual([]);
        expect(await storage.directory.findUsersByEmail('org_2', ['ada@example.test'])).toEqual([]);
      });

      it('lists the users of one organization or of all', async () => {
        const a1 = await storage.directory.saveUser(user('org_a'));
        const a2 = await storage.directory.saveUser(user('org_a'));
        const b1 = await storage.directory.saveUser(user('org_b'));
        expect(byId(await storage.directory.listUsers('org_a'))).toEqual(byId([a1, a2]));
        expect(await storage.directory.listUsers('org_none')).toEqual([]);
        expect(byId(await storage.directory.listUsers())).toEqual(expect.arrayContaining(byId([a1, a2, b1])));
      });

      it('finds the principal of a key digest with its owner and organization', async () => {
        const org = organization();
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        expect(await storage.directory.findPrincipalByDigest(key.digest)).toEqual({
          apiKey: key,
          user: owner,
          organization: org,
        });
        expect(await storage.directory.findPrincipalByDigest('0'.repeat(64))).toBeNull();
      });

      it('saves a key digest once: a second save of the same digest changes nothing', async () => {
        const owner = await storage.directory.saveUser(user('org_1'));
        const key = apiKey('org_1', owner.id);
        await storage.directory.saveApiKey(key);
        await storage.directory.saveApiKey({ ...key, id: uid('key'), label: 'other' });
        await storage.directory.saveApiKey(key);
        expect(await storage.directory.listApiKeys({ organizationId: 'org_1' })).toEqual([key]);
      });

      it('touches a key', async () => {
        const org = organization();
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        await storage.directory.touchApiKey(key.id, t0 + 60_000);
        const principal = await storage.directory.findPrincipalByDigest(key.digest);
        expect(principal?.apiKey.lastUsedAt).toBe(t0 + 60_000);
        await expect(storage.directory.touchApiKey(uid('key'), t0)).resolves.toBeUndefined();
      });

      it('revokes a key once, keeping the first time, and still returns it by digest', async () => {
        const org = organization();
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        expect(await storage.directory.revokeApiKey(key.id, t0 + 1000)).toBe(true);
        expect(await storage.directory.revokeApiKey(key.id, t0 + 5000)).toBe(false);
        const principal = await storage.directory.findPrincipalByDigest(key.digest);
        expect(principal?.apiKey).toEqual({ ...key, revokedAt: t0 + 1000 });
        expect(await storage.directory.revokeApiKey(uid('key'), t0)).toBe(false);
      });

      it('answers true to one of many revocations of a key at once, in the same millisecond', async () => {
        const org = organization();
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        const answers = await Promise.all(
          Array.from({ length: 8 }, () => storage.directory.revokeApiKey(key.id, t0 + 1000)),
        );
        expect(answers.filter(Boolean)).toHaveLength(1);
      });

      it('lists keys newest first, filtered by organization and owner', async () => {
        const ada = await storage.directory.saveUser(user('org_1'));
        const bob = await storage.directory.saveUser(user('org_1'));
        const old = apiKey('org_1', ada.id, { createdAt: t0 });
        const newest = apiKey('org_1', bob.id, { createdAt: t0 + 2000 });
        const middle = apiKey('org_1', ada.id, { createdAt: t0 + 1000 });
        const foreign = apiKey('org_2', ada.id, { createdAt: t0 + 3000 });
        for (const key of [old, newest, middle, foreign]) await storage.directory.saveApiKey(key);
        await storage.directory.revokeApiKey(middle.id, t0 + 1500);
        const revokedMiddle = { ...middle, revokedAt: t0 + 1500 };
        expect(await storage.directory.listApiKeys({ organizationId: 'org_1' })).toEqual([
          newest,
          revokedMiddle,
          old,
        ]);
        expect(await storage.directory.listApiKeys({ organizationId: 'org_1', userId: ada.id })).toEqual([
          revokedMiddle,
          old,
        ]);
        expect(await storage.directory.listApiKeys({ organizationId: 'org_3' })).toEqual([]);
      });

      it('returns copies that callers cannot use to change stored state', async () => {
        const ada = await storage.directory.saveUser(user('org_1'));
        ada.name = 'Mallory';
        ada.chatLinks.push({ platform: 'teams', installationId: 'X', userRef: 'Y' });
        const stored = await storage.directory.getUser(ada.id);
        expect(stored?.name).toBe('Ada');
        expect(stored?.chatLinks).toHaveLength(1);
      });
    });

    describe('RequestStore', () => {
      const timeoutOf = (request: InteractiveRequest): DueItem =>
        dueItem({ id: timeoutItemId(request.id), requestId: request.id, runAt: request.expiresAt });

      /** Every due item, however far in the future, without leaving any claimed for long. */
      const allDue = async (): Promise<ClaimedDueItem[]> => {
        const claimed = await storage.dueWork.claim(t0 + 1000 * hour, 10_000, 1);
        return byId(claimed);
      };

      it('creates a request and reads it back', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        expect(await storage.requests.getRequest(request.id)).toEqual(request);
        expect(await storage.requests.getRequest(uid('req'))).toBeNull();
      });

      it('reads back the deadline as written, whether or not it is the creation plus the timeout', async () => {
        const requests = [
          interactiveRequest({ timeoutMinutes: 0.75, expiresAt: t0 + 45_000 }),
          interactiveRequest({ timeoutMinutes: 60, expiresAt: t0 + 7 }),
          interactiveRequest({ timeoutMinutes: 1 / 3, expiresAt: t0 + 20_000 }),
        ];
        for (const request of requests) await storage.requests.createRequest(request, noDue);
        for (const request of requests)
          expect(await storage.requests.getRequest(request.id)).toEqual(request);
      });

      it('keeps the answers of requests to the same recipients apart', async () => {
        const recipients = (): InteractiveRequest['recipients'] => [
          {
            email: 'Bob@Example.test',
            key: 'bob@example.test',
            value: null,
            respondedAt: null,
            expired: false,
          },
          {
            email: 'carol@example.test',
            key: 'carol@example.test',
            value: null,
            respondedAt: null,
            expired: false,
          },
        ];
        const first = interactiveRequest({ recipients: recipients() });
        const second = interactiveRequest({ recipients: recipients() });
        await storage.requests.createRequest(first, noDue);
        await storage.requests.createRequest(second, noDue);
        const answered = recipients().map((r, index) =>
          index === 0 ? { ...r, value: 'yes', respondedAt: t0 } : r,
        );
        expect(
          await storage.requests.updateRequest({ ...first, version: 1, recipients: answered }, 0, noDue),
        ).toBe(true);
        const read = await storage.requests.getRequest(second.id);
        expect(read).toEqual(second);
        // What a read hands out is the caller's: changing it changes nothing stored.
        if (read?.recipients[0]) read.recipients[0].value = 'no';
        expect(await storage.requests.getRequest(second.id)).toEqual(second);
        expect((await storage.requests.getRequest(first.id))?.recipients).toEqual(answered);
      });

      it('schedules the due work of a create in the same step', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, { enqueue: [timeoutOf(request)], cancel: [] });
        expect(await storage.dueWork.nextRunAt()).toBe(request.expiresAt);
        const claimed = await storage.dueWork.claim(request.expiresAt, 10, 1000);
        expect(claimed.map((c) => c.id)).toEqual([timeoutItemId(request.id)]);
      });

      it('refuses a second create with the same id, applying none of its due work', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        const stray = dueItem();
        await expect(
          storage.requests.createRequest({ ...request, message: 'other' }, { enqueue: [stray], cancel: [] }),
        ).rejects.toThrow();
        expect(await storage.requests.getRequest(request.id)).toEqual(request);
        expect(await storage.dueWork.nextRunAt()).toBeNull();
      });

      it('lets exactly one of many creates at once with one id store its request and due work', async () => {
        const base = interactiveRequest();
        const attempts = Array.from({ length: 20 }, (_, index) => ({
          request: { ...base, message: `attempt ${index}` },
          due: dueItem({ id: `timeout:${base.id}:${index}`, requestId: base.id, runAt: t0 + index }),
        }));
        const outcomes = await Promise.allSettled(
          attempts.map(({ request, due }) =>
            storage.requests.createRequest(request, { enqueue: [due], cancel: [] }),
          ),
        );
        const won = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [index] : []));
        expect(won).toHaveLength(1);
        const winner = attempts[won[0] ?? -1];
        expect(await storage.requests.getRequest(base.id)).toEqual(winner?.request);
        expect((await allDue()).map((item) => item.id)).toEqual([winner?.due.id]);
      });

      it('updates when the expected version is current, applying the due changes', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, { enqueue: [timeoutOf(request)], cancel: [] });
        const next: InteractiveRequest = { ...request, version: 1, status: 'finished', finishedAt: t0 + 5 };
        const callback = dueItem({ id: `callback:${request.id}`, kind: 'callback', requestId: request.id });
        const changes = { enqueue: [callback], cancel: [timeoutItemId(request.id)] };
        expect(await storage.requests.updateRequest(next, 0, changes)).toBe(true);
        expect(await storage.requests.getRequest(request.id)).toEqual(next);
        expect((await allDue()).map((c) => c.id)).toEqual([callback.id]);
      });

      it('cancels due items by id, claimed or not, scheduled by a request write or on their own, skipping unknown ids', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, { enqueue: [timeoutOf(request)], cancel: [] });
        const pledge = dueItem({ id: `refresh:${request.id}:1`, kind: 'refresh', requestId: request.id });
        const changed = { ...request, version: 1, message: 'changed' };
        expect(await storage.requests.updateRequest(changed, 0, { enqueue: [pledge], cancel: [] })).toBe(
          true,
        );
        const alone = dueItem({ kind: 'callback', runAt: t0 + 10 });
        const held = dueItem({ runAt: t0 - 10 });
        await storage.dueWork.enqueue([alone, held]);
        const [claimed] = await storage.dueWork.claim(t0 - 10, 1, 60_000);
        expect(claimed?.id).toBe(held.id);
        await storage.dueWork.cancel([]);
        await storage.dueWork.cancel([pledge.id, alone.id, held.id, 'timeout:req_unknown']);
        if (claimed) await storage.dueWork.complete(claimed);
        expect((await allDue()).map((c) => c.id)).toEqual([timeoutItemId(request.id)]);
      });

      it('changes nothing, due work included, when the expected version is stale', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, { enqueue: [timeoutOf(request)], cancel: [] });
        const first = { ...request, version: 1, message: 'first' };
        expect(await storage.requests.updateRequest(first, 0, noDue)).toBe(true);
        const late = { ...request, version: 1, message: 'late' };
        const changes = { enqueue: [dueItem()], cancel: [timeoutItemId(request.id)] };
        expect(await storage.requests.updateRequest(late, 0, changes)).toBe(false);
        expect(await storage.requests.getRequest(request.id)).toEqual(first);
        expect((await allDue()).map((c) => c.id)).toEqual([timeoutItemId(request.id)]);
      });

      it('answers false for an unknown request', async () => {
        const ghost = interactiveRequest({ version: 1 });
        expect(await storage.requests.updateRequest(ghost, 0, { enqueue: [dueItem()], cancel: [] })).toBe(
          false,
        );
        expect(await storage.requests.getRequest(ghost.id)).toBeNull();
        expect(await storage.dueWork.nextRunAt()).toBeNull();
      });

      it('lets exactly one of 50 concurrent writers at the same version win, with only its due changes', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, { enqueue: [timeoutOf(request)], cancel: [] });
        const writers = Array.from({ length: 50 }, (_, i) =>
          storage.requests.updateRequest({ ...request, version: 1, message: `writer ${i}` }, 0, {
            enqueue: [dueItem({ id: `writer-${i}`, requestId: request.id })],
            cancel: [timeoutItemId(request.id)],
          }),
        );
        const results = await Promise.all(writers);
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        const stored = await storage.requests.getRequest(request.id);
        expect(stored).toEqual({ ...request, version: 1, message: `writer ${winners[0]}` });
        expect((await allDue()).map((c) => c.id)).toEqual([`writer-${winners[0]}`]);
      });

      it('stores copies: neither the written nor the read object can change stored state', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        const expected = structuredClone(request);
        request.recipients[0]!.value = 'yes';
        const read = await storage.requests.getRequest(request.id);
        expect(read).toEqual(expected);
        read!.options.pop();
        expect(await storage.requests.getRequest(request.id)).toEqual(expected);
      });
      it('forgets a request and its copies once the ttl of the write that finished it has passed', async () => {
        const request = interactiveRequest();
        const other = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        await storage.requests.createRequest(other, noDue);
        const copy = delivery(request.id, 'bob@example.test', 'slack', '1');
        const otherCopy = delivery(other.id, 'bob@example.test', 'slack', '2');
        await storage.deliveries.addDelivery(copy);
        await storage.deliveries.addDelivery(otherCopy);
        const finished: InteractiveRequest = { ...request, version: 1, status: 'finished', finishedAt: t0 };
        expect(await storage.requests.updateRequest(finished, 0, noDue, { ttlMs: 200 })).toBe(true);
        expect(await storage.requests.updateRequest({ ...other, version: 1 }, 0, noDue)).toBe(true);
        expect(await storage.requests.getRequest(request.id)).toEqual(finished);
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([copy]);
        await elapse(400);
        expect(await storage.requests.getRequest(request.id)).toBeNull();
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([]);
        expect(await storage.requests.updateRequest({ ...finished, version: 2 }, 1, noDue)).toBe(false);
        expect(await storage.requests.getRequest(other.id)).toEqual({ ...other, version: 1 });
        expect(await storage.deliveries.listDeliveries(other.id)).toEqual([otherCopy]);
      });
      it('refuses to create a request under the id of a stored one', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        await expect(
          storage.requests.createRequest({ ...request, message: 'Again?' }, noDue),
        ).rejects.toThrow();
        expect(await storage.requests.getRequest(request.id)).toEqual(request);
      });
      it('creates a request again under the id of one whose ttl has passed, as if it never was', async () => {
        // A send withdrawn (finished with a ttl of 1 ms) is created again by a repeat of its key.
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        await storage.deliveries.addDelivery(delivery(request.id, 'bob@example.test', 'slack', '1'));
        const finished: InteractiveRequest = { ...request, version: 1, status: 'finished', finishedAt: t0 };
        expect(await storage.requests.updateRequest(finished, 0, noDue, { ttlMs: 200 })).toBe(true);
        await elapse(400);
        const again: InteractiveRequest = { ...request, message: 'Again?' };
        await storage.requests.createRequest(again, noDue);
        expect(await storage.requests.getRequest(request.id)).toEqual(again);
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([]);
        // Its finish, which sets the expiry of its copies, brings back none of the old request's.
        const done: InteractiveRequest = { ...again, version: 1, status: 'finished', finishedAt: t0 };
        expect(await storage.requests.updateRequest(done, 0, noDue, { ttlMs: hour })).toBe(true);
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([]);
      });
      it('forgets a copy recorded after the write that finished its request, with the request', async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        const finished: InteractiveRequest = { ...request, version: 1, status: 'finished', finishedAt: t0 };
        expect(await storage.requests.updateRequest(finished, 0, noDue, { ttlMs: 200 })).toBe(true);
        // The request timed out while its first copy was on its way: the copy is recorded after.
        const late = delivery(request.id, 'bob@example.test', 'slack', '1');
        await storage.deliveries.addDelivery(late);
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([late]);
        await elapse(400);
        expect(await storage.requests.getRequest(request.id)).toBeNull();
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([]);
      });
    });

    describe('DeliveryStore', () => {
      it('forgets every copy of a send once the ttl of a copy recorded with one has passed', async () => {
        const sendId = uid('notif');
        const kept = uid('notif');
        const first = delivery(sendId, 'a@example.test', 'slack', '1');
        const second = delivery(sendId, 'b@example.test', 'slack', '2');
        const other = delivery(kept, 'a@example.test', 'slack', '3');
        await storage.deliveries.addDelivery(first);
        await storage.deliveries.addDelivery(second, { ttlMs: 200 });
        await storage.deliveries.addDelivery(other);
        expect(await storage.deliveries.listDeliveries(sendId)).toEqual([first, second]);
        await elapse(400);
        expect(await storage.deliveries.listDeliveries(sendId)).toEqual([]);
        expect(await storage.deliveries.listDeliveries(kept)).toEqual([other]);
      });

      it('lists the copies of a send in the order they were recorded', async () => {
        const sendId = uid('notif');
        const copies = [
          delivery(sendId, 'b@example.test', 'slack', '1'),
          delivery(sendId, 'a@example.test', 'slack', '2'),
          delivery(sendId, 'a@example.test', 'teams', '3'),
        ];
        for (const copy of copies) await storage.deliveries.addDelivery(copy);
        await storage.deliveries.addDelivery(delivery(uid('notif'), 'a@example.test', 'slack', '9'));
        expect(await storage.deliveries.listDeliveries(sendId)).toEqual(copies);
        expect(await storage.deliveries.listDeliveries(uid('notif'))).toEqual([]);
      });

      it('replaces a copy recorded again for the same send, recipient and platform, keeping its place', async () => {
        const sendId = uid('req');
        const first = delivery(sendId, 'a@example.test', 'slack', '1');
        const second = delivery(sendId, 'b@example.test', 'slack', '2');
        await storage.deliveries.addDelivery(first);
        await storage.deliveries.addDelivery(second);
        const replaced = { ...first, ref: { channel: 'C2', ts: '7' }, deliveredAt: t0 + 10 };
        await storage.deliveries.addDelivery(replaced);
        expect(await storage.deliveries.listDeliveries(sendId)).toEqual([replaced, second]);
      });

      it('keeps the copies of a send apart whatever their refs hold, a copy recorded again included', async () => {
        const sendId = uid('req');
        const copies: DeliveryRecord[] = [
          { ...delivery(sendId, 'a@example.test', 'inbox', '1'), ref: {} },
          { ...delivery(sendId, 'b@example.test', 'teams', '2'), ref: { activityId: 'x' } },
          { ...delivery(sendId, 'c@example.test', 'inbox', '3'), ref: {}, deliveredAt: t0 + 1 },
          delivery(sendId, 'd@example.test', 'slack', '4'),
        ];
        for (const copy of copies) await storage.deliveries.addDelivery(copy);
        expect(await storage.deliveries.listDeliveries(sendId)).toEqual(copies);
        const grown = { ...copies[0]!, ref: { conversationId: 'a:1', activityId: 'y', serviceUrl: 'z' } };
        const emptied = { ...copies[1]!, ref: {} };
        await storage.deliveries.addDelivery(grown);
        await storage.deliveries.addDelivery(emptied);
        expect(await storage.deliveries.listDeliveries(sendId)).toEqual([
          grown,
          emptied,
          copies[2],
          copies[3],
        ]);
      });

      it("keeps the copies of a request to its own recipients and to others in the order recorded, through the request's writes", async () => {
        const waiting = { value: null, respondedAt: null, expired: false };
        const request = interactiveRequest({
          recipients: [
            { email: 'Ann@Example.test', key: 'ann@example.test', ...waiting },
            { email: 'bo@example.test', key: 'bo@example.test', ...waiting },
            { email: 'cy@example.test', key: 'cy@example.test', ...waiting, expired: true },
          ],
        });
        await storage.requests.createRequest(request, noDue);
        const copyTo = (recipient: string, platform: string, deliveredAt: number): DeliveryRecord => ({
          ...delivery(request.id, recipient, platform, String(deliveredAt)),
          deliveredAt,
        });
        const copies = [
          copyTo('cy@example.test', 'slack', t0 + 3),
          copyTo('stranger@example.test', 'slack', t0 + 4),
          // Recorded by an instance whose clock is behind the one that created the request.
          copyTo('ann@example.test', 'slack', t0 - 250),
          copyTo('ann@example.test', 'teams', t0 + 0.5),
          copyTo('bo@example.test', 'slack', t0 + 2 ** 40),
        ];
        for (const copy of copies) await storage.deliveries.addDelivery(copy);
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual(copies);
        const answered: InteractiveRequest = {
          ...request,
          version: 1,
          recipients: request.recipients.map((r, i) =>
            i === 1 ? { ...r, value: 'yes', respondedAt: t0 + 9 } : r,
          ),
        };
        expect(await storage.requests.updateRequest(answered, 0, noDue)).toBe(true);
        const again = { ...copies[2]!, ref: { channel: 'C9', ts: '9' }, deliveredAt: t0 + 7 };
        await storage.deliveries.addDelivery(again);
        await storage.deliveries.addDelivery(copyTo('bo@example.test', 'teams', t0 + 8));
        expect(await storage.deliveries.listDeliveries(request.id)).toEqual([
          ...copies.slice(0, 2),
          again,
          ...copies.slice(3),
          copyTo('bo@example.test', 'teams', t0 + 8),
        ]);
        expect(await storage.requests.getRequest(request.id)).toEqual(answered);
      });

      it("answers the version of the send's request as it stands once the copy is recorded, and null without one", async () => {
        const request = interactiveRequest();
        await storage.requests.createRequest(request, noDue);
        const copy = delivery(request.id, 'a@example.test', 'slack', '1');
        expect(await storage.deliveries.addDelivery(copy)).toBe(0);
        expect(await storage.requests.updateRequest({ ...request, version: 1 }, 0, noDue)).toBe(true);
        expect(
          await storage.deliveries.addDelivery(delivery(request.id, 'b@example.test', 'slack', '2')),
        ).toBe(1);
        expect(await storage.deliveries.addDelivery(copy, { ttlMs: hour })).toBe(1);
        expect(
          await storage.deliveries.addDelivery(delivery(uid('notif'), 'a@example.test', 'slack', '3')),
        ).toBeNull();
      });
    });

    describe('IdempotencyStore', () => {
      const timing: IdempotencyTiming = { now: t0, leaseMs: 30_000, ttlMs: 24 * hour };
      const scope = (): IdempotencyScope => ({ organizationId: uid('org'), key: uid('idem') });

      it('acquires a new key under the proposed send id, then answers busy to a repeat while the lease lives', async () => {
        const s = scope();
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_first', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_first',
        });
        expect(
          await storage.idempotency.acquire(s, 'fp1', 'notif_second', { ...timing, now: t0 + 29_000 }),
        ).toEqual({ outcome: 'busy' });
      });

      it('lets one of many acquisitions of a new key at once acquire it; the others find it busy', async () => {
        const s = scope();
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, n) => storage.idempotency.acquire(s, 'fp1', `notif_${n}`, timing)),
        );
        expect(outcomes.filter((outcome) => outcome.outcome === 'acquired')).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome.outcome === 'busy')).toHaveLength(9);
      });

      it('answers mismatch to the same key with another fingerprint, running or completed', async () => {
        const s = scope();
        await storage.idempotency.acquire(s, 'fp1', 'notif_1', timing);
        expect(await storage.idempotency.acquire(s, 'fp2', 'notif_2', timing)).toEqual({
          outcome: 'mismatch',
        });
        await storage.idempotency.complete(s, 'notif_1', { status: 200, body: '{}' });
        expect(await storage.idempotency.acquire(s, 'fp2', 'notif_3', timing)).toEqual({
          outcome: 'mismatch',
        });
      });

      it('replays the completed response exactly', async () => {
        const s = scope();
        await storage.idempotency.acquire(s, 'fp1', 'notif_1', timing);
        const response = {
          status: 200,
          body: '{"status":"ok", "notification_id":"notif_x","note":"é ✓\\n"}',
        };
        await storage.idempotency.complete(s, 'notif_1', response);
        const later = { ...timing, now: t0 + hour };
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_2', later)).toEqual({
          outcome: 'completed',
          response,
        });
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_3', later)).toEqual({
          outcome: 'completed',
          response,
        });
      });

      it('resumes a failed attempt under its first send id, not the new proposal, then holds the key again', async () => {
        const s = scope();
        await storage.idempotency.acquire(s, 'fp1', 'notif_first', timing);
        await storage.idempotency.fail(s, 'notif_first');
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_second', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_first',
        });
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_third', timing)).toEqual({
          outcome: 'busy',
        });
        await storage.idempotency.fail(s, 'notif_second');
        expect(await storage.idempotency.acquire(s, 'fp2', 'notif_fourth', timing)).toEqual({
          outcome: 'mismatch',
        });
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_fifth', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_first',
        });
      });

      it('lets a repeat take over a running attempt whose lease has ended', async () => {
        const s = scope();
        await storage.idempotency.acquire(s, 'fp1', 'req_crashed', { ...timing, leaseMs: 1000 });
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_2', { ...timing, now: t0 + 500 })).toEqual({
          outcome: 'busy',
        });
        const takeover = { ...timing, now: t0 + 1500, leaseMs: 1000 };
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_3', takeover)).toEqual({
          outcome: 'acquired',
          sendId: 'req_crashed',
        });
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_4', { ...timing, now: t0 + 2000 })).toEqual({
          outcome: 'busy',
        });
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_5', { ...timing, now: t0 + 2600 })).toEqual({
          outcome: 'acquired',
          sendId: 'req_crashed',
        });
      });

      it('keeps a renewed attempt from a repeat past its first lease, and never shortens a lease', async () => {
        const s = scope();
        await storage.idempotency.acquire(s, 'fp1', 'req_slow', { ...timing, leaseMs: 1000 });
        await storage.idempotency.renew(s, 'req_slow', { now: t0 + 800, leaseMs: 1000 });
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_2', { ...timing, now: t0 + 1500 })).toEqual({
          outcome: 'busy',
        });
        await storage.idempotency.renew(s, 'req_slow', { now: t0 + 100, leaseMs: 1000 });
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_3', { ...timing, now: t0 + 1700 })).toEqual({
          outcome: 'busy',
        });
        expect(await storage.idempotency.acquire(s, 'fp1', 'req_4', { ...timing, now: t0 + 1900 })).toEqual({
          outcome: 'acquired',
          sendId: 'req_slow',
        });
      });

      it('renews neither a completed nor a failed record, nor a key never acquired', async () => {
        const done = scope();
        await storage.idempotency.acquire(done, 'fp1', 'req_done', timing);
        await storage.idempotency.complete(done, 'req_done', { status: 200, body: '{}' });
        await storage.idempotency.renew(done, 'req_done', { now: t0, leaseMs: 1000 });
        expect(await storage.idempotency.acquire(done, 'fp1', 'req_x', timing)).toEqual({
          outcome: 'completed',
          response: { status: 200, body: '{}' },
        });
        const failed = scope();
        await storage.idempotency.acquire(failed, 'fp1', 'req_failed', timing);
        await storage.idempotency.fail(failed, 'req_failed');
        await storage.idempotency.renew(failed, 'req_failed', { now: t0, leaseMs: 60_000 });
        expect(await storage.idempotency.acquire(failed, 'fp1', 'req_y', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'req_failed',
        });
        const never = scope();
        await storage.idempotency.renew(never, 'req_never', { now: t0, leaseMs: 1000 });
        expect(await storage.idempotency.acquire(never, 'fp1', 'req_z', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'req_z',
        });
      });

      it('forgets a record once its ttl has passed', async () => {
        const completed = scope();
        const running = scope();
        const short = { ...timing, ttlMs: 200 };
        await storage.idempotency.acquire(completed, 'fp1', 'notif_done', short);
        await storage.idempotency.complete(completed, 'notif_done', { status: 200, body: '{}' });
        await storage.idempotency.acquire(running, 'fp1', 'notif_old', short);
        expect((await storage.idempotency.acquire(completed, 'fp1', 'notif_x', short)).outcome).toBe(
          'completed',
        );
        await elapse(400);
        const later = { ...short, now: t0 + 400 };
        expect(await storage.idempotency.acquire(completed, 'fp2', 'notif_new', later)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_new',
        });
        expect(await storage.idempotency.acquire(running, 'fp1', 'notif_new', later)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_new',
        });
      });

      it('keeps scopes apart: the same key in two organizations, two keys in one', async () => {
        const a: IdempotencyScope = { organizationId: uid('org'), key: 'k' };
        const b: IdempotencyScope = { organizationId: uid('org'), key: 'k' };
        const c: IdempotencyScope = { organizationId: a.organizationId, key: 'k2' };
        for (const [i, s] of [a, b, c].entries()) {
          expect(await storage.idempotency.acquire(s, 'fp', `notif_${i}`, timing)).toEqual({
            outcome: 'acquired',
            sendId: `notif_${i}`,
          });
        }
      });

      it('releases a new running record holding the send id: the key reads as never used', async () => {
        const s = scope();
        await storage.idempotency.acquire(s, 'fp1', 'notif_first', timing);
        await storage.idempotency.release(s, 'notif_first');
        expect(await storage.idempotency.acquire(s, 'fp2', 'notif_second', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_second',
        });
      });

      it('releases nothing but a running record holding that send id', async () => {
        const other = scope();
        await storage.idempotency.acquire(other, 'fp1', 'notif_held', timing);
        await storage.idempotency.release(other, 'notif_not_held');
        expect(await storage.idempotency.acquire(other, 'fp1', 'notif_x', timing)).toEqual({
          outcome: 'busy',
        });

        const failed = scope();
        await storage.idempotency.acquire(failed, 'fp1', 'notif_failed', timing);
        await storage.idempotency.fail(failed, 'notif_failed');
        await storage.idempotency.release(failed, 'notif_failed');
        expect(await storage.idempotency.acquire(failed, 'fp2', 'notif_x', timing)).toEqual({
          outcome: 'mismatch',
        });

        const completed = scope();
        const response = { status: 200, body: '{}' };
        await storage.idempotency.acquire(completed, 'fp1', 'notif_done', timing);
        await storage.idempotency.complete(completed, 'notif_done', response);
        await storage.idempotency.release(completed, 'notif_done');
        expect(await storage.idempotency.acquire(completed, 'fp1', 'notif_x', timing)).toEqual({
          outcome: 'completed',
          response,
        });

        const never = scope();
        await storage.idempotency.release(never, 'notif_none');
        expect(await storage.idempotency.acquire(never, 'fp1', 'notif_1', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_1',
        });
      });

      it('ignores the writes of an attempt whose key another took over: fail, complete, renew, release', async () => {
        const s = scope();
        const stalled = { ...timing, leaseMs: 1000 };
        await storage.idempotency.acquire(s, 'fp1', 'notif_stalled', stalled);
        // The stalled attempt's lease ended; a repeat took over and is sending, under the first id.
        const takeover = { ...timing, now: t0 + 1500, leaseMs: 1000 };
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_taker', takeover)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_stalled',
        });
        // The stalled attempt wakes up: none of its writes may touch the taker's record.
        await storage.idempotency.fail(s, 'notif_stalled');
        await storage.idempotency.renew(s, 'notif_stalled', { now: t0 + 1600, leaseMs: 60_000 });
        await storage.idempotency.complete(s, 'notif_stalled', { status: 500, body: 'stale' });
        await storage.idempotency.release(s, 'notif_stalled');
        const third = { ...timing, now: t0 + 2000 };
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_third', third)).toEqual({
          outcome: 'busy',
        });
        // Its own lease, unrenewed by the stalled one, ends as it would have.
        const late = { ...timing, now: t0 + 2600 };
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_late', late)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_stalled',
        });
        await storage.idempotency.complete(s, 'notif_late', { status: 200, body: 'done' });
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_after', late)).toEqual({
          outcome: 'completed',
          response: { status: 200, body: 'done' },
        });
      });

      it('ignores complete and fail on a key never acquired', async () => {
        const s = scope();
        await storage.idempotency.complete(s, 'notif_1', { status: 200, body: '{}' });
        await storage.idempotency.fail(s, 'notif_1');
        expect(await storage.idempotency.acquire(s, 'fp1', 'notif_1', timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_1',
        });
      });
    });

    describe('RateLimitStore', () => {
      /** A bucket that refills too slowly for real time to matter during a test. */
      const slow = (capacity: number): BucketSpec => ({ key: uid('rl'), capacity, refillPerSecond: 0.001 });

      it('starts a new bucket full', async () => {
        const bucket = slow(3);
        expect(await storage.rateLimits.take([bucket], 3)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 1)).toBe(0);
      });

      it('takes from every bucket or from none: a refusal by the second costs the first nothing', async () => {
        const perKey = slow(5);
        const perOrg = slow(1);
        expect(await storage.rateLimits.take([perKey, perOrg], 1)).toBeNull();
        expect(await storage.rateLimits.take([perKey, perOrg], 1)).toBe(1);
        expect(await storage.rateLimits.take([perKey, perOrg], 1)).toBe(1);
        expect(await storage.rateLimits.take([perKey], 4)).toBeNull();
        expect(await storage.rateLimits.take([perKey], 1)).toBe(0);
      });

      it('takes from every bucket or from none: a refusal by the first costs the second nothing', async () => {
        const perKey = slow(1);
        const perOrg = slow(2);
        expect(await storage.rateLimits.take([perKey], 1)).toBeNull();
        expect(await storage.rateLimits.take([perKey, perOrg], 1)).toBe(0);
        expect(await storage.rateLimits.take([perOrg, perKey], 1)).toBe(1);
        expect(await storage.rateLimits.take([perOrg], 2)).toBeNull();
      });

      it('answers the first short bucket when several are short', async () => {
        const a = slow(1);
        const b = slow(1);
        await storage.rateLimits.take([a, b], 1);
        expect(await storage.rateLimits.take([a, b], 1)).toBe(0);
        expect(await storage.rateLimits.take([b, a], 1)).toBe(0);
      });

      it('refuses a cost above what is left without taking anything', async () => {
        const bucket = slow(2);
        expect(await storage.rateLimits.take([bucket], 3)).toBe(0);
        expect(await storage.rateLimits.take([bucket], 2)).toBeNull();
      });

      it('peeks with cost 0: passes while a token is there, takes none', async () => {
        const bucket = slow(1);
        expect(await storage.rateLimits.take([bucket], 0)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 0)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 1)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 0)).toBe(0);
      });

      it('charges a bucket named twice twice, each check seeing the earlier charge', async () => {
        const bucket = slow(3);
        expect(await storage.rateLimits.take([bucket, bucket], 1)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 1)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 1)).toBe(0);
        const single = slow(1);
        expect(await storage.rateLimits.take([single, single], 1)).toBe(1);
        expect(await storage.rateLimits.take([single], 1)).toBeNull();
      });

      it('passes with no buckets at all', async () => {
        expect(await storage.rateLimits.take([], 1)).toBeNull();
      });

      it('refills over time, never beyond capacity', async () => {
        const bucket: BucketSpec = { key: uid('rl'), capacity: 2, refillPerSecond: 10 };
        expect(await storage.rateLimits.take([bucket], 2)).toBeNull();
        expect(await storage.rateLimits.take([bucket], 1)).toBe(0);
        await elapse(250);
        expect(await storage.rateLimits.take([bucket], 1)).toBeNull();
        await elapse(250);
        expect(await storage.rateLimits.take([bucket], 3)).toBe(0);
        expect(await storage.rateLimits.take([bucket], 2)).toBeNull();
      });

      it('keeps buckets of different keys apart', async () => {
        const a = slow(1);
        const b = slow(1);
        await storage.rateLimits.take([a], 1);
        expect(await storage.rateLimits.take([b], 1)).toBeNull();
      });
    });

    describe('AdmissionStore', () => {
      /** Refills too slowly for real time to matter during a test. */
      const slowly = 0.001;
      const rate = (capacity: number): BucketRate => ({ capacity, refillPerSecond: slowly });

      /** A valid key of a fresh organization, and the buckets admission charges for it. */
      const validKey = async () => {
        const org = organization();
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        return {
          key,
          principal: { apiKey: key, user: owner, organization: org },
          keyBucket: (capacity: number): BucketSpec => ({ key: apiKeyBucketKey(key.id), ...rate(capacity) }),
          orgBucket: (capacity: number): BucketSpec => ({
            key: organizationBucketKey(org.id),
            ...rate(capacity),
          }),
        };
      };

      /** An admission request of a fresh client address. */
      const admission = (
        digest: string | null,
        limits: { failedAuth?: number; perKey?: number; perOrganization?: number } = {},
      ): AdmissionRequest => ({
        digest,
        failedAuth: { key: `auth-failures:${uid('addr')}`, ...rate(limits.failedAuth ?? 3) },
        perKey: rate(limits.perKey ?? 5),
        perOrganization: rate(limits.perOrganization ?? 5),
      });

      const unknownDigest = (): string => randomUUID().replaceAll('-', '').repeat(2);

      it('admits a valid key with its principal, taking one token from the key and one from the organization', async () => {
        const { key, principal, keyBucket, orgBucket } = await validKey();
        const request = admission(key.digest, { failedAuth: 1, perKey: 2, perOrganization: 3 });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'admitted', principal });
        expect(await storage.rateLimits.take([keyBucket(2)], 2)).toBe(0);
        expect(await storage.rateLimits.take([keyBucket(2)], 1)).toBeNull();
        expect(await storage.rateLimits.take([orgBucket(3)], 3)).toBe(0);
        expect(await storage.rateLimits.take([orgBucket(3)], 2)).toBeNull();
        // A successful admission costs the address nothing.
        expect(await storage.rateLimits.take([request.failedAuth], 1)).toBeNull();
      });

      it('limits by the key without taking from the organization', async () => {
        const { key, principal, orgBucket } = await validKey();
        const request = admission(key.digest, { perKey: 1, perOrganization: 5 });
        expect((await storage.admission.admit(request)).outcome).toBe('admitted');
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'limited', by: 'key', principal });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'limited', by: 'key', principal });
        expect(await storage.rateLimits.take([orgBucket(5)], 4)).toBeNull();
        expect(await storage.rateLimits.take([request.failedAuth], 3)).toBeNull();
      });

      it('limits by the organization without taking from the key', async () => {
        const { key, principal, keyBucket } = await validKey();
        const request = admission(key.digest, { perKey: 5, perOrganization: 1 });
        expect((await storage.admission.admit(request)).outcome).toBe('admitted');
        expect(await storage.admission.admit(request)).toEqual({
          outcome: 'limited',
          by: 'organization',
          principal,
        });
        expect(await storage.rateLimits.take([keyBucket(5)], 4)).toBeNull();
      });

      it('shares the organization bucket between the keys of one organization', async () => {
        const { key, principal } = await validKey();
        const second = apiKey(principal.organization.id, principal.user.id);
        await storage.directory.saveApiKey(second);
        const limits = { perKey: 5, perOrganization: 1 };
        expect((await storage.admission.admit(admission(key.digest, limits))).outcome).toBe('admitted');
        expect(await storage.admission.admit(admission(second.digest, limits))).toEqual({
          outcome: 'limited',
          by: 'organization',
          principal: { ...principal, apiKey: second },
        });
      });

      it('rejects no key, an unknown key and a revoked one, taking one failed-authentication token each', async () => {
        const { key, keyBucket, orgBucket } = await validKey();
        const request = admission(null, { failedAuth: 3 });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'rejected' });
        expect(await storage.admission.admit({ ...request, digest: unknownDigest() })).toEqual({
          outcome: 'rejected',
        });
        await storage.directory.revokeApiKey(key.id, t0);
        expect(await storage.admission.admit({ ...request, digest: key.digest })).toEqual({
          outcome: 'rejected',
        });
        expect(await storage.rateLimits.take([request.failedAuth], 1)).toBe(0);
        // The revoked key's buckets were never charged.
        expect(await storage.rateLimits.take([keyBucket(5), orgBucket(5)], 5)).toBeNull();
      });

      it('refuses a key on the very next admission after its revocation', async () => {
        const { key } = await validKey();
        const request = admission(key.digest);
        expect((await storage.admission.admit(request)).outcome).toBe('admitted');
        await storage.directory.revokeApiKey(key.id, t0);
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'rejected' });
      });

      it('blocks invalid keys from an address out of failed-authentication tokens, taking nothing', async () => {
        const { key, keyBucket, orgBucket } = await validKey();
        const request = admission(unknownDigest(), { failedAuth: 1 });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'rejected' });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'blocked' });
        expect(await storage.admission.admit({ ...request, digest: null })).toEqual({ outcome: 'blocked' });
        await storage.directory.revokeApiKey(key.id, t0);
        expect(await storage.admission.admit({ ...request, digest: key.digest })).toEqual({
          outcome: 'blocked',
        });
        // The revoked key's buckets were never charged.
        expect(await storage.rateLimits.take([keyBucket(5), orgBucket(5)], 5)).toBeNull();
      });

      it('judges a valid key by its own buckets only, even from an address out of failed-authentication tokens', async () => {
        const { key, principal, keyBucket, orgBucket } = await validKey();
        const request = admission(unknownDigest(), { failedAuth: 1, perKey: 2, perOrganization: 5 });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'rejected' });
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'blocked' });
        const valid = { ...request, digest: key.digest };
        expect(await storage.admission.admit(valid)).toEqual({ outcome: 'admitted', principal });
        expect(await storage.admission.admit(valid)).toEqual({ outcome: 'admitted', principal });
        expect(await storage.admission.admit(valid)).toEqual({ outcome: 'limited', by: 'key', principal });
        expect(await storage.rateLimits.take([keyBucket(2)], 1)).toBe(0);
        expect(await storage.rateLimits.take([orgBucket(5)], 4)).toBe(0);
        expect(await storage.rateLimits.take([orgBucket(5)], 3)).toBeNull();
        // Valid keys refill nothing: the address is still blocked.
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'blocked' });
      });

      it('lets the failed-authentication bucket refill', async () => {
        const request: AdmissionRequest = {
          ...admission(null),
          failedAuth: { key: `auth-failures:${uid('addr')}`, capacity: 1, refillPerSecond: 10 },
        };
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'rejected' });
        expect(await storage.admission.admit({ ...request, digest: unknownDigest() })).toEqual({
          outcome: 'blocked',
        });
        await elapse(150);
        expect(await storage.admission.admit(request)).toEqual({ outcome: 'rejected' });
      });

      it("answers the users of the key's organization matching the recipients of an admitted request, as findUsersByEmail does", async () => {
        // An organization id that JSON must escape, so that no store builds its lookup keys loosely.
        const org = organization({ id: `${uid('org')} "q" \\ /\n\t\u0001é` });
        const other = organization();
        await storage.directory.saveOrganization(org);
        await storage.directory.saveOrganization(other);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        const bob = await storage.directory.saveUser(user(org.id, { email: `${uid('bob')}@example.test` }));
        const odd = await storage.directory.saveUser(
          user(org.id, { email: `"${uid('o')}\\/é"@example.test` }),
        );
        // Same address in another organization: never answered for this one.
        const elsewhere = await storage.directory.saveUser(
          user(other.id, { email: `${uid('eve')}@example.test` }),
        );
        const recipientEmails = [
          odd.email,
          'nobody@example.test',
          bob.email,
          owner.email,
          odd.email,
          elsewhere.email,
        ];
        const admitted = await storage.admission.admit({ ...admission(key.digest), recipientEmails });
        const expected = await storage.directory.findUsersByEmail(org.id, recipientEmails);
        expect(expected.map((u) => u.id)).toEqual([odd.id, bob.id, owner.id]);
        expect(admitted).toEqual({
          outcome: 'admitted',
          principal: { apiKey: key, user: owner, organization: org },
          users: expected,
        });
        expect(await storage.admission.admit({ ...admission(key.digest), recipientEmails: [] })).toEqual({
          outcome: 'admitted',
          principal: { apiKey: key, user: owner, organization: org },
          users: [],
        });
      });

      it('looks no recipients up for a request that is not admitted', async () => {
        const { key, principal } = await validKey();
        const request = { ...admission(key.digest, { perKey: 1 }), recipientEmails: [principal.user.email] };
        expect((await storage.admission.admit(request)).outcome).toBe('admitted');
        const limited = await storage.admission.admit(request);
        expect(limited).toStrictEqual({ outcome: 'limited', by: 'key', principal });
        expect(await storage.admission.admit({ ...request, digest: unknownDigest() })).toStrictEqual({
          outcome: 'rejected',
        });
      });

      /** The claim of a fresh idempotency key, as a send with an `Idempotency-Key` makes it. */
      const claimOf = (fingerprint: string, sendId: string): IdempotencyClaim => ({
        key: `${uid('idem')} "q" \\ é`,
        fingerprint,
        sendId,
        timing: { now: t0, leaseMs: 30_000, ttlMs: 24 * hour },
      });

      it("acquires an admitted request's idempotency claim in the key's organization, as acquire does", async () => {
        const { key, principal } = await validKey();
        const claim = claimOf('fp1', 'notif_first');
        const scope = { organizationId: principal.organization.id, key: claim.key };
        expect(await storage.admission.admit({ ...admission(key.digest), idempotency: claim })).toEqual({
          outcome: 'admitted',
          principal,
          idempotency: { outcome: 'acquired', sendId: 'notif_first' },
        });
        // The record is the idempotency store's own: running, under the claimed send id.
        expect(await storage.idempotency.acquire(scope, 'fp1', 'notif_other', claim.timing)).toEqual({
          outcome: 'busy',
        });
        expect(await storage.admission.admit({ ...admission(key.digest), idempotency: claim })).toEqual({
          outcome: 'admitted',
          principal,
          idempotency: { outcome: 'busy' },
        });
        const mismatched = { ...claimOf('fp2', 'notif_second'), key: claim.key };
        expect(await storage.admission.admit({ ...admission(key.digest), idempotency: mismatched })).toEqual({
          outcome: 'admitted',
          principal,
          idempotency: { outcome: 'mismatch' },
        });
        const response = { status: 200, body: '{"status":"ok","notification_id":"notif_first"}' };
        await storage.idempotency.complete(scope, 'notif_first', response);
        const repeat = { ...admission(key.digest), idempotency: { ...claim, sendId: 'notif_third' } };
        expect(await storage.admission.admit(repeat)).toEqual({
          outcome: 'admitted',
          principal,
          idempotency: { outcome: 'completed', response },
        });
        // Another organization's same key is another record.
        const other = { organizationId: uid('org'), key: claim.key };
        expect(await storage.idempotency.acquire(other, 'fp1', 'notif_4', claim.timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_4',
        });
      });

      it('takes over a failed attempt in the admission, under the send id the attempt holds', async () => {
        const { key, principal } = await validKey();
        const claim = claimOf('fp1', 'notif_first');
        const scope = { organizationId: principal.organization.id, key: claim.key };
        await storage.idempotency.acquire(scope, 'fp1', 'notif_first', claim.timing);
        await storage.idempotency.fail(scope, 'notif_first');
        const resumed = { ...admission(key.digest), idempotency: { ...claim, sendId: 'notif_retry' } };
        expect(await storage.admission.admit(resumed)).toEqual({
          outcome: 'admitted',
          principal,
          idempotency: { outcome: 'acquired', sendId: 'notif_first' },
        });
      });

      it('acquires no idempotency claim for a request that is not admitted, and answers it alongside the recipients', async () => {
        const { key, principal } = await validKey();
        const claim = claimOf('fp1', 'notif_first');
        const scope = { organizationId: principal.organization.id, key: claim.key };
        const request = { ...admission(key.digest, { perKey: 1 }), idempotency: claim };
        const recipientEmails = [principal.user.email];
        expect(await storage.admission.admit({ ...request, recipientEmails })).toEqual({
          outcome: 'admitted',
          principal,
          users: [principal.user],
          idempotency: { outcome: 'acquired', sendId: 'notif_first' },
        });
        const second = { ...claimOf('fp1', 'notif_second'), key: uid('idem') };
        expect(await storage.admission.admit({ ...request, idempotency: second })).toStrictEqual({
          outcome: 'limited',
          by: 'key',
          principal,
        });
        expect(
          await storage.admission.admit({ ...request, digest: unknownDigest(), idempotency: second }),
        ).toStrictEqual({
          outcome: 'rejected',
        });
        // Neither refusal left a record: the key is still free.
        const free = { organizationId: scope.organizationId, key: second.key };
        expect(await storage.idempotency.acquire(free, 'fp1', 'notif_mine', claim.timing)).toEqual({
          outcome: 'acquired',
          sendId: 'notif_mine',
        });
      });
      /** What an interactive send of `recipients` asks the admission to store, with its timeout. */
      const requestToCreate = (recipients: readonly string[], id = uid('req')): RequestToCreate => {
        const {
          organizationId: _organization,
          sender: _sender,
          ...request
        } = interactiveRequest({
          id,
          // Text that JSON must escape, so that no store splices the request together loosely.
          message: 'Ship "it" \\ now?\n\u0001 é 🚀',
          recipients: recipients.map((email) => ({
            email,
            key: email,
            value: null,
            respondedAt: null,
            expired: false,
          })),
        });
        const timeout = dueItem({ id: timeoutItemId(id), requestId: id, runAt: request.expiresAt });
        return { request, due: { enqueue: [timeout], cancel: [] } };
      };

      it("stores an admitted interactive send's request with its timeout, as the key's owner's in the key's organization", async () => {
        // Values JSON must escape, so that no store splices the organization and sender in loosely.
        const org = organization({ id: `${uid('org')} "q" \\ /\n\t\u0001é` });
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id, { name: 'Zoë "Z" \\ Ng\t🚀' }));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        const principal = { apiKey: key, user: owner, organization: org };
        const bob = await storage.directory.saveUser(user(org.id));
        const toCreate = requestToCreate([bob.email, owner.email]);
        const admitted = await storage.admission.admit({
          ...admission(key.digest),
          recipientEmails: [bob.email, owner.email],
          createRequest: toCreate,
        });
        expect(admitted).toEqual({ outcome: 'admitted', principal, users: [bob, owner], created: true });
        const stored = await storage.requests.getRequest(toCreate.request.id);
        expect(stored).toEqual(admittedRequest(toCreate.request, principal));
        expect(stored?.organizationId).toBe(org.id);
        expect(stored?.sender).toEqual({ userId: owner.id, name: 'Zoë "Z" \\ Ng\t🚀' });
        expect(await storage.dueWork.nextRunAt()).toBe(toCreate.request.expiresAt);
        const claimed = await storage.dueWork.claim(toCreate.request.expiresAt, 10, 1000);
        expect(claimed.map((c) => c.id)).toEqual([timeoutItemId(toCreate.request.id)]);
        // A stored request is an ordinary one: the next version is a compare-and-set away.
        const next = { ...admittedRequest(toCreate.request, principal), version: 1 };
        expect(await storage.requests.updateRequest(next, 0, noDue)).toBe(true);
      });

      it("lets one of many admissions at once with one key's claim acquire it and store its request", async () => {
        const { key, principal } = await validKey();
        const claim = claimOf('fp1', 'unused');
        const ids = Array.from({ length: 8 }, () => uid('req'));
        const answers = await Promise.all(
          ids.map((id) =>
            storage.admission.admit({
              ...admission(key.digest, { perKey: 20, perOrganization: 20 }),
              recipientEmails: [principal.user.email],
              idempotency: { ...claim, sendId: id },
              createRequest: requestToCreate([principal.user.email], id),
            }),
          ),
        );
        const outcomes = answers.map((answer) =>
          answer.outcome === 'admitted' ? (answer.idempotency?.outcome ?? 'none') : answer.outcome,
        );
        expect(outcomes.filter((outcome) => outcome === 'acquired')).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome === 'busy')).toHaveLength(7);
        const stored = await Promise.all(ids.map((id) => storage.requests.getRequest(id)));
        expect(stored.filter((request) => request !== null)).toHaveLength(1);
      });

      it('stores the request of an admitted send whose idempotency claim is a new attempt, under its send id', async () => {
        const { key, principal } = await validKey();
        const id = uid('req');
        const toCreate = requestToCreate([principal.user.email], id);
        const claim = claimOf('fp1', id);
        expect(
          await storage.admission.admit({
            ...admission(key.digest),
            recipientEmails: [principal.user.email],
            idempotency: claim,
            createRequest: toCreate,
          }),
        ).toEqual({
          outcome: 'admitted',
          principal,
          users: [principal.user],
          idempotency: { outcome: 'acquired', sendId: id },
          created: true,
        });
        expect(await storage.requests.getRequest(id)).toEqual(admittedRequest(toCreate.request, principal));
      });

      it('stores no request for an unknown recipient, a refused admission, or a claim that is not a new attempt', async () => {
        const { key, principal } = await validKey();
        const known = principal.user.email;
        const storesNothing = async (request: AdmissionRequest, answer: unknown) => {
          expect(await storage.admission.admit(request)).toEqual(answer);
          const id = request.createRequest?.request.id ?? '';
          expect(await storage.requests.getRequest(id)).toBeNull();
        };
        const asked = (recipients: string[]): AdmissionRequest => ({
          ...admission(key.digest, { perKey: 10, perOrganization: 10 }),
          recipientEmails: recipients,
          createRequest: requestToCreate(recipients),
        });
        // One recipient matches nobody: the send is refused later (422), so nothing is stored.
        await storesNothing(asked([known, 'nobody@example.test']), {
          outcome: 'admitted',
          principal,
          users: [principal.user],
          created: false,
        });
        // Without the recipients to look up, the store cannot tell: nothing is stored.
        const blind = { ...admission(key.digest), createRequest: requestToCreate([known]) };
        await storesNothing(blind, { outcome: 'admitted', principal, created: false });
        await storesNothing({ ...asked([known]), digest: unknownDigest() }, { outcome: 'rejected' });
        // A key out of tokens: refused (429), so nothing is stored.
        const spent = await validKey();
        const limited = {
          ...admission(spent.key.digest, { perKey: 1 }),
          recipientEmails: [spent.principal.user.email],
        };
        expect((await storage.admission.admit(limited)).outcome).toBe('admitted');
        await storesNothing(
          { ...limited, createRequest: requestToCreate(limited.recipientEmails) },
          { outcome: 'limited', by: 'key', principal: spent.principal },
        );
        // The claim is running (busy), then resumed under its first send id: neither is a new attempt.
        const claim = claimOf('fp1', uid('req'));
        const scope = { organizationId: principal.organization.id, key: claim.key };
        await storage.idempotency.acquire(scope, 'fp1', claim.sendId, claim.timing);
        const repeat = (id: string): AdmissionRequest => ({
          ...asked([known]),
          idempotency: { ...claim, sendId: id },
          createRequest: requestToCreate([known], id),
        });
        const busy = repeat(uid('req'));
        await storesNothing(busy, {
          outcome: 'admitted',
          principal,
          users: [principal.user],
          idempotency: { outcome: 'busy' },
          created: false,
        });
        await storage.idempotency.fail(scope, claim.sendId);
        await storesNothing(repeat(uid('req')), {
          outcome: 'admitted',
          principal,
          users: [principal.user],
          idempotency: { outcome: 'acquired', sendId: claim.sendId },
          created: false,
        });
      });

      it('keeps a request stored under the same id untouched, answering created: false', async () => {
        const { key, principal } = await validKey();
        const existing = interactiveRequest({ organizationId: principal.organization.id });
        await storage.requests.createRequest(existing, noDue);
        const toCreate = requestToCreate([principal.user.email], existing.id);
        expect(
          await storage.admission.admit({
            ...admission(key.digest),
            recipientEmails: [principal.user.email],
            createRequest: toCreate,
          }),
        ).toEqual({ outcome: 'admitted', principal, users: [principal.user], created: false });
        expect(await storage.requests.getRequest(existing.id)).toEqual(existing);
        expect(await storage.dueWork.nextRunAt()).toBeNull();
      });
    });

    describe('DueWorkStore', () => {
      const lease = 60_000;

      it('claims due items in runAt order, up to the limit, leaving future ones', async () => {
        const late = dueItem({ runAt: t0 + 20 });
        const early = dueItem({ runAt: t0 + 10, kind: 'callback', attempt: 2 });
        const future = dueItem({ runAt: t0 + 1000 });
        const middle = dueItem({ runAt: t0 + 15 });
        await storage.dueWork.enqueue([late, early, future, middle]);
        const first = await storage.dueWork.claim(t0 + 100, 2, lease);
        expect(first.map(({ leaseToken: _, ...item }) => item)).toEqual([early, middle]);
        for (const claimed of first) expect(typeof claimed.leaseToken).toBe('string');
        const rest = await storage.dueWork.claim(t0 + 100, 10, lease);
        expect(rest.map((c) => c.id)).toEqual([late.id]);
        expect(await storage.dueWork.claim(t0 + 100, 10, lease)).toEqual([]);
      });

      it('claims nothing with limit 0', async () => {
        const item = dueItem();
        await storage.dueWork.enqueue([item]);
        expect(await storage.dueWork.claim(t0, 0, lease)).toEqual([]);
        expect((await storage.dueWork.claim(t0, 1, lease)).map((c) => c.id)).toEqual([item.id]);
      });

      it('claims items whose lease ended and items never claimed in the order they became claimable', async () => {
        const a = dueItem({ runAt: t0 });
        const b = dueItem({ runAt: t0 + 1500 });
        const c = dueItem({ runAt: t0 + 3050 });
        await storage.dueWork.enqueue([c, b, a]);
        const ids = async (now: number, limit: number) =>
          (await storage.dueWork.claim(now, limit, 1000)).map((claimed) => claimed.id);
        expect(await ids(t0, 1)).toEqual([a.id]);
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 1000);
        expect(await ids(t0 + 2000, 1)).toEqual([a.id]);
        expect(await ids(t0 + 2100, 1)).toEqual([b.id]);
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 3000);
        expect(await ids(t0 + 4000, 10)).toEqual([a.id, c.id, b.id]);
      });

      // An adapter may keep the items of the core's ids (`<kind>:<requestId>`, most of them a request's
      // timeout) in a form of their own: leases and replacements hold for both kinds of id.
      for (const [form, make] of [
        ["the core's form", dueItem],
        ['any other form', (overrides: Partial<DueItem> = {}) => dueItem({ id: uid('due'), ...overrides })],
      ] as const) {
        describe(`with an id of ${form}`, () => {
          it('hides a claimed item until its lease ends, then lets another worker claim it', async () => {
            const item = make();
            await storage.dueWork.enqueue([item]);
            const [first] = await storage.dueWork.claim(t0, 10, 1000);
            expect(first?.id).toBe(item.id);
            expect(await storage.dueWork.claim(t0 + 999, 10, 1000)).toEqual([]);
            const [second] = await storage.dueWork.claim(t0 + 1001, 10, 1000);
            expect(second).toMatchObject({ id: item.id, attempt: 0, runAt: item.runAt });
            expect(second?.leaseToken).not.toBe(first?.leaseToken);
          });

          it('ignores complete and reschedule with a lease lost to another worker', async () => {
            const item = make();
            await storage.dueWork.enqueue([item]);
            const [stale] = await storage.dueWork.claim(t0, 10, 1000);
            const [current] = await storage.dueWork.claim(t0 + 1001, 10, 1000);
            await storage.dueWork.complete(stale!);
            await storage.dueWork.reschedule(stale!, t0 + hour);
            expect(await storage.dueWork.nextRunAt()).toBe(t0 + 2001);
            const [third] = await storage.dueWork.claim(t0 + 2001, 10, 1000);
            expect(third).toMatchObject({ id: item.id, attempt: 0 });
            await storage.dueWork.complete(current!);
            expect(await storage.dueWork.nextRunAt()).toBe(t0 + 3001);
            await storage.dueWork.complete(third!);
            expect(await storage.dueWork.nextRunAt()).toBeNull();
          });

          it('removes a completed item; completing it again does nothing', async () => {
            const item = make();
            await storage.dueWork.enqueue([item]);
            const [claimed] = await storage.dueWork.claim(t0, 10, 1000);
            await storage.dueWork.complete(claimed!);
            await storage.dueWork.complete(claimed!);
            expect(await storage.dueWork.claim(t0 + hour, 10, 1000)).toEqual([]);
            expect(await storage.dueWork.nextRunAt()).toBeNull();
          });

          it('replaces an item enqueued again with the same id', async () => {
            const item = make({ runAt: t0 + 100 });
            await storage.dueWork.enqueue([item]);
            await storage.dueWork.enqueue([{ ...item, runAt: t0 + 50 }]);
            expect(await storage.dueWork.nextRunAt()).toBe(t0 + 50);
            const claimed = await storage.dueWork.claim(t0 + 100, 10, lease);
            expect(claimed).toEqual([{ ...item, runAt: t0 + 50, leaseToken: claimed[0]?.leaseToken }]);
            await storage.dueWork.enqueue([{ ...item, runAt: t0 + 500 }]);
            expect(await storage.dueWork.claim(t0 + 499, 10, lease)).toEqual([]);
          });

          it('frees a claimed item that is enqueued again: the old lease token no longer completes it', async () => {
            const item = make();
            await storage.dueWork.enqueue([item]);
            const [old] = await storage.dueWork.claim(t0, 10, lease);
            await storage.dueWork.enqueue([{ ...item, runAt: t0 + 5 }]);
            await storage.dueWork.complete(old!);
            expect((await storage.dueWork.claim(t0 + 5, 10, lease)).map((c) => c.id)).toEqual([item.id]);
          });
        });
      }

      it('reschedules a claimed item: new runAt, next attempt, lease freed', async () => {
        const item = dueItem({ kind: 'callback' });
        await storage.dueWork.enqueue([item]);
        const [claimed] = await storage.dueWork.claim(t0, 10, lease);
        await storage.dueWork.reschedule(claimed!, t0 + 10);
        await storage.dueWork.complete(claimed!);
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 10);
        expect(await storage.dueWork.claim(t0 + 9, 10, lease)).toEqual([]);
        const [again] = await storage.dueWork.claim(t0 + 10, 10, lease);
        expect(again).toMatchObject({ ...item, runAt: t0 + 10, attempt: 1 });
        await storage.dueWork.reschedule(claimed!, t0 + 20);
        await storage.dueWork.reschedule(again!, t0 + 30);
        const [third] = await storage.dueWork.claim(t0 + 30, 10, lease);
        expect(third).toMatchObject({ ...item, runAt: t0 + 30, attempt: 2 });
      });

      it('puts a claimed item off without counting an attempt: new runAt, same attempt, lease freed', async () => {
        const item = dueItem({ kind: 'callback' });
        await storage.dueWork.enqueue([item]);
        const [claimed] = await storage.dueWork.claim(t0, 10, lease);
        await storage.dueWork.reschedule(claimed!, t0 + 10, { sameAttempt: true });
        expect(await storage.dueWork.claim(t0 + 9, 10, lease)).toEqual([]);
        const [again] = await storage.dueWork.claim(t0 + 10, 10, lease);
        expect(again).toMatchObject({ ...item, runAt: t0 + 10, attempt: 0 });
        await storage.dueWork.reschedule(again!, t0 + 20);
        const [third] = await storage.dueWork.claim(t0 + 20, 10, lease);
        expect(third).toMatchObject({ ...item, runAt: t0 + 20, attempt: 1 });
      });

      it('reports when the next item becomes claimable: its runAt or its lease end', async () => {
        expect(await storage.dueWork.nextRunAt()).toBeNull();
        const a = dueItem({ runAt: t0 + 100 });
        const b = dueItem({ runAt: t0 + 5000 });
        await storage.dueWork.enqueue([b, a]);
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 100);
        const [claimed] = await storage.dueWork.claim(t0 + 100, 1, 1000);
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 1100);
        await storage.dueWork.complete(claimed!);
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 5000);
      });

      it('drops items cancelled through a request write', async () => {
        const request = interactiveRequest();
        const timeout = dueItem({ id: timeoutItemId(request.id), requestId: request.id, runAt: t0 + 10 });
        const other = dueItem({ runAt: t0 + 20 });
        await storage.dueWork.enqueue([other]);
        await storage.requests.createRequest(request, { enqueue: [timeout], cancel: [] });
        await storage.requests.updateRequest({ ...request, version: 1 }, 0, {
          enqueue: [],
          cancel: [timeout.id],
        });
        expect(await storage.dueWork.nextRunAt()).toBe(t0 + 20);
        expect((await storage.dueWork.claim(t0 + 100, 10, lease)).map((c) => c.id)).toEqual([other.id]);
      });

      it('gives each of 1,000 due items to exactly one of 20 concurrent workers', async () => {
        const items = Array.from({ length: 1000 }, (_, i) => dueItem({ runAt: t0 + (i % 37) }));
        await storage.dueWork.enqueue(items);
        const claims = new Map<string, number>();
        const worker = async (): Promise<void> => {
          for (;;) {
            const batch = await storage.dueWork.claim(t0 + 100, 7, lease);
            if (batch.length === 0) return;
            for (const item of batch) {
              claims.set(item.id, (claims.get(item.id) ?? 0) + 1);
              await storage.dueWork.complete(item);
            }
          }
        };
        await Promise.all(Array.from({ length: 20 }, worker));
        expect(claims.size).toBe(1000);
        expect([...claims.values()].every((count) => count === 1)).toBe(true);
        expect(await storage.dueWork.nextRunAt()).toBeNull();
      });
    });

    describe('across instances', () => {
      const other = async (): Promise<StoragePorts> =>
        harness.secondInstance ? harness.secondInstance() : storage;

      it('shows a revocation made by one instance on the next lookup of another', async () => {
        const two = await other();
        const org = organization();
        await storage.directory.saveOrganization(org);
        const owner = await storage.directory.saveUser(user(org.id));
        const key = apiKey(org.id, owner.id);
        await storage.directory.saveApiKey(key);
        expect((await two.directory.findPrincipalByDigest(key.digest))?.apiKey.revokedAt).toBeNull();
        expect(await storage.directory.revokeApiKey(key.id, t0 + 5)).toBe(true);
        expect((await two.directory.findPrincipalByDigest(key.digest))?.apiKey.revokedAt).toBe(t0 + 5);
      });

      it('holds one rate limit across instances', async () => {
        const two = await other();
        const bucket = { key: uid('rl'), capacity: 3, refillPerSecond: 0.001 };
        const takes = await Promise.all(
          Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? storage : two).rateLimits.take([bucket], 1)),
        );
        expect(takes.filter((refused) => refused === null)).toHaveLength(3);
      });

      it('hides an item leased by one instance from another until the lease ends', async () => {
        const two = await other();
        await storage.dueWork.enqueue([
          { id: uid('due'), kind: 'timeout', requestId: uid('req'), runAt: t0, attempt: 0 },
        ]);
        const [held] = await storage.dueWork.claim(t0, 10, 1000);
        expect(await two.dueWork.claim(t0 + 999, 10, 1000)).toEqual([]);
        const [taken] = await two.dueWork.claim(t0 + 1000, 10, 1000);
        expect(taken?.id).toBe(held?.id);
        await storage.dueWork.complete(held!);
        expect(await two.dueWork.nextRunAt()).toBe(t0 + 2000);
        await two.dueWork.complete(taken!);
        expect(await storage.dueWork.nextRunAt()).toBeNull();
      });
    });

    describe('FailedCallbackStore', () => {
      const failure = (overrides: Partial<FailedCallback> = {}): FailedCallback => ({
        requestId: uid('req'),
        organizationId: 'org_1',
        url: 'https://hooks.example.test/done',
        attempts: 8,
        lastStatus: 500,
        lastError: 'HTTP 500',
        failedAt: t0,
        ...overrides,
      });

      it('lists failures oldest first, filtered by organization', async () => {
        const first = failure({ failedAt: t0 });
        const second = failure({ failedAt: t0 + 10, organizationId: 'org_2', lastStatus: null });
        const third = failure({ failedAt: t0 + 20 });
        for (const f of [first, second, third]) await storage.failedCallbacks.add(f);
        expect(await storage.failedCallbacks.list()).toEqual([first, second, third]);
        expect(await storage.failedCallbacks.list('org_1')).toEqual([first, third]);
        expect(await storage.failedCallbacks.list('org_3')).toEqual([]);
      });

      it('answers the failure of a request, leaving it kept, and null for a request without one', async () => {
        const kept = failure({ lastStatus: null });
        await storage.failedCallbacks.add(kept);
        expect(await storage.failedCallbacks.get(kept.requestId)).toEqual(kept);
        expect(await storage.failedCallbacks.list()).toEqual([kept]);
        expect(await storage.failedCallbacks.get(uid('req'))).toBeNull();
        await storage.failedCallbacks.take(kept.requestId);
        expect(await storage.failedCallbacks.get(kept.requestId)).toBeNull();
      });

      it('replaces an earlier failure of the same request', async () => {
        const first = failure();
        await storage.failedCallbacks.add(first);
        const again = { ...first, attempts: 16, failedAt: t0 + 99 };
        await storage.failedCallbacks.add(again);
        expect(await storage.failedCallbacks.list()).toEqual([again]);
      });

      it('forgets a failure once its ttl has passed, and keeps one written without a ttl', async () => {
        const expiring = failure({ failedAt: t0 });
        const kept = failure({ failedAt: t0 + 1 });
        const taken = failure({ failedAt: t0 + 2 });
        await storage.failedCallbacks.add(expiring, { ttlMs: 200 });
        await storage.failedCallbacks.add(kept);
        await storage.failedCallbacks.add(taken, { ttlMs: 200 });
        expect(await storage.failedCallbacks.list()).toEqual([expiring, kept, taken]);
        expect(await storage.failedCallbacks.get(expiring.requestId)).toEqual(expiring);
        await elapse(400);
        expect(await storage.failedCallbacks.get(expiring.requestId)).toBeNull();
        expect(await storage.failedCallbacks.take(taken.requestId)).toBeNull();
        expect(await storage.failedCallbacks.list()).toEqual([kept]);
        expect(await storage.failedCallbacks.list('org_1')).toEqual([kept]);
      });

      it('takes the expiry of the latest write of a failure', async () => {
        const first = failure();
        await storage.failedCallbacks.add(first, { ttlMs: 200 });
        const again = { ...first, attempts: 16 };
        await storage.failedCallbacks.add(again);
        const other = failure();
        await storage.failedCallbacks.add(other);
        await storage.failedCallbacks.add({ ...other, attempts: 3 }, { ttlMs: 200 });
        await elapse(400);
        expect(await storage.failedCallbacks.list()).toEqual([again]);
        expect(await storage.failedCallbacks.take(other.requestId)).toBeNull();
      });

      it('hands a failure to exactly one taker', async () => {
        const f = failure();
        await storage.failedCallbacks.add(f);
        const taken = await Promise.all([
          storage.failedCallbacks.take(f.requestId),
          storage.failedCallbacks.take(f.requestId),
        ]);
        expect(taken.filter((t) => t !== null)).toEqual([f]);
        expect(await storage.failedCallbacks.list()).toEqual([]);
        expect(await storage.failedCallbacks.take(uid('req'))).toBeNull();
      });
    });
  });
}
