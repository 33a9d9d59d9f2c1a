/**
 * The notifier every in-process benchmark measures: the given storage, the local inbox, limits that
 * never refuse (the benchmarks measure work, not the limiter's answers) and the test seed's
 * organizations, users and keys.
 */
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../core/notifier.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { testSeed } from '../test/support/test-seed.js';

const unlimited = { burst: 1e12, perSecond: 1e12 };

/**
 * What a benchmark may set beyond the storage: its clock (the inbox's too), retention, scheduler, and
 * a callback transport.
 */
export type BenchNotifierOptions = Pick<NotifierOptions, 'clock' | 'retention' | 'scheduler' | 'callbacks'>;

/** A seeded notifier on `storage`, delivering to the inbox. */
export async function benchNotifier(
  storage: StoragePorts,
  options: BenchNotifierOptions = {},
): Promise<Notifier> {
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport(options.clock ? { clock: options.clock } : {})],
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
    ...options,
  });
  await notifier.seed(testSeed);
  return notifier;
}
