import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import type { RequestStore } from '../../core/ports/request-store.js';
import { plainBody, post, readStatus } from '../support/api-requests.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testKeys, testSeed } from '../support/test-seed.js';

/** A transport that accepts every delivery and keeps nothing: this test is about the core's writes. */
const nullTransport = (): ChatTransport => ({
  platform: 'null',
  routes: [],
  address: (user) => ({ installationId: 'local', userRef: user.email }),
  deliver: async () => ({}),
  update: async () => {},
  connect: () => {},
});

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
    const notifier = createNotifier({ storage: { ...storage, requests }, transports: [nullTransport()] });
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
      ...nullTransport(),
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
      transports: [nullTransport(), closing('slow')],
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
    // Stopping again closes nothing again.
    await notifier.stop();
    expect(events.filter((event) => event === 'close slow')).toHaveLength(1);
  });

  it('waits for a send under way, then refuses requests on its routes with 503, leaves other paths alone, and does not start again', async () => {
    const storage = memoryStorage();
    let release = () => {};
    const slowDelivery = new Promise<void>((resolve) => {
      release = resolve;
    });
    const delivered: string[] = [];
    const slowTransport: ChatTransport = {
      ...nullTransport(),
      async deliver(delivery) {
        await slowDelivery;
        delivered.push(delivery.recipient);
        return {};
      },
    };
    const notifier = createNotifier({ storage, transports: [slowTransport] });
    await notifier.seed(testSeed);
    const sending = post(notifier, plainBody(['bob@acme.test']));
    await new Promise((resolve) => setTimeout(resolve, 10));
    let stopped = false;
    const stopping = notifier.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    const refused = await post(notifier, plainBody(['carol@acme.test']));
    expect(refused?.status).toBe(503);
    expect(refused?.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused?.body ?? '{}')).toEqual({
      status: 'error',
      details: 'The service is shutting down',
    });
    expect((await readStatus(notifier, 'req_000000000000000000000000'))?.status).toBe(503);
    expect(
      await notifier.handle({ method: 'GET', url: '/elsewhere', headers: {}, body: null, clientAddress: '' }),
    ).toBeNull();

    release();
    expect((await sending)?.status).toBe(200);
    await stopping;
    expect(delivered).toEqual(['bob@acme.test']);
    expect(() => notifier.start()).toThrow('This notifier was stopped; create a new one to serve again');
  });

  it('runs no due work once stopped: the items stay free for the other instances', async () => {
    let now = Date.UTC(2030, 0, 1);
    const storage = memoryStorage();
    const clock = { now: () => now };
    const notifier = createNotifier({ storage, transports: [nullTransport()], clock });
    await notifier.seed(testSeed);
    await sendInteractive(notifier, ['bob@acme.test'], 1);
    await notifier.stop();
    now += 2 * 60_000;

    await expect(notifier.runDueWork()).rejects.toThrow(
      'This notifier was stopped; create a new one to serve again',
    );
    // Another instance on the same store takes the timeout at once, not after a lease.
    const other = createNotifier({ storage, transports: [nullTransport()], clock });
    expect(await other.runDueWork()).toBe(1);
    await other.stop();
  });

  it('does not wait for a client still sending its body, which gets the 503 once it is read', async () => {
    const notifier = createNotifier({ storage: memoryStorage(), transports: [nullTransport()] });
    await notifier.seed(testSeed);
    let finishBody = () => {};
    const rest = new Promise<void>((resolve) => {
      finishBody = resolve;
    });
    const text = plainBody(['bob@acme.test']);
    async function* slowBody() {
      yield new TextEncoder().encode(text.slice(0, 10));
      await rest;
      yield new TextEncoder().encode(text.slice(10));
    }
    const answer = notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
      body: slowBody(),
      clientAddress: '127.0.0.1',
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    await notifier.stop();
    finishBody();
    expect((await answer)?.status).toBe(503);
  });
});
