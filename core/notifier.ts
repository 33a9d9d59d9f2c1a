import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { deliverCallback } from './callbacks/deliver-callback.js';
import { organizationShares } from './callbacks/organization-shares.js';
import type { CoreContext } from './context.js';
import { normalizeEmail, type Principal, type User } from './domain/directory.js';
import { createDueWorkRunner, defaultDueWorkConcurrency } from './due-work/due-work-runner.js';
import { apiRoutes } from './http/api-routes.js';
import type { TrustProxy } from './http/client-address.js';
import { createHttpHandler, type HttpHandler } from './http/handler.js';
import { ServingGate } from './http/serving-gate.js';
import {
  checkCallbacks,
  checkDueWorkOptions,
  checkNotifierParts,
  claimTransports,
  rateLimitSettings,
  retentionMillis,
} from './notifier-options.js';
import type { CallbackTransport } from './ports/callback-transport.js';
import type { ChatTransport, Click, ClickOptions, ClickOutcome } from './ports/chat-transport.js';
import { type Clock, systemClock } from './ports/clock.js';
import type { FailedCallback } from './ports/failed-callback-store.js';
import { type Logger, silentLogger } from './ports/logger.js';
import type { StoragePorts } from './ports/storage.js';
import type { RateLimitSettings } from './rate-limit/settings.js';
import { pledgedRefreshDelayMs } from './request/due-changes.js';
import { requestView } from './request/message-view.js';
import { createRequestMachine } from './request/request-machine.js';
import { statusBody } from './request/status-body.js';
import type { RequestStatus } from './schemas/responses.js';
import { type IdGenerator, randomIds } from './security/random-id.js';
import { scopedTransportState } from './transport-state/scoped-state.js';
import {
  type ApiKeyView,
  type CreatedApiKey,
  createApiKey,
  type KeyActor,
  listApiKeys,
  revokeApiKey,
} from './use-cases/api-keys.js';
import { authenticate } from './use-cases/authenticate.js';
import { applyClick } from './use-cases/click.js';
import { readStatus } from './use-cases/read-status.js';
import { runRefresh, updateOrRefresh } from './use-cases/refresh-copies.js';
import { listFailedCallbacks, replayCallback } from './use-cases/replay-callback.js';
import { applySeed } from './use-cases/seed.js';

/** Options of {@link createNotifier}. */
export interface NotifierOptions {
  /** Every storage port, from one adapter (`memoryStorage()`, `redisStorage(...)`, ...). */
  storage: StoragePorts;
  /** The chat platforms to deliver through; each user receives a copy on every platform that reaches them. */
  transports: readonly ChatTransport[];
  /**
   * Delivers completion callbacks (`httpCallbacks()` from `chat-notify/callbacks`). Without one,
   * requests with a `callback_url` are refused.
   */
  callbacks?: CallbackTransport;
  clock?: Clock;
  logger?: Logger;
  ids?: IdGenerator;
  /** Rate limits; the specification's by default. */
  rateLimits?: Partial<RateLimitSettings>;
  /**
   * Scheduler of the request machine, the due-work timer and the pauses before a copy's record is
   * tried again; a virtual-time one in tests (whose time must then be moved on for them to end).
   */
  scheduler?: SchedulerLike;
  /** Longest pause between looks for due work enqueued by other instances (ms, default 1000). */
  duePollMs?: number;
  /**
   * Most due items (timeouts, callback attempts, refreshes of copies) this process runs at once;
   * 128 by default. The process starts with 16 (or this, if fewer) and runs more while the items
   * wait on the storage, the chat platforms or callback receivers, so that a burst of timeouts ends
   * sooner; it runs fewer again, down to 16, while they wait on the processor alone (memory storage
   * and the inbox), where fewer at once are faster. A lower setting keeps the outbound callbacks of
   * one process down; the callback attempts of one organization hold at most a quarter of it (16 at
   * least). Not a
   * positive integer: a `RangeError` here.
   */
  dueWorkConcurrency?: number;
  /**
   * The reverse proxies trusted to report the client's address in `X-Forwarded-For`, which failed
   * authentications are limited by (valid keys are judged by their own limits only). Absent or `0`:
   * none, the client is the socket's address and `X-Forwarded-For` is ignored. A number `n`: `n`
   * proxies; the client is the address `n` entries from the right of `X-Forwarded-For` (the socket's
   * address when it holds fewer). A list of IPv4/IPv6 addresses and CIDR ranges (`['10.0.0.0/8']`):
   * from the socket's address, walk `X-Forwarded-For` from the right past trusted addresses; the
   * client is the first that is not trusted. Hosts pass the socket's address; their framework's
   * own proxy setting (Express `trust proxy`, Koa `app.proxy`) plays no part. Invalid settings throw
   * a `RangeError` here.
   */
  trustProxy?: TrustProxy;
  /**
   * How long a finished send stays in storage: an interactive request from the moment it finished
   * (its status then answers 404 `Request not found`), a fire-and-forget send from its delivery;
   * with them go their delivery records and what the transports keep of them (inbox messages).
   * Milliseconds, or `{ days }`; 30 days by default. Keep it longer than the completion-callback
   * schedule (about 33 hours) so that a callback is tried throughout it (one whose next attempt
   * would come in the retention's last hour is kept as failed at once), and a failed send
   * repeated with its `Idempotency-Key` within the key's 24 hours finds the records of whom it
   * reached (with a shorter retention it may reach them again). Expiry follows the
   * store's clock (Redis `PEXPIRE`, a MongoDB TTL index, a lazy sweep in memory). Not positive, or
   * longer than 100 years (36,500 days): a `RangeError` here.
   */
  retention?: number | { days: number };
}

