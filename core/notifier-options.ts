import { checkMethodsOption, clockMethods, loggerMethods } from './methods-option.js';
import type { CallbackTransport } from './ports/callback-transport.js';
import type { ChatTransport } from './ports/chat-transport.js';
import type { StoragePorts } from './ports/storage.js';
import { defaultRateLimits, type RateLimitSettings } from './rate-limit/settings.js';

const day = 24 * 60 * 60 * 1000;
/** The longest delay a Node timer takes; a longer one fires at once. */
const maxTimerMs = 2 ** 31 - 1;

/**
 * The longest retention: 100 years, as the standalone service's `NOTIFY_RETENTION_DAYS` allows. A
 * stored time to live must stay an integer Redis reads (below 2^63 ms, and never in JavaScript's
 * exponent form): a longer one would fail every write that finishes a send there.
 */
const maxRetentionMs = 36_500 * day;

/** The retention in milliseconds; 30 days when none is given. */
export function retentionMillis(retention: number | { days: number } | undefined): number {
  const ms =
    retention === undefined ? 30 * day : typeof retention === 'number' ? retention : retention.days * day;
  if (!Number.isFinite(ms) || ms <= 0 || ms > maxRetentionMs) {
    throw new RangeError(
      `retention must be a positive duration of at most 100 years (36500 days), got ${JSON.stringify(retention)}`,
    );
  }
  return Math.ceil(ms);
}

/** The limits with the defaults filled in; each must let requests through, now and again later. */
export function rateLimitSettings(given: Partial<RateLimitSettings> | undefined): RateLimitSettings {
  // From plain JavaScript a string would spread as its characters: rateLimits.0, rateLimits.1, …
  if (given != null && (typeof given !== 'object' || Array.isArray(given))) {
    throw new TypeError(
      `rateLimits must be an object of limits ({ perKey, perOrganization, keyCreation }), got ${Array.isArray(given) ? 'an array' : typeof given}`,
    );
  }
  const limits = Object.entries(given ?? {}).filter(([, limit]) => limit !== undefined);
  const unknown = limits.filter(([name]) => !Object.hasOwn(defaultRateLimits, name));
  if (unknown.length > 0) {
    throw new RangeError(
      `rateLimits.${unknown[0]?.[0]} is no limit; the limits are ${Object.keys(defaultRateLimits).join(', ')}`,
    );
  }
  // A limit given as undefined (a setting left unset) keeps its default.
  const settings: RateLimitSettings = { ...defaultRateLimits, ...Object.fromEntries(limits) };
  for (const [name, limit] of Object.entries(settings)) {
    const { burst, perSecond } = (limit ?? {}) as Partial<RateLimitSettings['perKey']>;
    if (
      !(typeof burst === 'number' && Number.isFinite(burst) && burst >= 1) ||
      !(typeof perSecond === 'number' && Number.isFinite(perSecond) && perSecond > 0)
    ) {
      throw new RangeError(
        `rateLimits.${name} must be { burst, perSecond } with a finite burst of at least 1 and a finite rate above 0, got ${JSON.stringify(limit)}`,
      );
    }
  }
  return settings;
}

/** Checks the options that take numbers of the runner of due work. */
export function checkDueWorkOptions(options: { dueWorkConcurrency?: number; duePollMs?: number }): void {
  const { dueWorkConcurrency, duePollMs } = options;
  if (
    dueWorkConcurrency !== undefined &&
    !(Number.isSafeInteger(dueWorkConcurrency) && dueWorkConcurrency > 0)
  ) {
    throw new RangeError(`dueWorkConcurrency must be a positive integer, got ${String(dueWorkConcurrency)}`);
  }
  if (duePollMs !== undefined && !(Number.isFinite(duePollMs) && duePollMs > 0 && duePollMs <= maxTimerMs)) {
    throw new RangeError(
      `duePollMs must be a positive number of milliseconds up to 2^31-1, got ${String(duePollMs)}`,
    );
  }
}

/** Transports connected to a notifier: one connected again would serve two notifiers' state. */
const connected = new WeakSet<ChatTransport>();

/** Claims each transport for one notifier, refusing one that another notifier connected. */
export function claimTransports(transports: readonly ChatTransport[]): void {
  for (const transport of transports) {
    if (connected.has(transport)) {
      throw new TypeError(
        `The ${transport.platform} transport is connected to another notifier already; create one per notifier`,
      );
    }
  }
  for (const transport of transports) connected.add(transport);
}

/** Checks that `callbacks` is a callback transport, such as `httpCallbacks()` answers. */
export function checkCallbacks(callbacks: CallbackTransport | null | undefined): void {
  if (callbacks == null) return;
  const given = callbacks as Partial<CallbackTransport>;
  if (typeof given.send !== 'function' || typeof given.resolver?.resolve !== 'function') {
    throw new TypeError(
      'callbacks must be a callback transport with send and resolver (call httpCallbacks(), do not pass it)',
    );
  }
}

/** The ports a storage adapter provides, every one of them. */
const storagePorts: readonly (keyof StoragePorts)[] = [
  'directory',
  'requests',
  'deliveries',
  'idempotency',
  'rateLimits',
  'admission',
  'dueWork',
  'transportState',
  'failedCallbacks',
];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/**
 * Checks what `createNotifier` is given to work with, so that a mistake (a factory passed uncalled,
 * a missing option) is named at once rather than failing as a property read of the first request.
 */
export function checkNotifierParts(options: unknown): void {
  if (!isObject(options)) {
    throw new TypeError('createNotifier needs its options: { storage, transports }');
  }
  const { storage, transports } = options;
  if (typeof storage === 'function') {
    throw new TypeError('storage must be a storage: call its factory (memoryStorage()), do not pass it');
  }
  const missing = isObject(storage) ? storagePorts.filter((port) => !isObject(storage[port])) : storagePorts;
  if (missing.length > 0) {
    throw new TypeError(
      `storage must be a storage adapter's ports, as memoryStorage(), redisStorage(...) or mongoStorage(...) answer; missing: ${missing.join(', ')}`,
    );
  }
  if (!Array.isArray(transports)) {
    throw new TypeError('transports must be an array of chat transports, such as [inboxTransport()]');
  }
  checkMethodsOption('', 'logger', options.logger, ...loggerMethods);
  checkMethodsOption('', 'clock', options.clock, ...clockMethods);
  checkMethodsOption(
    '',
    'ids',
    options.ids,
    ['notificationId', 'requestId', 'internalId'],
    'notificationId, requestId and internalId',
  );
  checkMethodsOption(
    '',
    'scheduler',
    options.scheduler,
    ['now', 'schedule'],
    "now and schedule, as RxJS's schedulers",
  );
  transports.forEach((transport: unknown, index) => {
    const given = isObject(transport) ? transport : {};
    if (
      typeof given.platform !== 'string' ||
      !Array.isArray(given.routes) ||
      !['address', 'deliver', 'update', 'connect'].every((method) => typeof given[method] === 'function')
    ) {
      throw new TypeError(
        `transports[${index}] must be a chat transport${typeof transport === 'function' ? ': call its factory (inboxTransport()), do not pass it' : ' with platform, routes, address, deliver, update and connect'}`,
      );
    }
  });
}
