import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import type { RequestStore } from '../../core/ports/request-store.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testSeed } from '../support/test-seed.js';

/** A transport that accepts every delivery and keeps nothing: this test is about the core's writes. */
const nullTransport: ChatTransport = {
  platform: 'null',
  routes: [],
  address: (user) => ({ installationId: 'local', userRef: user.email }),
  deliver: async () => ({}),
  update: async () => {},
  connect: () => {},
};

describe('notifier.stop', () => {
  it('waits for a request write that is under way before it resolves', async () => {
    const storage = memoryStorage();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let writes = 0;
    const requests: RequestStore = {
      ...storage.requests,
      async updateRequest(...args) {
        writes += 1;
        await gate;
        return storage.requests.updateRequest(...args);
      },
    };
    const notifier = createNotifier({ storage: { ...storage, requests }, transports: [nullTransport] });
    await notifier.seed(testSeed);
    const requestId = await sendInteractive(notifier, ['bob@acme.test'], 5);

    const click = notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' });
    while (writes === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    let stopped = false;
    const stopping = notifier.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);

    release();
    expect(await click).toBe('accepted');
    await stopping;
    expect(stopped).toBe(true);
    expect((await storage.requests.getRequest(requestId))?.recipients[0]?.value).toBe('yes');
  });

  it("closes every transport, once requests no longer change, and waits for each transport's close", async () => {
    const storage = memoryStorage();
    const events: string[] = [];
    let closed = () => {};
    const closing = (platform: string): ChatTransport => ({
      ...nullTransport,
      platform,
      close: () =>
        new Promise<void>((resolve) => {
          events.push(`close ${platform}`);
          closed = resolve;
        }),
    });
    const requests: RequestStore = {
      ...storage.requests,
      async updateRequest(...args) {
        events.push('write');
        return storage.requests.updateRequest(...args);
      },
    };
    const notifier = createNotifier({
      storage: { ...storage, requests },
      transports: [nullTransport, closing('slow')],
    });
    await notifier.seed(testSeed);
    const requestId = await sendInteractive(notifier, ['bob@acme.test'], 5);
    const click = notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' });
    let stopped = false;
    const stopping = notifier.stop().then(() => {
      stopped = true;
    });
    expect(await click).toBe('accepted');
    while (!events.includes('close slow')) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(events).toEqual(['write', 'close slow']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    closed();
    await stopping;
    expect(stopped).toBe(true);
  });
});
