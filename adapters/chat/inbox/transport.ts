import {
  type ChatAddress,
  type ChatDelivery,
  type ChatSink,
  type ChatTransport,
  type ChatUpdate,
  type Clock,
  type DeliveryRef,
  type MessageView,
  NotifyError,
  normalizeEmail,
  systemClock,
} from '../../../core/adapter-kit.js';
import { allowedHostNames, type InboxAllowedHosts } from './allowed-hosts.js';
import { inboxMessages, type Term } from './messages.js';
import type { ConnectedContext } from './route-context.js';
import { inboxRoutes } from './routes.js';

/** Settings of {@link inboxTransport}. */
export interface InboxTransportOptions {
  /** Source of delivery times; the wall clock by default. */
  clock?: Clock;
  /**
   * Host names (as in the `Host` header, without port) the page and its API answer besides
   * `localhost`, `*.localhost` and IP addresses, which are always answered; `true` answers any.
   * Others get `403`, so that a site which makes its own name resolve to this machine (DNS
   * rebinding) cannot read the inbox from a visitor's browser. Name the host the inbox is reached
   * by, e.g. `['inbox.internal.example']`.
   */
  allowedHosts?: InboxAllowedHosts;
}

/** The installation id of every inbox address: the inbox has a single, local installation. */
const installationId = 'local';

const notConnected = () => new NotifyError('internal', 'The inbox transport is not connected to a notifier');

/** What a delivered copy keeps as its reference: nothing, its send and recipient name it. */
const noReference = (): DeliveryRef => ({});

/** How long a copy showing `view` may change: while its request is open, until its timeout. */
const termOf = (view: MessageView): Term => ({
  expiresAt: view.expiresAt,
  open: view.state === 'open' || view.state === 'answered' || view.state === 'changeable',
});

/**
 * A chat transport that keeps every message in the storage the notifier connects it to (its
 * `ChatSink.state`, so every instance on one store shows the same inbox) and serves a page and a
 * JSON API (mounted by the hosts) where a user reads them and clicks their buttons. It reaches
 * every user.
 */
export function inboxTransport(options: InboxTransportOptions = {}): ChatTransport {
  const clock = options.clock ?? systemClock;
  const allowedHosts = allowedHostNames(options.allowedHosts);
  let connected: ConnectedContext | null = null;

  return {
    platform: 'inbox',

    address(user): ChatAddress {
      return { installationId, userRef: normalizeEmail(user.email) };
    },

    deliver(delivery: ChatDelivery): Promise<DeliveryRef> {
      const { message: view } = delivery;
      if (connected === null) return Promise.reject(notConnected());
      // Every copy of every send is delivered: a step fewer than an async function.
      return connected.messages
        .add(
          {
            sendId: view.sendId,
            kind: view.kind,
            recipient: delivery.recipient,
            organizationId: delivery.organization.id,
            text: view.text,
            buttons: view.buttons,
            buttonsEnabled: view.buttonsEnabled,
            footer: view.footer,
            selected: view.selected,
            deliveredAt: clock.now(),
            term: termOf(view),
          },
          view.version,
        )
        .then(noReference);
    },

    update(delivery: ChatUpdate, ref: DeliveryRef): Promise<void> {
      const { message: view } = delivery;
      // Copies delivered by earlier releases have an id of their own, in their reference.
      const copy = ref.messageId ?? { sendId: view.sendId, recipient: delivery.recipient };
      if (connected === null) return Promise.reject(notConnected());
      // Every copy of every request that falls due is updated: a step fewer than an async function.
      // The view is the state it shows: the update reads its buttons, footer and choice.
      return connected.messages.update(copy, view.version, view, termOf(view)).then((shows) => {
        if (shows) return;
        const name = typeof copy === 'string' ? copy : `of ${copy.sendId} to ${copy.recipient}`;
        throw new NotifyError('not_found', `Inbox message ${name} not found`);
      });
    },

    routes: inboxRoutes(() => connected, allowedHosts),

    connect(sink: ChatSink): void {
      connected = {
        sink,
        messages: inboxMessages({
          state: sink.state,
          clock,
          ...(sink.retentionMs === undefined ? {} : { retentionMs: sink.retentionMs }),
        }),
      };
    },
  };
}