/** The library's entry point: the HTTP handler the hosts mount, the use cases, and the background work. */
export interface Notifier {
  /** The framework-neutral handler of the API and of every transport's routes. */
  handle: HttpHandler;
  /** The caller behind a plaintext API key (for embedding applications that authenticate themselves). */
  authenticate(apiKey: string, clientAddress?: string): Promise<Principal>;
  /**
   * Status of an interactive request, as `GET /api/notify/status/{id}` answers it. A request read
   * past its deadline whose timeout has not run yet is finished by the read itself; once the notifier
   * is stopping, that read rejects with a retryable `NotifyError('unavailable')` (ask another
   * instance, or again after a start), as clicks are refused then.
   */
  status(principal: Principal, requestId: string): Promise<RequestStatus>;
  /** A click, as a transport reports it; resolves as {@link ClickOptions} says. */
  click(click: Click, options?: ClickOptions): Promise<ClickOutcome>;
  /** Completion callbacks whose every attempt failed (docs/behaviour.md#completion-callbacks). */
  failedCallbacks: {
    /**
     * Failures, oldest first; of one organization when given. Failures of requests past their
     * retention are left out (and forgotten): there is nothing left to replay.
     */
    list(organizationId?: string): Promise<FailedCallback[]>;
    /**
     * Starts the deliveries of a failed callback again; false when there is no such failure, or its
     * request has passed its retention.
     */
    replay(requestId: string): Promise<boolean>;
  };
  /** Key management on behalf of the signed-in user of the embedding application (docs/behaviour.md#api-keys). */
  apiKeys: {
    create(actor: KeyActor, label: string): Promise<CreatedApiKey>;
    list(
      actor: KeyActor,
      options?: { scope?: 'own' | 'organization'; search?: string },
    ): Promise<ApiKeyView[]>;
    /** Whether this call revoked the key: false when it was revoked already (or by a call racing it). */
    revoke(actor: KeyActor, keyId: string): Promise<boolean>;
  };
  /**
   * The user of an organization with this address (matched as a send matches its recipients:
   * trimmed, case-insensitive), or null. How an embedding application learns the `userId` that its
   * signed-in user has in the directory, for `apiKeys` and the account pages.
   */
  findUser(organizationId: string, email: string): Promise<User | null>;
  /** Loads organizations, users and keys (the seed file of README.md#the-standalone-service); idempotent. */
  seed(seed: unknown): Promise<void>;
  /**
   * Starts running timeouts and callbacks as they fall due.
   * @throws Error once the notifier was stopped: a stopped notifier does not start again.
   */
  start(): void;
  /**
   * Runs everything due now (tests, maintenance); answers how many items ran.
   * @throws Error (rejects) once the notifier was stopped, as `start` does.
   */
  runDueWork(): Promise<number>;
  /**
   * Stops the notifier: requests on its routes are refused from now on (`503`, `Retry-After: 1`)
   * and those being served are answered, a send included; then running due items finish, clicks a
   * platform was already answered for are applied, events being applied finish, events still
   * queued are refused with a retryable error. Resolves once nothing of the notifier's is running:
   * its storage may be closed then. A second call answers the first's promise.
   */
  stop(): Promise<void>;
}

const stoppedMessage = 'This notifier was stopped; create a new one to serve again';

