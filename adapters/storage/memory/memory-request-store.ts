import {
  type Clock,
  type InteractiveRequest,
  NotifyError,
  type RecipientState,
  type RequestStore,
  timeoutEnd,
} from '../../../core/adapter-kit.js';
import { flatString } from './flat-string.js';
import { createInterner } from './interner.js';
import { createLazySweep } from './lazy-sweep.js';
import type { MemoryDeliveryStore } from './memory-delivery-store.js';
import type { MemoryDueWorkStore } from './memory-due-work-store.js';

/** Options of {@link memoryRequestStore}. */
export interface MemoryRequestStoreOptions {
  /** The due-work store that request writes change in the same step. */
  dueWork: MemoryDueWorkStore;
  /** The delivery store whose copies of a request expire with it. */
  deliveries: MemoryDeliveryStore;
  /** Decides when finished requests expire, as a server's clock would for Redis or MongoDB. */
  clock: Clock;
}

/**
 * A request as the store keeps it: with when the store forgets it (store-clock epoch milliseconds;
 * null: never), in the same object, which saves one object per stored request. `expiresAt` is null
 * when it is `createdAt` plus the timeout, as the core sets it: a time is a 16-byte box of its own.
 */
interface Kept extends Omit<InteractiveRequest, 'expiresAt'> {
  expiresAt: number | null;
  retainedUntil: number | null;
}

/**
 * A copy of every field of the request, made by hand: callers must not reach stored state through
 * the objects they pass or get, and this costs a fraction of `structuredClone` on the status path.
 */
const copyRequest = (kept: Kept): InteractiveRequest => ({
  id: kept.id,
  organizationId: kept.organizationId,
  version: kept.version,
  status: kept.status,
  message: kept.message,
  options: kept.options.map(({ text, value }) => ({ text, value })),
  mode: kept.mode,
  timeoutMinutes: kept.timeoutMinutes,
  createdAt: kept.createdAt,
  expiresAt: kept.expiresAt ?? timeoutEnd(kept.createdAt, kept.timeoutMinutes),
  finishedAt: kept.finishedAt,
  externalReferenceId: kept.externalReferenceId,
  sender: { ...kept.sender },
  callback: kept.callback === null ? null : { ...kept.callback },
  recipients: kept.recipients.map(({ email, key, value, respondedAt, expired }) => ({
    email,
    key,
    value,
    respondedAt,
    expired,
  })),
});

/** Strings longer than this are not shared: they are unlikely to repeat and would crowd the pool. */
const longestShared = 256;

/** The options of `next` when they read as `kept` does: a new version rarely changes them. */
const sameOptions = (next: InteractiveRequest['options'], kept: InteractiveRequest['options']): boolean =>
  next.length === kept.length &&
  next.every((option, index) => option.text === kept[index]?.text && option.value === kept[index]?.value);

/**
 * Makes the copies of requests that the store keeps: strings that requests repeat (addresses,
 * labels, the sender, a message sent again and again), the option list and sender objects, and the
 * list of recipients while none has answered, are shared between them, and ids are flat. Shared
 * objects are never changed: writes replace the stored request, and reads hand out copies. A new
 * version of a stored request reuses what the stored one shares already (all but the answers and
 * times), so that an update interns nothing.
 */
