import { type Clock, type StoragePorts, systemClock } from '../../../core/adapter-kit.js';
import { memoryAdmissionStore } from './memory-admission-store.js';
import { memoryDeliveryStore } from './memory-delivery-store.js';
import { memoryDirectoryStore } from './memory-directory-store.js';
import { memoryDueWorkStore } from './memory-due-work-store.js';
import { memoryFailedCallbackStore } from './memory-failed-callback-store.js';
import { memoryIdempotencyStore } from './memory-idempotency-store.js';
import { memoryRateLimitStore } from './memory-rate-limit-store.js';
import { memoryRequestStore } from './memory-request-store.js';
import { memoryTransportStateStore } from './memory-transport-state-store.js';

export type { MemoryAdmissionStoreOptions } from './memory-admission-store.js';
export type { MemoryDeliveryStore, MemoryDeliveryStoreOptions } from './memory-delivery-store.js';
export type { MemoryDirectoryStore } from './memory-directory-store.js';
export type { MemoryDueWorkStore } from './memory-due-work-store.js';
export type { MemoryFailedCallbackStoreOptions } from './memory-failed-callback-store.js';
export type { MemoryIdempotencyStoreOptions } from './memory-idempotency-store.js';
export type { MemoryRateLimitStore, MemoryRateLimitStoreOptions } from './memory-rate-limit-store.js';
export type { MemoryRequestStore, MemoryRequestStoreOptions } from './memory-request-store.js';
export type { MemoryTransportStateStoreOptions } from './memory-transport-state-store.js';
export {
  memoryAdmissionStore,
  memoryDeliveryStore,
  memoryDirectoryStore,
  memoryDueWorkStore,
  memoryFailedCallbackStore,
  memoryIdempotencyStore,
  memoryRateLimitStore,
  memoryRequestStore,
  memoryTransportStateStore,
};

/** Options of {@link memoryStorage}. */
export interface MemoryStorageOptions {
  /**
   * Decides rate-limit refills and the expiry of idempotency records, transport state, finished
   * sends and failed callbacks. Defaults to the wall clock.
   */
  clock?: Clock;
}

/**
 * Every storage port in this process's memory: for tests, development and single-instance
 * deployments. Nothing survives a restart and nothing is shared between processes. Stores copy what
 * they take and what they return, so callers can never change stored state by mutating an object.
 */
export function memoryStorage(options: MemoryStorageOptions = {}): StoragePorts {
  const clock = options.clock ?? systemClock;
  const dueWork = memoryDueWorkStore();
  const directory = memoryDirectoryStore();
  const rateLimits = memoryRateLimitStore({ clock });
  const deliveries = memoryDeliveryStore({
    clock,
    requestVersion: async (sendId) => requests.versionOf(sendId),
  });
  const requests = memoryRequestStore({ dueWork, deliveries, clock });
  const idempotency = memoryIdempotencyStore({ clock });
  return {
    directory,
    requests,
    deliveries,
    idempotency,
    rateLimits,
    admission: memoryAdmissionStore({ directory, rateLimits, idempotency, requests }),
    dueWork,
    transportState: memoryTransportStateStore({ clock }),
    failedCallbacks: memoryFailedCallbackStore({ clock }),
  };
}
