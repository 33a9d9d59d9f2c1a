import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/index.js';
import { manualClock } from '../support/manual-clock.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testSeed } from '../support/test-seed.js';

describe('replaying a failed callback', () => {
  it('keeps the failure when the store fails on the way, so that the replay can be asked again', async () => {
    const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
    const storage = memoryStorage({ clock });
    // Stands in for a store that is briefly unavailable (a dropped Redis connection).
    const flaw = { failNext: false };
    const requests = {
      ...storage.requests,
      getRequest: (requestId: string) => {
        if (!flaw.failNext) return storage.requests.getRequest(requestId);
        flaw.failNext = false;
        return Promise.reject(new NotifyError('unavailable', 'Storage is temporarily unavailable'));
      },
    };
    const notifier = createNotifier({
      storage: { ...storage, requests },
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
    flaw.failNext = true;
    await expect(notifier.failedCallbacks.replay(requestId)).rejects.toThrow('unavailable');
    expect(await notifier.failedCallbacks.list('acme')).toEqual([failure]);
    expect(await notifier.failedCallbacks.replay(requestId)).toBe(true);
    await notifier.stop();
  });
});
