import type { FailedCallback, FailedCallbackStore } from '../../../core/adapter-kit.js';

/** Failed callbacks by request id; a Map keeps insertion order, which is failure order. */
export function memoryFailedCallbackStore(): FailedCallbackStore {
  const byRequest = new Map<string, FailedCallback>();

  return {
    async add(failure) {
      byRequest.delete(failure.requestId);
      byRequest.set(failure.requestId, structuredClone(failure));
    },
    async list(organizationId) {
      return structuredClone(
        [...byRequest.values()].filter(
          (f) => organizationId === undefined || f.organizationId === organizationId,
        ),
      );
    },
    async get(requestId) {
      const failure = byRequest.get(requestId);
      return failure ? structuredClone(failure) : null;
    },
    async take(requestId) {
      const failure = byRequest.get(requestId);
      byRequest.delete(requestId);
      return failure ? structuredClone(failure) : null;
    },
  } satisfies FailedCallbackStore;
}
