import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import type { ChatSink, ChatTransport } from '../../core/ports/chat-transport.js';
import { interactiveBody, plainBody, post } from '../support/api-requests.js';
import { testSeed } from '../support/test-seed.js';

/** A platform that reaches everyone and answers a ref naming itself and the recipient; keeps its sink. */
function namingTransport(platform: string): ChatTransport & { sink(): ChatSink } {
  let connected: ChatSink | null = null;
  return {
    platform,
    routes: [],
    address: (user) => ({ installationId: platform, userRef: user.id }),
    deliver: async (delivery) => ({ at: `${platform}/${delivery.recipient}` }),
    update: async () => {},
    connect(sink) {
      connected = sink;
    },
    sink() {
      if (connected === null) throw new Error(`${platform} was not connected`);
      return connected;
    },
  };
}

describe('ChatSink.copies', () => {
  it("lists the copies of a send that the asking transport delivered, with its refs, and no other platform's", async () => {
    const alpha = namingTransport('alpha');
    const beta = namingTransport('beta');
    const notifier = createNotifier({ storage: memoryStorage(), transports: [alpha, beta] });
    await notifier.seed(testSeed);
    const sent = await post(notifier, interactiveBody(['bob@acme.test', 'carol@acme.test']));
    const requestId = (JSON.parse(sent?.body ?? '{}') as { request_id: string }).request_id;

    // Copies go out to recipients at once, so they are recorded in no set order.
    const copiesOf = async (transport: ReturnType<typeof namingTransport>) =>
      (await transport.sink().copies(requestId))
        .map(({ sendId, recipient, platform, ref }) => ({ sendId, recipient, platform, ref }))
        .sort((a, b) => a.recipient.localeCompare(b.recipient));
    for (const transport of [alpha, beta]) {
      expect(await copiesOf(transport)).toEqual(
        ['bob@acme.test', 'carol@acme.test'].map((recipient) => ({
          sendId: requestId,
          recipient,
          platform: transport.platform,
          ref: { at: `${transport.platform}/${recipient}` },
        })),
      );
    }
    expect(await alpha.sink().copies('req_unknownunknownunknown')).toEqual([]);
    await notifier.stop();
  });
});

describe('ChatSink.view', () => {
  it("answers what a recipient's copy should show now, and null for anyone else or a send that is no request", async () => {
    const alpha = namingTransport('alpha');
    const notifier = createNotifier({ storage: memoryStorage(), transports: [alpha] });
    await notifier.seed(testSeed);
    const sent = await post(notifier, interactiveBody(['bob@acme.test', 'carol@acme.test']));
    const requestId = (JSON.parse(sent?.body ?? '{}') as { request_id: string }).request_id;
    const plain = await post(notifier, plainBody(['bob@acme.test']));
    const notificationId = (JSON.parse(plain?.body ?? '{}') as { notification_id: string }).notification_id;
    const sink = alpha.sink();

    expect(await sink.view(requestId, 'bob@acme.test')).toMatchObject({
      sendId: requestId,
      version: 0,
      state: 'open',
      buttonsEnabled: true,
    });
    expect(await notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' })).toBe('accepted');
    expect(await sink.view(requestId, 'bob@acme.test')).toMatchObject({
      version: 1,
      selected: 'yes',
      buttonsEnabled: false,
    });
    expect(await sink.view(requestId, 'carol@acme.test')).toMatchObject({ version: 1, selected: null });
    expect(await sink.view(requestId, 'dave@acme.test')).toBeNull();
    expect(await sink.view(notificationId, 'bob@acme.test')).toBeNull();
    expect(await sink.view('req_unknownunknownunknown', 'bob@acme.test')).toBeNull();
    await notifier.stop();
  });
});
