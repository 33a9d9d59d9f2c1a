import type { SchedulerLike } from 'rxjs';
import type { DueWorkRunner } from './due-work/due-work-runner.js';
import type { CallbackTransport } from './ports/callback-transport.js';
import type { ChatTransport } from './ports/chat-transport.js';
import type { Clock } from './ports/clock.js';
import type { Logger } from './ports/logger.js';
import type { StoragePorts } from './ports/storage.js';
import type { RateLimitSettings } from './rate-limit/settings.js';
import type { RequestMachine } from './request/request-machine.js';
import type { IdGenerator } from './security/random-id.js';

/** Everything the use cases need, assembled once by `createNotifier`. */
export interface CoreContext {
  storage: StoragePorts;
  transports: readonly ChatTransport[];
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Drives the core's pauses (a copy's record tried again); a virtual-time one in tests. */
  scheduler: SchedulerLike;
  rateLimits: RateLimitSettings;
  machine: RequestMachine;
  dueWork: DueWorkRunner;
  /** Delivers completion callbacks; without one, `callback_url` is refused. */
  callbacks: CallbackTransport | null;
  /** How long a finished send stays readable, in milliseconds (`NotifierOptions.retention`). */
  retentionMs: number;
}
