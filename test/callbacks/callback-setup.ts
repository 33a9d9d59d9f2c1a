import { type HttpCallbacksOptions, httpCallbacks } from '../../adapters/callbacks/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { CallbackTransport, HostResolver } from '../../core/ports/callback-transport.js';
import type { Logger } from '../../core/ports/logger.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { type ManualClock, manualClock } from '../support/manual-clock.js';
import { testKeys, testSeed } from '../support/test-seed.js';

/**
 * A resolver standing in for DNS (no name resolves to a test address here): each name answers
 * the addresses of the table, or the next entry of a sequence on each lookup.
 */
export function tableResolver(
  table: Record<string, string[] | string[][]>,
): HostResolver & { lookups: string[] } {
  const lookups: string[] = [];
  const calls = new Map<string, number>();
  return {
    lookups,
    async resolve(hostname) {
      lookups.push(hostname);
      const entry = table[hostname];
      if (entry === undefined) return [];
      if (entry.every((item) => Array.isArray(item))) {
        const index = calls.get(hostname) ?? 0;
        calls.set(hostname, index + 1);
        return (entry as string[][])[Math.min(index, entry.length - 1)] ?? [];
      }
      return entry as string[];
    },
  };
}

/** A notifier with real HTTP callback delivery, in virtual time that starts at the real now. */
export interface CallbackSetup {
  notifier: Notifier;
  storage: StoragePorts;
  clock: ManualClock;
  send(
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  click(requestId: string, recipient: string, value: string): Promise<void>;
}

/**
 * Real HTTP delivery with these options, or the given transport instead; on memory storage in the
 * setup's virtual time, or on the given storage.
 */
export async function callbackSetup(
  options: HttpCallbacksOptions & {
    transport?: CallbackTransport;
    storage?: StoragePorts;
    retention?: number;
    logger?: Logger;
  },
): Promise<CallbackSetup> {
  // Real time at the start: standardwebhooks' verify() compares webhook-timestamp with the wall clock.
  const clock = manualClock(Date.now());
  const storage = options.storage ?? memoryStorage({ clock });
  const notifier = createNotifier({
    storage,
    clock,
    transports: [inboxTransport({ clock })],
    callbacks: options.transport ?? httpCallbacks(options),
    ...(options.retention === undefined ? {} : { retention: options.retention }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  await notifier.seed(testSeed);
  return {
    notifier,
    storage,
    clock,
    async send(body, headers = {}) {
      const response = await notifier.handle({
        method: 'POST',
        url: '/api/notify',
        headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json', ...headers },
        body: [new TextEncoder().encode(JSON.stringify(body))],
        clientAddress: '127.0.0.1',
      });
      return {
        status: response?.status ?? 0,
        body: JSON.parse(response?.body ?? '{}') as Record<string, unknown>,
      };
    },
    async click(requestId, recipient, value) {
      await notifier.click({ requestId, recipient, value });
    },
  };
}

/** An interactive send body with a callback URL. */
export const interactive = (callbackUrl: string, extra: Record<string, unknown> = {}) => ({
  user_emails: ['bob@acme.test', 'dave@acme.test'],
  message: 'Approve *v2*?',
  external_reference_id: 'deploy-7',
  response_request: {
    options: [
      { text: 'Approve', value: 'approve' },
      { text: 'Reject', value: 'reject' },
    ],
    timeout_minutes: 1,
    callback_url: callbackUrl,
    ...extra,
  },
});
