import { type InteractiveRequest, NotifyError, type RequestStore } from '../../../core/adapter-kit.js';
import type { MemoryDueWorkStore } from './memory-due-work-store.js';

/** Options of {@link memoryRequestStore}. */
export interface MemoryRequestStoreOptions {
  /** The due-work store that request writes change in the same step. */
  dueWork: MemoryDueWorkStore;
}

/**
 * Interactive requests in a map. Each write checks, stores and applies its due-work changes without
 * yielding to the event loop, which is what makes the compare-and-set and the due changes atomic.
 */
export function memoryRequestStore({ dueWork }: MemoryRequestStoreOptions): RequestStore {
  const requests = new Map<string, InteractiveRequest>();

  return {
    async createRequest(request, due) {
      if (requests.has(request.id)) throw new NotifyError('internal', `Request ${request.id} already exists`);
      requests.set(request.id, structuredClone(request));
      dueWork.apply(due);
    },
    async getRequest(id) {
      const request = requests.get(id);
      return request === undefined ? null : structuredClone(request);
    },
    async updateRequest(next, expectedVersion, due) {
      if (requests.get(next.id)?.version !== expectedVersion) return false;
      requests.set(next.id, structuredClone(next));
      dueWork.apply(due);
      return true;
    },
  } satisfies RequestStore;
}
