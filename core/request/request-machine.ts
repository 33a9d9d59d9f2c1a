import {
  asyncScheduler,
  concatMap,
  firstValueFrom,
  type GroupedObservable,
  groupBy,
  mergeMap,
  type SchedulerLike,
  Subject,
  timer,
} from 'rxjs';
import { pledgedRefreshItemId } from '../domain/due-work.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { NotifyError } from '../errors.js';
import type { DueWorkStore } from '../ports/due-work-store.js';
import type { Logger } from '../ports/logger.js';
import type { RequestStore } from '../ports/request-store.js';
import { dueChanges, pledgesRefresh } from './due-changes.js';
import type { RequestCommand, RequestEvent, TransitionOutcome } from './events.js';
import { transition } from './transition.js';

/** What became of a dispatched event; `request` is the stored state after it, or null when unknown. */
export interface DispatchResult {
  outcome: TransitionOutcome;
  request: InteractiveRequest | null;
  /** Whether the event changed the stored request (and its copies were, or are being, updated). */
  changed: boolean;
  /**
   * False when, dispatched `until: 'updated'`, the copies were neither all updated nor left to a
   * refresh (the store failed for both): the work that made the change must see to them.
   */
  copiesCovered?: false;
}

/**
 * Runs the commands of a stored transition that are not storage writes (updating messages).
 * Answers whether the copies are covered: shown the change, or left to a scheduled refresh.
 */
export type CommandRunner = (
  request: InteractiveRequest,
  commands: readonly RequestCommand[],
) => Promise<boolean>;

/** Options of {@link createRequestMachine}. */
export interface RequestMachineOptions {
  requests: RequestStore;
  /** Where a write's pledged refresh of its copies is cancelled once its commands ran. */
  dueWork: Pick<DueWorkStore, 'cancel'>;
  runCommands: CommandRunner;
  logger: Logger;
  /**
   * How long a request stays stored once finished (ms), given to the store with the finishing
   * write; absent, finished requests are kept until deleted.
   */
  retentionMs?: number;
  /** Drives the pause after a lost write; a virtual-time scheduler in tests. */
  scheduler?: SchedulerLike;
  /** Attempts of the read-transition-write cycle when other writers keep winning. */
  maxAttempts?: number;
}

/**
 * When a dispatch resolves: `updated`, once the event is stored (or found to change nothing) and its
 * commands have run; `stored`, as soon as it is stored, while its commands run on. Either way the
 * commands of a request's events run one event after another, in the order the events were stored.
 */
export type DispatchUntil = 'stored' | 'updated';

/** Applies events to requests: one at a time per request, any number of requests at once. */
export interface RequestMachine {
  /** Applies `event`, resolving as `until` says (`updated` by default). */
  dispatch(event: RequestEvent, until?: DispatchUntil): Promise<DispatchResult>;
  /**
   * Stops accepting events: those queued and not yet started are rejected with a retryable
   * `unavailable` error; resolves once the events already being applied have settled.
   */
  close(): Promise<void>;
}

interface Envelope {
  event: RequestEvent;
  until: DispatchUntil;
  resolve(result: DispatchResult): void;
  reject(error: unknown): void;
}

/** What a write stored: its result, and the stored state with the commands still to run. */
interface Written {
  result: DispatchResult;
  /** Null when the event changed nothing. */
  changed: { state: InteractiveRequest; commands: RequestCommand[] } | null;
}

const ignore = () => {};

/** What a closed machine answers an event: the notifier is stopping. */
const shuttingDownDetails = 'The service is shutting down';

const shuttingDown = () => new NotifyError('unavailable', shuttingDownDetails, { retryAfterSeconds: 1 });

/**
 * The RxJS pipeline of the architecture: events are grouped by request and applied in order
 * within a group, through the pure {@link transition} and a compare-and-set write, so that
 * concurrent clicks and timeouts on several instances cannot both win. A group lives only while its
 * request has events dispatched and not settled: it closes as soon as they are, so a request
 * waiting for its next click costs nothing here (100,000 timeouts falling due at once leave no
 * group, timer or subscription behind), and a later event opens a new group.
 */
