import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/index.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { manualClock } from '../support/manual-clock.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testSeed } from '../support/test-seed.js';

const unavailable = () => new NotifyError('unavailable', 'Storage is temporarily unavailable');

/**
 * Stands in for a store that is briefly unavailable (a dropped Redis connection) at one step of the
 * replay, once: failing before the step, or, for the take, after it was applied (its answer lost).
 */
function flawedAt(step: 'read' | 'take' | 'schedule', storage: StoragePorts): StoragePorts {
  let failed = false;
  const once = () => {
    const first = !failed;
    failed = true;
    return first;
  };
  return {
    ...storage,
    requests: {
      ...storage.requests,
      getRequest: (requestId) =>
        step === 'read' && once() ? Promise.reject(unavailable()) : storage.requests.getRequest(requestId),
    },
    failedCallbacks: {
      ...storage.failedCallbacks,
      take: async (requestId) => {
        const taken = await storage.failedCallbacks.take(requestId);
        if (step === 'take' && once()) throw unavailable();
        return taken;
      },
    },
    dueWork: {
      ...storage.dueWork,
      enqueue: (items) =>
        step === 'schedule' && once() ? Promise.reject(unavailable()) : storage.dueWork.enqueue(items),
    },
  };
}

describe('replaying a failed callback', () => {
  it.each([
    ['reading its request', 'read'],
    ['taking the failure (applied, its answer lost)', 'take'],
    ['scheduling the callback', 'schedule'],
  ] as const)(
    'keeps the failure when the store fails %s, so that the replay can be asked again',
    async (_, step) => {
      const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
      const storage = memoryStorage({ clock });
      const notifier = createNotifier({
        storage: flawedAt(step, storage),
        clock,
        transports: [inboxTransport({ clock })],
      });
      await notifier.seed(testSeed);
      const requestId = await sendInteractive(notifier, ['bob@acme.test']);
      const failure = {
        requestId,
        organizationId: 'acme',
        url: 'https://hooks.example/done',
        attempts: 8,
        lastStatus: 500,
        lastError: 'HTTP 500',
        failedAt: clock.now(),
      };
      await storage.failedCallbacks.add(failure);
      await expect(notifier.failedCallbacks.replay(requestId)).rejects.toThrow('unavailable');
      expect(await notifier.failedCallbacks.list('acme')).toEqual([failure]);
      expect(await notifier.failedCallbacks.replay(requestId)).toBe(true);
      expect(await notifier.failedCallbacks.list('acme')).toEqual([]);
      await notifier.stop();
    },
  );
});
