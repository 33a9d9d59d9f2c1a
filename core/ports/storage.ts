import type { AdmissionStore } from './admission-store.js';
import type { DeliveryStore } from './delivery-store.js';
import type { DirectoryStore } from './directory-store.js';
import type { DueWorkStore } from './due-work-store.js';
import type { FailedCallbackStore } from './failed-callback-store.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { RateLimitStore } from './rate-limit-store.js';
import type { RequestStore } from './request-store.js';
import type { TransportStateStore } from './transport-state-store.js';

/** Every storage port; a storage adapter (memory, Redis, MongoDB) provides them all over one backend. */
export interface StoragePorts {
  directory: DirectoryStore;
  requests: RequestStore;
  deliveries: DeliveryStore;
  idempotency: IdempotencyStore;
  rateLimits: RateLimitStore;
  admission: AdmissionStore;
  dueWork: DueWorkStore;
  /**
   * What chat transports keep of their own, shared by all of them; the notifier hands each
   * transport a view namespaced by its platform (`ChatSink.state`).
   */
  transportState: TransportStateStore;
  failedCallbacks: FailedCallbackStore;
}
