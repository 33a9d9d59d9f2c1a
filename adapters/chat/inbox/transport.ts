import { normalizeEmail } from '../../../core/domain/directory.js';
import { NotifyError } from '../../../core/errors.js';
import type {
  ChatAddress,
  ChatDelivery,
  ChatSink,
  ChatTransport,
} from '../../../core/ports/chat-transport.js';
import { type Clock, systemClock } from '../../../core/ports/clock.js';
import type { DeliveryRef } from '../../../core/ports/delivery-store.js';
import type { InboxMessage, InboxStore } from '../../../core/ports/inbox-store.js';
import { randomBase62 } from '../../../core/security/random-id.js';
import { inboxRoutes } from './routes.js';

/** Settings of {@link inboxTransport}. */
export interface InboxTransportOptions {
  /** Where messages are kept; every instance on the same store shows the same inbox. */
  store: InboxStore;
  /** Source of delivery times; the wall clock by default. */
  clock?: Clock;
}

/** The installation id of every inbox address: the inbox has a single, local installation. */
const installationId = 'local';

/**
 * A chat transport that stores every message in an {@link InboxStore} and serves a page and a JSON
 * API (mounted by the hosts) where a user reads them and clicks their buttons. It reaches every user.
 */
export function inboxTransport(options: InboxTransportOptions): ChatTransport {
  const { store } = options;
  const clock = options.clock ?? systemClock;
  let sink: ChatSink | null = null;

  return {
    platform: 'inbox',

    address(user): ChatAddress {
      return { installationId, userRef: normalizeEmail(user.email) };
    },

    async deliver(delivery: ChatDelivery): Promise<DeliveryRef> {
      const { message: view } = delivery;
      const message: InboxMessage = {
        id: `msg_${randomBase62(24)}`,
        recipient: normalizeEmail(delivery.recipient),
        organizationId: delivery.organization.id,
        kind: view.kind,
        requestId: view.kind === 'interactive' ? view.sendId : null,
        text: view.text,
        buttons: view.buttons.map(({ text, value }) => ({ text, value })),
        buttonsEnabled: view.buttonsEnabled,
        footer: view.footer,
        selected: view.selected,
        deliveredAt: clock.now(),
      };
      await store.saveMessage(message);
      return { messageId: message.id };
    },

    async update(delivery: ChatDelivery, ref: DeliveryRef): Promise<void> {
      const messageId = ref.messageId;
      const current = messageId === undefined ? null : await store.getMessage(messageId);
      if (current === null) {
        throw new NotifyError(
          'not_found',
          `Inbox message ${messageId ?? '(ref without messageId)'} not found`,
        );
      }
      const { message: view } = delivery;
      await store.saveMessage({
        ...current,
        buttons: view.buttons.map(({ text, value }) => ({ text, value })),
        buttonsEnabled: view.buttonsEnabled,
        footer: view.footer,
        selected: view.selected,
      });
    },

    routes: inboxRoutes({ store, sink: () => sink }),

    connect(connected: ChatSink): void {
      sink = connected;
    },
  };
}
