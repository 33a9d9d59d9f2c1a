import {
  type Clock,
  type InteractiveRequest,
  NotifyError,
  type RequestStore,
} from '../../../core/adapter-kit.js';
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

/** A stored request and when it expires (null: never). */
interface Stored {
  request: InteractiveRequest;
  expiresAt: number | null;
}

/**
 * A copy of every field, made by hand: callers must not reach stored state through the objects they
 * pass or get, and this costs a fraction of `structuredClone` on the status path.
 */
const copyRequest = (request: InteractiveRequest): InteractiveRequest => ({
  ...request,
  options: request.options.map(({ text, value }) => ({ text, value })),
  sender: { ...request.sender },
  callback: request.callback === null ? null : { ...request.callback },
  recipients: request.recipients.map(({ email, key, value, respondedAt, expired }) => ({
    email,
    key,
    value,
    respondedAt,
    expired,
  })),
});

const isExpired = (stored: Stored, now: number): boolean =>
  stored.expiresAt !== null && stored.expiresAt <= now;

/**
 * Interactive requests in a map. Each write checks, stores and applies its due-work changes without
 * yielding to the event loop, which is what makes the compare-and-set and the due changes atomic.
 * Finished requests expire by the store's clock: dropped when read, swept lazily as the map grows.
 */
export function memoryRequestStore({ dueWork, deliveries, clock }: MemoryRequestStoreOptions): RequestStore {
  const requests = new Map<string, Stored>();
  const sweep = createLazySweep(requests, isExpired);

  const live = (id: string): Stored | undefined => {
    const stored = requests.get(id);
    if (stored === undefined || !isExpired(stored, clock.now())) return stored;
    requests.delete(id);
    return undefined;
  };

  return {
    async createRequest(request, due) {
      if (live(request.id) !== undefined) {
        throw new NotifyError('internal', `Request ${request.id} already exists`);
      }
      requests.set(request.id, { request: copyRequest(request), expiresAt: null });
      dueWork.apply(due);
      sweep(clock.now());
    },
    async getRequest(id) {
      const stored = live(id);
      return stored === undefined ? null : copyRequest(stored.request);
    },
    async updateRequest(next, expectedVersion, due, options) {
      const stored = live(next.id);
      if (stored?.request.version !== expectedVersion) return false;
      stored.request = copyRequest(next);
      if (options?.ttlMs !== undefined) {
        stored.expiresAt = clock.now() + Math.ceil(options.ttlMs);
        deliveries.expire(next.id, stored.expiresAt);
      }
      dueWork.apply(due);
      return true;
    },
  } satisfies RequestStore;
}