export function createRequestMachine(options: RequestMachineOptions): RequestMachine {
  const { requests, runCommands, retentionMs, scheduler = asyncScheduler, maxAttempts = 100 } = options;
  const finishing = retentionMs === undefined ? undefined : { ttlMs: retentionMs };
  const events$ = new Subject<Envelope>();
  /** Events dispatched and not yet settled, per request: a group closes only once it is empty. */
  const pending = new Map<string, number>();
  /**
   * One "group drained" signal per live group, so that settling an event closes only its own
   * group: the cost of a dispatch must not grow with the number of live requests.
   */
  const drained = new Map<string, Subject<void>>();
  /** Dispatched and not started: what `close` rejects. */
  const queued = new Set<Envelope>();
  /** Being applied: what `close` waits for. */
  const running = new Set<Promise<unknown>>();
  /** The end of the commands of each live group's events, which the next event's commands follow. */
  const commandTails = new Map<string, Promise<void>>();
  let closed = false;

  const settle = (requestId: string) => {
    const left = (pending.get(requestId) ?? 1) - 1;
    if (left > 0) {
      pending.set(requestId, left);
      return;
    }
    pending.delete(requestId);
    commandTails.delete(requestId);
    const drained$ = drained.get(requestId);
    drained.delete(requestId);
    drained$?.next();
  };

  /** A short random pause after losing a write, so that instances racing on one request spread out. */
  const backoff = (attempt: number) =>
    firstValueFrom(timer(Math.random() * Math.min(2 ** attempt, 25), scheduler));

  /**
   * Cancels the refresh the write of `request` pledged (`dueChanges`) once its copies were updated
   * or left to a refresh of their own. A store that fails here is only logged: the pledge then runs,
   * and finds the copies as they should be.
   */
  const cancelPledgedRefresh = (request: InteractiveRequest): Promise<void> =>
    options.dueWork.cancel([pledgedRefreshItemId(request.id, request.version)]).catch((error: unknown) => {
      options.logger.warn('pledged refresh not cancelled; it runs in ten minutes', {
        requestId: request.id,
        error: String(error),
      });
    });

  /**
   * Stores what `event` changes: the result, and the stored state with the commands still to run,
   * or no commands when the event changed nothing.
   */
  async function write(event: RequestEvent): Promise<Written> {
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      if (attempt > 0) await backoff(attempt);
      const current = await requests.getRequest(event.requestId);
      if (!current) return { result: { outcome: 'not-found', request: null, changed: false }, changed: null };
      const result = transition(current, event);
      if (result.state === current) {
        return { result: { outcome: result.outcome, request: current, changed: false }, changed: null };
      }
      const stored = await requests.updateRequest(
        result.state,
        current.version,
        dueChanges(result.state, result.commands, event),
        result.state.status === 'finished' ? finishing : undefined,
      );
      if (stored) {
        return {
          result: { outcome: result.outcome, request: result.state, changed: true },
          changed: { state: result.state, commands: result.commands },
        };
      }
    }
    throw new NotifyError('unavailable', 'The request is being changed by too many writers; retry', {
      retryAfterSeconds: 1,
    });
  }

  /**
   * Runs the commands of a stored write, then cancels the refresh it pledged for its copies, unless
   * they are not covered: the pledge then stays to update them. Answers whether they are.
   */
  async function runStored(
    event: RequestEvent,
    state: InteractiveRequest,
    commands: RequestCommand[],
  ): Promise<boolean> {
    const covered = await runCommands(state, commands);
    if (covered && pledgesRefresh(event) && commands.some((command) => command.type === 'update-messages')) {
      await cancelPledgedRefresh(state);
    }
    return covered;
  }

  /**
   * Runs `commands` once the commands of the request's earlier events have run, whether they
   * succeeded or not (their dispatchers, who await them, learn how they ended).
   */
  const afterEarlier = (requestId: string, commands: () => Promise<void>): Promise<void> => {
    const earlier = commandTails.get(requestId);
    const mine = earlier === undefined ? commands() : earlier.then(commands, commands);
    commandTails.set(requestId, mine);
    return mine;
  };

  /**
   * Applies one envelope's event and settles it in its group once its commands ran. The group's
   * queue waits for the write alone: the next event of the request is read and written while the
   * commands of this one run, and its own commands run after them. The queue takes the promise
   * itself: wrapping it in an observable of its own would cost every event a few more objects.
   */
  const run = (envelope: Envelope): Promise<void> => {
    const { event, until } = envelope;
    const { requestId } = event;
    if (!queued.delete(envelope)) {
      settle(requestId);
      return Promise.resolve();
    }
    const written = write(event);
    const work = written.then(async ({ result, changed }) => {
      if (changed === null) {
        envelope.resolve(result);
        return;
      }
      if (until === 'stored') envelope.resolve(result);
      try {
        let covered = true;
        await afterEarlier(requestId, async () => {
          covered = await runStored(event, changed.state, changed.commands);
        });
        envelope.resolve(
          covered
            ? result
            : {
                outcome: result.outcome,
                request: result.request,
                changed: result.changed,
                copiesCovered: false,
              },
        );
      } catch (error) {
        if (until === 'updated') {
          envelope.reject(error);
          return;
        }
        // The dispatcher was told the event is stored; what failed after it is only logged.
        options.logger.error('commands of a stored change failed', { requestId, error: String(error) });
      }
    }, envelope.reject);
    running.add(work);
    void work.then(() => {
      running.delete(work);
      settle(requestId);
    });
    return written.then(ignore, ignore);
  };

  /**
   * Closes a request's group once every event dispatched to it has settled: `settle` forgets the
   * signal and fires it, so a later event of the request opens a group with a signal of its own.
   */
  const untilDrained = (group: GroupedObservable<string, Envelope>) => {
    const drained$ = new Subject<void>();
    drained.set(group.key, drained$);
    return drained$;
  };

  const subscription = events$
    .pipe(
      groupBy((envelope) => envelope.event.requestId, { duration: untilDrained }),
      mergeMap((group) => group.pipe(concatMap(run))),
    )
    .subscribe();

  return {
    dispatch: (event, until = 'updated') =>
      new Promise<DispatchResult>((resolve, reject) => {
        if (closed) {
          reject(shuttingDown());
          return;
        }
        const envelope = { event, until, resolve, reject };
        queued.add(envelope);
        pending.set(event.requestId, (pending.get(event.requestId) ?? 0) + 1);
        events$.next(envelope);
      }),
    async close() {
      closed = true;
      for (const envelope of queued) envelope.reject(shuttingDown());
      queued.clear();
      await Promise.allSettled([...running]);
      subscription.unsubscribe();
    },
  };
}
