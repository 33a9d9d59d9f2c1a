import type { ChatTransport } from '../../core/ports/chat-transport.js';

/** A transport whose deliveries to chosen recipients fail a number of times. */
export interface FlakyTransport extends ChatTransport {
  /** The next `times` deliveries to `recipient` (normalized address) fail. */
  failNext(recipient: string, times: number): void;
}

/**
 * Wraps a real transport and makes chosen deliveries fail, standing in for a chat platform that
 * is briefly unreachable for some users (a Slack or Teams outage cannot be produced here).
 */
export function flakyTransport(inner: ChatTransport): FlakyTransport {
  const failures = new Map<string, number>();
  return {
    platform: inner.platform,
    routes: inner.routes,
    address: (user, organization) => inner.address(user, organization),
    connect: (sink) => inner.connect(sink),
    update: (delivery, ref) => inner.update(delivery, ref),
    async deliver(delivery) {
      const left = failures.get(delivery.recipient) ?? 0;
      if (left > 0) {
        failures.set(delivery.recipient, left - 1);
        throw new Error(`simulated outage for ${delivery.recipient}`);
      }
      return inner.deliver(delivery);
    },
    failNext(recipient, times) {
      failures.set(recipient, times);
    },
  };
}
