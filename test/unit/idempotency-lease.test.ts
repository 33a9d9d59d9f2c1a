import { afterEach, describe, expect, it, vi } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { ChatTransport } from '../../core/adapter-kit.js';
import { createNotifier } from '../../core/index.js';
import { plainBody, post } from '../support/api-requests.js';
import { manualClock } from '../support/manual-clock.js';
import { testSeed } from '../support/test-seed.js';

/**
 * The inbox, whose deliveries wait until `release` is called: stands in for a platform that makes
 * a send slow (Slack answering 429 with a long Retry-After), which cannot be produced here.
 */
function slowTransport(inner: ChatTransport) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const delivered: string[] = [];
  const transport: ChatTransport = {
    ...inner,
    connect: (sink) => inner.connect(sink),
    address: (user, organization) => inner.address(user, organization),
    async deliver(delivery) {
      await gate;
      delivered.push(delivery.recipient);
      return inner.deliver(delivery);
    },
  };
  return { transport, delivered, release: () => release() };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('an Idempotency-Key held by a slow send', () => {
  it('stays held past the first lease while the send runs: a repeat gets 409, and nobody is notified twice', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
    const slow = slowTransport(inboxTransport({ clock }));
    const notifier = createNotifier({
      storage: memoryStorage({ clock }),
      clock,
      transports: [slow.transport],
    });
    await notifier.seed(testSeed);
    const key = { 'idempotency-key': 'deploy-42' };
    const first = post(notifier, plainBody(), key);
    for (let step = 0; step < 4; step += 1) {
      clock.advance(20_000);
      await vi.advanceTimersByTimeAsync(20_000);
    }
    const repeat = await post(notifier, plainBody(), key);
    expect(repeat?.status).toBe(409);
    slow.release();
    expect((await first)?.status).toBe(200);
    const replay = await post(notifier, plainBody(), key);
    expect(replay?.headers['idempotent-replayed']).toBe('true');
    expect(slow.delivered).toEqual(['bob@acme.test']);
    await notifier.stop();
  });

  it('goes on, logging, when renewing the lease fails, even by a throw rather than a rejection', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
    const storage = memoryStorage({ clock });
    const warnings: string[] = [];
    const slow = slowTransport(inboxTransport({ clock }));
    const notifier = createNotifier({
      storage: {
        ...storage,
        idempotency: {
          ...storage.idempotency,
          renew: () => {
            throw new Error('a store written before renew existed');
          },
        },
      },
      clock,
      transports: [slow.transport],
      logger: { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} },
    });
    await notifier.seed(testSeed);
    const sent = post(notifier, plainBody(), { 'idempotency-key': 'deploy-43' });
    clock.advance(20_000);
    await vi.advanceTimersByTimeAsync(20_000);
    slow.release();
    expect((await sent)?.status).toBe(200);
    expect(warnings).toContain('could not renew the lease of an Idempotency-Key');
    await notifier.stop();
  });
});