function createCompactor(): (
  request: InteractiveRequest,
  retainedUntil: number | null,
  previous?: Kept,
) => Kept {
  const strings = createInterner<string>();
  const optionLists = createInterner<InteractiveRequest['options']>();
  const senders = createInterner<InteractiveRequest['sender']>();
  const recipientLists = createInterner<RecipientState[]>();
  const shared = (value: string): string =>
    value.length > longestShared ? value : strings.intern(value, value);
  const sharedOptions = (options: InteractiveRequest['options']): InteractiveRequest['options'] => {
    const kept = options.map(({ text, value }) => ({ text: shared(text), value: shared(value) }));
    return optionLists.intern(JSON.stringify(kept), kept);
  };
  const sharedSender = ({ userId, name }: InteractiveRequest['sender']): InteractiveRequest['sender'] =>
    senders.internWith(JSON.stringify([userId, name]), () => ({
      userId: shared(userId),
      name: shared(name),
    }));
  // Every pending request to the same people waits on an equal list: one is kept for all of them.
  const sharedWaiting = (recipients: readonly RecipientState[]): RecipientState[] =>
    recipientLists.internWith(JSON.stringify(recipients.map(({ email, key }) => [email, key])), () =>
      recipients.map(({ email, key }) => ({
        email: shared(email),
        key: shared(key),
        value: null,
        respondedAt: null,
        expired: false,
      })),
    );
  return (request, retainedUntil, previous) => {
    const same = previous?.id === request.id ? previous : undefined;
    // Every field named, no spread: a spread copy takes its source's layout, four fields in the
    // object and the rest in an array with room for twice as many (24 bytes more per stored request).
    return {
      id: same?.id ?? flatString(request.id),
      organizationId: same?.organizationId ?? shared(request.organizationId),
      version: request.version,
      status: request.status,
      message: same?.message === request.message ? same.message : shared(request.message),
      options:
        same && sameOptions(request.options, same.options) ? same.options : sharedOptions(request.options),
      mode: request.mode,
      timeoutMinutes: request.timeoutMinutes,
      createdAt: request.createdAt,
      expiresAt:
        request.expiresAt === timeoutEnd(request.createdAt, request.timeoutMinutes)
          ? null
          : request.expiresAt,
      finishedAt: request.finishedAt,
      externalReferenceId: request.externalReferenceId,
      sender:
        same?.sender.userId === request.sender.userId && same.sender.name === request.sender.name
          ? same.sender
          : sharedSender(request.sender),
      callback: request.callback === null ? null : { ...request.callback },
      recipients: !request.recipients.every(isWaiting)
        ? request.recipients.map(({ email, key, value, respondedAt, expired }, index) => {
            const before = same?.recipients[index];
            return {
              email: before?.email === email ? before.email : shared(email),
              key: before?.key === key ? before.key : shared(key),
              value: value === null ? null : shared(value),
              respondedAt,
              expired,
            };
          })
        : same && sameWaiting(request.recipients, same.recipients)
          ? same.recipients
          : sharedWaiting(request.recipients),
      retainedUntil,
    };
  };
}

/** Whether `kept` waits on the people `next` names, in its order: a new version can keep the list. */
const sameWaiting = (next: readonly RecipientState[], kept: readonly RecipientState[]): boolean =>
  next.length === kept.length &&
  kept.every(
    (recipient, index) =>
      isWaiting(recipient) && recipient.email === next[index]?.email && recipient.key === next[index]?.key,
  );

/** A recipient that has neither answered nor expired: what every recipient of a new request is. */
const isWaiting = ({ value, respondedAt, expired }: RecipientState): boolean =>
  value === null && respondedAt === null && !expired;

const isExpired = (kept: Kept, now: number): boolean =>
  kept.retainedUntil !== null && kept.retainedUntil <= now;

/** The memory request store, plus the synchronous version lookup that the delivery store answers with. */
export interface MemoryRequestStore extends RequestStore {
  /** The version of the live request `id`, or null: without copying the request. */
  versionOf(id: string): number | null;
}

/**
 * Interactive requests in a map. Each write checks, stores and applies its due-work changes without
 * yielding to the event loop, which is what makes the compare-and-set and the due changes atomic.
 * Finished requests expire by the store's clock: dropped when read, swept lazily as it is written.
 */
export function memoryRequestStore({
  dueWork,
  deliveries,
  clock,
}: MemoryRequestStoreOptions): MemoryRequestStore {
  const requests = new Map<string, Kept>();
  const compact = createCompactor();
  const sweep = createLazySweep(requests, isExpired, clock);

  const live = (id: string): Kept | undefined => {
    const kept = requests.get(id);
    if (kept === undefined || !isExpired(kept, clock.now())) return kept;
    requests.delete(id);
    return undefined;
  };

  return {
    async createRequest(request, due) {
      if (live(request.id) !== undefined) {
        throw new NotifyError('internal', `Request ${request.id} already exists`);
      }
      const kept = compact(request, null);
      requests.set(kept.id, kept);
      dueWork.apply(due);
      sweep();
    },
    versionOf: (id) => live(id)?.version ?? null,
    async getRequest(id) {
      const kept = live(id);
      return kept === undefined ? null : copyRequest(kept);
    },
    async updateRequest(next, expectedVersion, due, options) {
      const kept = live(next.id);
      if (kept?.version !== expectedVersion) return false;
      if (options?.ttlMs === undefined) requests.set(kept.id, compact(next, kept.retainedUntil, kept));
      else {
        const retainedUntil = clock.now() + Math.ceil(options.ttlMs);
        requests.set(kept.id, compact(next, retainedUntil, kept));
        deliveries.expire(next.id, retainedUntil);
      }
      dueWork.apply(due);
      return true;
    },
  } satisfies MemoryRequestStore;
}