/** Assembles the core over the given ports. */
export function createNotifier(options: NotifierOptions): Notifier {
  checkNotifierParts(options);
  const retentionMs = retentionMillis(options.retention);
  const rateLimits = rateLimitSettings(options.rateLimits);
  checkDueWorkOptions(options);
  checkCallbacks(options.callbacks);
  const { dueWorkConcurrency } = options;
  // A quarter of the due-work slots per organization for callback attempts, 16 at least: the
  // receivers of one that never answer leave the rest to the timeouts, refreshes and other
  // organizations' callbacks, and a few callbacks of one organization due together never wait.
  const callbackShares = organizationShares(
    Math.max(16, Math.floor((dueWorkConcurrency ?? defaultDueWorkConcurrency) / 4)),
  );
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const context = {
    storage: options.storage,
    transports: options.transports,
    clock,
    ids: options.ids ?? randomIds,
    logger,
    scheduler: options.scheduler ?? asyncScheduler,
    rateLimits,
    callbacks: options.callbacks ?? null,
    retentionMs,
  } as CoreContext;

  context.machine = createRequestMachine({
    requests: options.storage.requests,
    dueWork: options.storage.dueWork,
    logger,
    retentionMs,
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    async runCommands(request, commands) {
      let covered = true;
      for (const command of commands) {
        if (command.type === 'update-messages') {
          covered = (await updateOrRefresh(context, request, command.recipients)) && covered;
        }
        if (command.type === 'enqueue-callback') context.dueWork.poke();
      }
      return covered;
    },
  });

  context.dueWork = createDueWorkRunner({
    store: options.storage.dueWork,
    clock,
    logger,
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.duePollMs ? { pollMs: options.duePollMs } : {}),
    ...(dueWorkConcurrency === undefined ? {} : { concurrency: dueWorkConcurrency }),
    handlers: {
      async timeout(item) {
        const { outcome, copiesCovered } = await context.machine.dispatch({
          type: 'timeout',
          requestId: item.requestId,
          at: clock.now(),
        });
        // The copies of this timeout's change were neither updated nor left to a refresh: this item
        // stays, and its next run refreshes them.
        if (copiesCovered === false) return { done: false, retryAt: clock.now() + pledgedRefreshDelayMs };
        if (outcome !== 'finished') return { done: true };
        // Finished already: by a click, whose write cancelled this item (what is answered here then
        // changes nothing), or by this timeout in a run that never updated the copies (its process
        // died, or the answer to its write was lost), or one still updating them past its lease.
        // The copies get a refresh, after the delay a write's pledge has, so that an update still
        // under way is never doubled.
        if (item.attempt === 0) return { done: false, retryAt: clock.now() + pledgedRefreshDelayMs };
        return runRefresh(context, item);
      },
      async callback(item) {
        if (context.callbacks) return deliverCallback(context, context.callbacks, callbackShares, item);
        logger.warn('callback dropped: no callback transport configured', { requestId: item.requestId });
        return { done: true };
      },
      refresh: (item) => runRefresh(context, item),
    },
  });

  const sink = {
    click: (click: Click, clickOptions?: ClickOptions) => applyClick(context, click, clickOptions),
    listUsers: () => options.storage.directory.listUsers(),
    view: async (sendId: string, recipient: string) => {
      const key = normalizeEmail(recipient);
      const request = await options.storage.requests.getRequest(sendId);
      if (!request?.recipients.some((each) => each.key === key)) return null;
      return requestView(request, key);
    },
    retentionMs,
  };
  const gate = new ServingGate();
  const routes = [...apiRoutes(context), ...options.transports.flatMap((transport) => transport.routes)];
  // Last of all that may throw (a `trustProxy` it cannot read): a notifier never made must not keep
  // its transports claimed and connected.
  const handle = createHttpHandler(routes, { logger, trustProxy: options.trustProxy, gate });
  claimTransports(options.transports);
  for (const transport of options.transports) {
    const { platform } = transport;
    const state = scopedTransportState(options.storage.transportState, platform);
    const copies = async (sendId: string) =>
      (await options.storage.deliveries.listDeliveries(sendId)).filter((copy) => copy.platform === platform);
    transport.connect({ ...sink, state, copies });
  }
  let stopped = false;
  let stopping: Promise<void> | null = null;

  return {
    handle,
    authenticate: (apiKey, clientAddress = 'library') => authenticate(context, apiKey, clientAddress),
    status: async (principal, requestId) => statusBody(await readStatus(context, principal, requestId)),
    click: sink.click,
    apiKeys: {
      create: (actor, label) => createApiKey(context, actor, label),
      list: (actor, listOptions) => listApiKeys(context, actor, listOptions),
      revoke: (actor, keyId) => revokeApiKey(context, actor, keyId),
    },
    failedCallbacks: {
      list: (organizationId) => listFailedCallbacks(context, organizationId),
      replay: (requestId) => replayCallback(context, requestId),
    },
    async findUser(organizationId, email) {
      const [user] = await options.storage.directory.findUsersByEmail(organizationId, [
        normalizeEmail(email),
      ]);
      return user ?? null;
    },
    seed: (seed) => applySeed(context, seed),
    start() {
      if (stopped) throw new Error(stoppedMessage);
      context.dueWork.start();
    },
    // A stopped notifier's items would be claimed, refused by its closed machine, and left under
    // their lease, which keeps them from the other instances for that long.
    runDueWork: () => (stopped ? Promise.reject(new Error(stoppedMessage)) : context.dueWork.drain()),
    // Once: a second call (an application's shutdown hook beside a test's) shares the first's
    // promise, rather than draining and closing every transport again.
    stop() {
      stopping ??= (async () => {
        stopped = true;
        await gate.close();
        await context.dueWork.stop();
        await Promise.all(options.transports.map((transport) => transport.drain?.()));
        await context.machine.close();
        await Promise.all(options.transports.map((transport) => transport.close?.()));
      })();
      return stopping;
    },
  };
}
