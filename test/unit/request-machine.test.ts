import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { callbackItemId, type DueItem, timeoutItemId } from '../../core/domain/due-work.js';
import type { DisableMode, InteractiveRequest } from '../../core/domain/interactive-request.js';
import { createDueWorkRunner, type DueWorkRunner } from '../../core/due-work/due-work-runner.js';
import { NotifyError } from '../../core/errors.js';
import { silentLogger } from '../../core/ports/logger.js';
import type { RequestStore } from '../../core/ports/request-store.js';
import type { RequestCommand, RequestEvent } from '../../core/request/events.js';
import {
  type CommandRunner,
  createRequestMachine,
  type RequestMachine,
} from '../../core/request/request-machine.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { manualClock } from '../support/manual-clock.js';
import { virtualTime } from '../support/virtual-time.js';

const t0 = Date.parse('2026-03-01T10:00:00.000Z');
const minute = 60_000;

const id = (n: number): string => `req_${String(n).padStart(24, '0')}`;
const key = (n: number): string => `user${String(n).padStart(2, '0')}@acme.test`;

interface RequestShape {
  id?: string;
  mode?: DisableMode;
  recipientCount?: number;
  timeoutMinutes?: number;
  createdAt?: number;
  callback?: boolean;
}

function request(shape: RequestShape = {}): InteractiveRequest {
  const {
    mode = 'onUserAction',
    recipientCount = 3,
    timeoutMinutes = 30,
    createdAt = t0,
    callback = true,
  } = shape;
  return {
    id: shape.id ?? id(1),
    organizationId: 'acme',
    version: 0,
    status: 'pending',
    message: 'Ship it?',
    options: [
      { text: 'Yes', value: 'yes' },
      { text: 'No', value: 'no' },
      { text: 'Maybe', value: 'maybe' },
    ],
    mode,
    timeoutMinutes,
    createdAt,
    expiresAt: createdAt + timeoutMinutes * minute,
    finishedAt: null,
    externalReferenceId: null,
    sender: { userId: 'u_alice', name: 'Alice Doe' },
    callback: callback ? { url: 'https://hooks.example.com/n', secret: 'whsec_c2VjcmV0' } : null,
    recipients: Array.from({ length: recipientCount }, (_, i) => ({
      email: key(i + 1),
      key: key(i + 1),
      value: null,
      respondedAt: null,
      expired: false,
    })),
  };
}

const timeoutItem = (r: InteractiveRequest): DueItem => ({
  id: timeoutItemId(r.id),
  kind: 'timeout',
  requestId: r.id,
  runAt: r.expiresAt,
  attempt: 0,
});

const click = (requestId: string, recipient: string, value: string, at: number): RequestEvent => ({
  type: 'click',
  requestId,
  recipient,
  value,
  at,
});

interface Ran {
  request: InteractiveRequest;
  commands: readonly RequestCommand[];
  /** What the store held when the commands ran. */
  stored: InteractiveRequest | null;
}

/** A command runner that records each call and what the store held at that moment. */
function recorder(requests: RequestStore) {
  const ran: Ran[] = [];
  const runCommands: CommandRunner = async (r, commands) => {
    ran.push({ request: r, commands, stored: await requests.getRequest(r.id) });
    return true;
  };
  return { ran, runCommands };
}

/** A promise to resolve from outside. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const machines: RequestMachine[] = [];
const runners: DueWorkRunner[] = [];
afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop();
  // Not awaited: a test may leave a gated write behind, and closing must not wait for it here.
  for (const machine of machines.splice(0)) void machine.close();
});
const track = (machine: RequestMachine): RequestMachine => {
  machines.push(machine);
  return machine;
};

async function setup(shapes: RequestShape[] = [{}]) {
  const clock = manualClock(t0);
  const storage = memoryStorage({ clock });
  for (const shape of shapes) {
    const r = request(shape);
    await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
  }
  const { ran, runCommands } = recorder(storage.requests);
  const machine = track(
    createRequestMachine({
      requests: storage.requests,
      dueWork: storage.dueWork,
      logger: silentLogger,
      runCommands,
    }),
  );
  return { storage, machine, ran, clock };
}

type Storage = ReturnType<typeof memoryStorage>;

/** A machine on `storage` whose commands do nothing and whose writes go through `updateRequest`. */
const machineWritingThrough = (storage: Storage, updateRequest: RequestStore['updateRequest']) =>
  track(
    createRequestMachine({
      requests: {
        ...storage.requests,
        getRequest: (requestId) => storage.requests.getRequest(requestId),
        updateRequest,
      },
      dueWork: storage.dueWork,
      logger: silentLogger,
      runCommands: async () => true,
    }),
  );

/** The writes of `storage`, the first of which waits for `gate`. */
const firstWriteWaitsFor = (storage: Storage, gate: Promise<void>): RequestStore['updateRequest'] => {
  let held = false;
  return async (...args) => {
    if (!held) {
      held = true;
      await gate;
    }
    return storage.requests.updateRequest(...args);
  };
};

describe('request machine', () => {
  it('applies the events of one request in dispatch order', async () => {
    const { storage, machine } = await setup([{ mode: 'onTimeout' }]);
    const values = ['yes', 'no', 'maybe', 'no', 'yes', 'maybe'];
    const results = await Promise.all(
      values.map((value, i) => machine.dispatch(click(id(1), key(1), value, t0 + i + 1))),
    );

    expect(results.map((r) => [r.outcome, r.request?.version])).toEqual(
      values.map((_, i) => ['accepted', i + 1]),
    );
    expect(results.map((r) => r.request?.recipients[0]?.value)).toEqual(values);
    const stored = await storage.requests.getRequest(id(1));
    expect(stored?.version).toBe(6);
    expect(stored?.recipients[0]).toEqual({
      email: key(1),
      key: key(1),
      value: 'maybe',
      respondedAt: t0 + 6,
      expired: false,
    });
  });

  it('keeps dispatch order within a request across a long pause while an event is still being applied', async () => {
    const vt = virtualTime(t0);
    const storage = memoryStorage({ clock: vt.clock });
    const r = request({ mode: 'onUserAction' });
    await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
    const gate = deferred();
    let calls = 0;
    const machine = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger: silentLogger,
        scheduler: vt.scheduler,
        async runCommands() {
          calls += 1;
          // The first write's commands are slow (a chat platform taking its time).
          if (calls === 1) await gate.promise;
          return true;
        },
      }),
    );

    const first = machine.dispatch(click(r.id, key(1), 'yes', t0 + 1));
    await vt.settle();
    const second = machine.dispatch(click(r.id, key(2), 'no', t0 + 2)); // queued behind the first
    await vt.advanceBy(5_000); // virtual time passes with the first event still running
    const third = machine.dispatch(click(r.id, key(2), 'maybe', t0 + 3)); // same recipient, dispatched later
    await vt.settle();
    gate.resolve();

    const outcomes = await Promise.all([first, second, third]);
    expect(outcomes.map((o) => o.outcome)).toEqual(['accepted', 'accepted', 'final']);
    const stored = await storage.requests.getRequest(r.id);
    expect(stored?.recipients[1]?.value).toBe('no');
  });

  it('keeps nothing for a request once its events are applied: no timer is left scheduled', async () => {
    const vt = virtualTime(t0);
    const storage = memoryStorage({ clock: vt.clock });
    const requests = Array.from({ length: 50 }, (_, n) => request({ id: id(n + 1) }));
    for (const r of requests)
      await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
    const machine = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger: silentLogger,
        scheduler: vt.scheduler,
        runCommands: async () => true,
      }),
    );

    const outcomes = await Promise.all(
      requests.map((r) => machine.dispatch({ type: 'timeout', requestId: r.id, at: t0 + 1 })),
    );
    expect(outcomes.every((o) => o.outcome === 'expired')).toBe(true);
    // A queue that waited for more events would hold a timer (and its subscriptions) per request.
    expect(vt.scheduler.actions).toEqual([]);
    // A later event of the same request starts a queue again and is applied.
    const again = await machine.dispatch({ type: 'timeout', requestId: requests[0]!.id, at: t0 + 2 });
    expect(again.outcome).toBe('finished');
  });

  it('lets two requests proceed independently: one slow request does not hold up another', async () => {
    const clock = manualClock(t0);
    const storage = memoryStorage({ clock });
    for (const n of [1, 2]) {
      const r = request({ id: id(n) });
      await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
    }
    const gate = deferred();
    const machine = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger: silentLogger,
        async runCommands(r) {
          if (r.id === id(1)) await gate.promise;
          return true;
        },
      }),
    );

    let firstDone = false;
    const slow = machine.dispatch(click(id(1), key(1), 'yes', t0 + 1)).then((result) => {
      firstDone = true;
      return result;
    });
    const fast = await machine.dispatch(click(id(2), key(1), 'no', t0 + 2));
    expect(fast.outcome).toBe('accepted');
    expect(fast.request?.recipients[0]?.value).toBe('no');
    expect(firstDone).toBe(false);

    gate.resolve();
    expect((await slow).outcome).toBe('accepted');
    expect((await storage.requests.getRequest(id(1)))?.recipients[0]?.value).toBe('yes');
    expect((await storage.requests.getRequest(id(2)))?.recipients[0]?.value).toBe('no');
    expect((await storage.requests.getRequest(id(1)))?.recipients[1]?.value).toBeNull();
  });

  it.each<DisableMode>(['onUserAction', 'onTimeout'])(
    '%s: 50 concurrent clicks from different recipients all land',
    async (mode) => {
      const { storage, machine, ran } = await setup([{ mode, recipientCount: 50 }]);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => machine.dispatch(click(id(1), key(i + 1), 'yes', t0 + i + 1))),
      );

      expect(results.every((r) => r.outcome === 'accepted')).toBe(true);
      const stored = await storage.requests.getRequest(id(1));
      expect(stored?.version).toBe(50);
      expect(stored?.recipients.map((r) => [r.value, r.respondedAt])).toEqual(
        Array.from({ length: 50 }, (_, i) => ['yes', t0 + i + 1]),
      );
      expect(stored?.status).toBe(mode === 'onUserAction' ? 'finished' : 'pending');
      expect(ran).toHaveLength(50);
      // The timeout is cancelled with the write that finishes, and the callback enqueued with it.
      const due = await storage.dueWork.claim(Number.MAX_SAFE_INTEGER, 10, 1_000);
      expect(due.map((item) => item.id).sort()).toEqual(
        mode === 'onUserAction' ? [callbackItemId(id(1))] : [timeoutItemId(id(1))],
      );
    },
  );

  it.each([2, 4])(
    '50 concurrent clicks spread over %i machines (instances) sharing one store all land',
    async (instances) => {
      const { storage, machine } = await setup([{ mode: 'onTimeout', recipientCount: 50 }]);
      const others = Array.from({ length: instances - 1 }, () =>
        track(
          createRequestMachine({
            requests: storage.requests,
            dueWork: storage.dueWork,
            logger: silentLogger,
            runCommands: async () => true,
          }),
        ),
      );
      const all = [machine, ...others];
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          all[i % instances]!.dispatch(click(id(1), key(i + 1), 'no', t0 + i)),
        ),
      );

      const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value.outcome : String(r.reason)));
      expect(outcomes).toEqual(Array.from({ length: 50 }, () => 'accepted'));
      const stored = await storage.requests.getRequest(id(1));
      expect(stored?.version).toBe(50);
      expect(stored?.recipients.every((r) => r.value === 'no')).toBe(true);
    },
  );

  it('onUserAction: of concurrent clicks by one recipient exactly one is accepted, the rest are final', async () => {
    const { storage, machine } = await setup([{ mode: 'onUserAction' }]);
    const values = ['no', 'yes', 'maybe', 'yes', 'no'];
    const results = await Promise.all(
      values.map((v, i) => machine.dispatch(click(id(1), key(2), v, t0 + i))),
    );

    expect(results.map((r) => r.outcome)).toEqual(['accepted', 'final', 'final', 'final', 'final']);
    const stored = await storage.requests.getRequest(id(1));
    expect(stored?.version).toBe(1);
    expect(stored?.recipients[1]).toMatchObject({ value: 'no', respondedAt: t0 });
  });

  it('onUserAction: conflicting clicks by one recipient through two machines: exactly one wins', async () => {
    const { storage, machine } = await setup([{ mode: 'onUserAction' }]);
    const other = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger: silentLogger,
        runCommands: async () => true,
      }),
    );
    const results = await Promise.all([
      machine.dispatch(click(id(1), key(3), 'yes', t0 + 1)),
      other.dispatch(click(id(1), key(3), 'no', t0 + 1)),
      machine.dispatch(click(id(1), key(3), 'maybe', t0 + 2)),
      other.dispatch(click(id(1), key(3), 'yes', t0 + 2)),
    ]);

    const outcomes = results.map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'final')).toHaveLength(3);
    const winner = results.find((r) => r.outcome === 'accepted');
    const stored = await storage.requests.getRequest(id(1));
    expect(stored?.version).toBe(1);
    expect(stored?.recipients[2]?.value).toBe(winner?.request?.recipients[2]?.value);
  });

  it('onTimeout: a click made before the stored answer, whose write lost to it on another machine, does not replace it', async () => {
    const { storage, machine } = await setup([{ mode: 'onTimeout' }]);
    // This machine reads the request, then waits before its write: the other one writes meanwhile.
    const gate = deferred();
    const slow = machineWritingThrough(storage, firstWriteWaitsFor(storage, gate.promise));
    const earlier = slow.dispatch(click(id(1), key(1), 'yes', t0 + 1));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await machine.dispatch(click(id(1), key(1), 'no', t0 + 2))).outcome).toBe('accepted');
    gate.resolve();
    expect((await earlier).outcome).toBe('accepted');
    const stored = await storage.requests.getRequest(id(1));
    expect(stored?.recipients[0]).toMatchObject({ value: 'no', respondedAt: t0 + 2 });
    expect(stored?.version).toBe(1);
  });

  it('runs the commands after the write: the runner sees the stored state', async () => {
    const { storage, machine, ran } = await setup([{ mode: 'onUserAction', recipientCount: 2 }]);
    await machine.dispatch(click(id(1), key(1), 'yes', t0 + 10));
    const last = await machine.dispatch(click(id(1), key(2), 'no', t0 + 20));

    expect(ran).toHaveLength(2);
    for (const call of ran) expect(call.stored).toEqual(call.request);
    expect(ran.map((call) => call.request.version)).toEqual([1, 2]);
    expect(ran[0]?.commands).toEqual([{ type: 'update-messages', recipients: [key(1)] }]);
    // Which copies the finishing write updates is the transition's business (transition.test.ts).
    expect(ran[1]?.commands[0]).toMatchObject({ type: 'update-messages' });
    expect(ran[1]?.commands.slice(1)).toEqual([
      { type: 'cancel-timeout' },
      { type: 'enqueue-callback', runAt: t0 + 20 },
    ]);
    expect(last.request).toEqual(await storage.requests.getRequest(id(1)));
    expect(last.request?.status).toBe('finished');
  });

  it('runs no commands and writes nothing for an event that changes nothing', async () => {
    const { storage, machine, ran } = await setup();
    const results = [
      await machine.dispatch(click(id(1), key(1), 'bogus', t0 + 1)),
      await machine.dispatch(click(id(1), 'mallory@acme.test', 'yes', t0 + 1)),
    ];
    expect(results.map((r) => r.outcome)).toEqual(['unknown-option', 'not-found']);
    expect(results[0]?.request).toEqual(request());
    expect(ran).toEqual([]);
    expect((await storage.requests.getRequest(id(1)))?.version).toBe(0);
  });

  it('retries a write that another instance won between its read and its write, and converges', async () => {
    const clock = manualClock(t0);
    const storage = memoryStorage({ clock });
    const r = request({ mode: 'onTimeout' });
    await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
    let reads = 0;
    let injected = false;
    // Another instance writes right after this machine's first read.
    const racing: RequestStore = {
      ...storage.requests,
      async getRequest(requestId) {
        reads += 1;
        const current = await storage.requests.getRequest(requestId);
        if (!injected && current) {
          injected = true;
          const next = structuredClone(current);
          next.version += 1;
          next.recipients[0] = { ...next.recipients[0]!, value: 'no', respondedAt: t0 + 5 };
          expect(
            await storage.requests.updateRequest(next, current.version, { enqueue: [], cancel: [] }),
          ).toBe(true);
        }
        return current;
      },
    };
    const { ran, runCommands } = recorder(storage.requests);
    const machine = track(
      createRequestMachine({ requests: racing, dueWork: storage.dueWork, logger: silentLogger, runCommands }),
    );

    const result = await machine.dispatch(click(r.id, key(2), 'yes', t0 + 6));

    expect(result.outcome).toBe('accepted');
    expect(reads).toBe(2);
    const stored = await storage.requests.getRequest(r.id);
    expect(stored?.version).toBe(2);
    expect(stored?.recipients.map((x) => x.value)).toEqual(['no', 'yes', null]);
    expect(ran).toHaveLength(1);
    expect(ran[0]?.stored).toEqual(stored);
  });

  it('gives up with a retryable unavailable error when other writers keep winning', async () => {
    const { storage } = await setup();
    let writes = 0;
    const losing: RequestStore = {
      ...storage.requests,
      async updateRequest() {
        writes += 1;
        return false;
      },
    };
    const machine = track(
      createRequestMachine({
        requests: losing,
        dueWork: storage.dueWork,
        logger: silentLogger,
        runCommands: async () => true,
        maxAttempts: 3,
      }),
    );

    const error = await machine.dispatch(click(id(1), key(1), 'yes', t0 + 1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotifyError);
    expect((error as NotifyError).code).toBe('unavailable');
    expect((error as NotifyError).retryAfterSeconds).toBe(1);
    expect(writes).toBe(3);
    expect((await storage.requests.getRequest(id(1)))?.version).toBe(0);
    // The pipeline survives the failure: the same request's queue still answers.
    expect((await machine.dispatch(click(id(1), key(1), 'bogus', t0 + 2))).outcome).toBe('unknown-option');
  });

  it('keeps serving a request after a command runner failed', async () => {
    const { storage } = await setup([{ mode: 'onTimeout' }]);
    let fail = true;
    const machine = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger: silentLogger,
        async runCommands() {
          if (fail) {
            fail = false;
            throw new Error('chat platform down');
          }
          return true;
        },
      }),
    );
    await expect(machine.dispatch(click(id(1), key(1), 'yes', t0 + 1))).rejects.toThrow('chat platform down');
    // The write happened before the commands: it stays.
    expect((await storage.requests.getRequest(id(1)))?.version).toBe(1);
    expect((await machine.dispatch(click(id(1), key(1), 'no', t0 + 2))).outcome).toBe('accepted');
  });

  it('answers not-found with no request for an unknown id', async () => {
    const { machine, ran } = await setup();
    expect(await machine.dispatch(click(id(9), key(1), 'yes', t0 + 1))).toEqual({
      outcome: 'not-found',
      request: null,
      changed: false,
    });
    expect(await machine.dispatch({ type: 'timeout', requestId: id(9), at: t0 + 1 })).toEqual({
      outcome: 'not-found',
      request: null,
      changed: false,
    });
    expect(ran).toEqual([]);
  });

  it('rejects events after close', async () => {
    const { machine } = await setup();
    await machine.close();
    const error = await machine.dispatch(click(id(1), key(1), 'yes', t0 + 1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotifyError);
    expect((error as NotifyError).code).toBe('unavailable');
  });
});

describe('closing the request machine', () => {
  it('rejects the queued events, lets the running ones finish, and resolves only after them', async () => {
    const clock = manualClock(t0);
    const storage = memoryStorage({ clock });
    for (const n of [1, 2]) {
      const r = request({ id: id(n), mode: 'onTimeout' });
      await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
    }
    const gate = deferred();
    // The first write waits for the gate: the events after it wait in the request's queue.
    const machine = machineWritingThrough(storage, firstWriteWaitsFor(storage, gate.promise));
    const running = machine.dispatch(click(id(1), key(1), 'yes', t0 + 1));
    const queued = [
      machine.dispatch(click(id(1), key(2), 'no', t0 + 2)),
      machine.dispatch(click(id(1), key(3), 'maybe', t0 + 3)),
    ];
    await new Promise((resolve) => setTimeout(resolve, 10));

    let closed = false;
    const closing = machine.close().then(() => {
      closed = true;
    });
    const refusals = await Promise.all(queued.map((p) => p.catch((error: unknown) => error)));
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(NotifyError);
      expect((refusal as NotifyError).code).toBe('unavailable');
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toBe(false);

    gate.resolve();
    expect((await running).outcome).toBe('accepted');
    await closing;
    expect(closed).toBe(true);
    const stored = await storage.requests.getRequest(id(1));
    expect(stored?.recipients.map((r) => r.value)).toEqual(['yes', null, null]);
  });
});

describe('a dispatch that resolves once stored', () => {
  /** A machine whose command runner waits for `gate` on every call, recording the versions it ran. */
  async function gated(logger = capturingLogger(), failing = false) {
    const clock = manualClock(t0);
    const storage = memoryStorage({ clock });
    const r = request({ mode: 'onTimeout' });
    await storage.requests.createRequest(r, { enqueue: [timeoutItem(r)], cancel: [] });
    const gate = deferred();
    const ran: number[] = [];
    const machine = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger,
        async runCommands(stored) {
          await gate.promise;
          ran.push(stored.version);
          if (failing) throw new Error('chat platform down');
          return true;
        },
      }),
    );
    return { storage, machine, gate, ran, logger };
  }
  const settled = async <T>(promise: Promise<T>) => {
    let done = false;
    void promise.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    return done;
  };

  it('resolves before its commands ran; the next event is stored meanwhile, its commands run after', async () => {
    const { storage, machine, gate, ran } = await gated();
    const first = await machine.dispatch(click(id(1), key(1), 'yes', t0 + 1), 'stored');
    expect(first).toMatchObject({ outcome: 'accepted', request: { version: 1 } });
    expect((await storage.requests.getRequest(id(1)))?.version).toBe(1);
    expect(ran).toEqual([]);

    const next = await machine.dispatch(click(id(1), key(2), 'no', t0 + 2), 'stored');
    expect(next.request?.version).toBe(2);
    expect(ran).toEqual([]);
    gate.resolve();
    await machine.close();
    expect(ran).toEqual([1, 2]);
  });

  it("answers an event that changes nothing without waiting for the request's commands", async () => {
    const { machine, gate, ran } = await gated();
    const first = machine.dispatch(click(id(1), key(1), 'yes', t0 + 1));
    const unknown = machine.dispatch(click(id(1), key(1), 'perhaps', t0 + 2));
    expect(await settled(unknown)).toBe(true);
    expect((await unknown).outcome).toBe('unknown-option');
    expect(await settled(first)).toBe(false);
    gate.resolve();
    await first;
    expect(ran).toEqual([1]);
  });

  it('runs the commands of events dispatched until updated in order, each resolving after its own', async () => {
    const { machine, gate, ran } = await gated();
    const first = machine.dispatch(click(id(1), key(1), 'yes', t0 + 1), 'stored');
    const second = machine.dispatch(click(id(1), key(2), 'no', t0 + 2));
    await first;
    expect(await settled(second)).toBe(false);
    gate.resolve();
    expect((await second).request?.version).toBe(2);
    expect(ran).toEqual([1, 2]);
  });

  it('rejects when its write fails, as any dispatch does', async () => {
    const { storage } = await setup();
    const machine = machineWritingThrough(storage, async () => {
      throw new Error('store down');
    });
    await expect(machine.dispatch(click(id(1), key(1), 'yes', t0 + 1), 'stored')).rejects.toThrow(
      'store down',
    );
  });

  it('by default resolves only once its commands ran', async () => {
    const { machine, gate, ran } = await gated();
    const dispatched = machine.dispatch(click(id(1), key(1), 'yes', t0 + 1));
    expect(await settled(dispatched)).toBe(false);
    gate.resolve();
    await dispatched;
    expect(ran).toEqual([1]);
  });

  it('is waited for by close until its commands ran', async () => {
    const { machine, gate, ran } = await gated();
    await machine.dispatch(click(id(1), key(1), 'yes', t0 + 1), 'stored');
    const closing = machine.close();
    expect(await settled(closing)).toBe(false);
    gate.resolve();
    await closing;
    expect(ran).toEqual([1]);
  });

  it('logs commands that fail after it resolved, and the request is served on', async () => {
    const { storage, machine, gate, logger } = await gated(capturingLogger(), true);
    gate.resolve();
    expect((await machine.dispatch(click(id(1), key(1), 'yes', t0 + 1), 'stored')).outcome).toBe('accepted');
    await expect(machine.dispatch(click(id(1), key(2), 'no', t0 + 2))).rejects.toThrow('chat platform down');
    expect((await storage.requests.getRequest(id(1)))?.version).toBe(2);
    expect(logger.entries).toEqual([
      {
        level: 'error',
        message: 'commands of a stored change failed',
        fields: { requestId: id(1), error: 'Error: chat platform down' },
      },
    ]);
  });
});

describe('request machine with the due-work runner, in virtual time', () => {
  async function wire(shape: RequestShape) {
    const vt = virtualTime(t0);
    const storage = memoryStorage({ clock: vt.clock });
    const { ran, runCommands } = recorder(storage.requests);
    const callbacks: { requestId: string; at: number }[] = [];
    let runner: DueWorkRunner | null = null;
    const machine = track(
      createRequestMachine({
        requests: storage.requests,
        dueWork: storage.dueWork,
        logger: silentLogger,
        scheduler: vt.scheduler,
        async runCommands(r, commands) {
          await runCommands(r, commands);
          // As the notifier does: a callback enqueued by a write should run without waiting for a poll.
          if (commands.some((c) => c.type === 'enqueue-callback')) runner?.poke();
          return true;
        },
      }),
    );
    runner = createDueWorkRunner({
      store: storage.dueWork,
      clock: vt.clock,
      logger: silentLogger,
      scheduler: vt.scheduler,
      handlers: {
        async timeout(item) {
          await machine.dispatch({ type: 'timeout', requestId: item.requestId, at: vt.clock.now() });
          return { done: true };
        },
        async callback(item) {
          callbacks.push({ requestId: item.requestId, at: vt.clock.now() });
          return { done: true };
        },
        async refresh() {
          return { done: true };
        },
      },
    });
    runners.push(runner);

    const r = request({ createdAt: vt.clock.now(), timeoutMinutes: 30, ...shape });
    await storage.requests.createRequest(r, {
      enqueue: [
        { id: timeoutItemId(r.id), kind: 'timeout', requestId: r.id, runAt: r.expiresAt, attempt: 0 },
      ],
      cancel: [],
    });
    runner.start();
    return { vt, storage, machine, runner, ran, callbacks, r };
  }

  it.each<DisableMode>(['onUserAction', 'onTimeout'])(
    '%s: the 30-minute timeout finishes the request at expiry, not a millisecond before',
    async (mode) => {
      const wallStart = Date.now();
      const { vt, storage, machine, ran, callbacks, r } = await wire({ mode });
      expect(r.expiresAt).toBe(t0 + 30 * minute);

      await vt.advanceBy(10 * minute);
      expect((await machine.dispatch(click(r.id, key(2), 'maybe', vt.clock.now()))).outcome).toBe('accepted');

      await vt.advanceTo(r.expiresAt - 1);
      const before = await storage.requests.getRequest(r.id);
      expect(before?.status).toBe('pending');
      expect(before?.recipients.map((x) => x.expired)).toEqual([false, false, false]);
      expect(callbacks).toEqual([]);

      await vt.advanceTo(r.expiresAt);
      const after = await storage.requests.getRequest(r.id);
      expect(after?.status).toBe('finished');
      expect(after?.finishedAt).toBe(r.expiresAt);
      expect(after?.version).toBe(2);
      expect(after?.recipients.map((x) => [x.value, x.respondedAt, x.expired])).toEqual([
        [null, null, true],
        ['maybe', t0 + 10 * minute, false],
        [null, null, true],
      ]);
      expect(ran.at(-1)?.commands).toEqual([
        { type: 'update-messages', recipients: [key(1), key(2), key(3)] },
        { type: 'cancel-timeout' },
        { type: 'enqueue-callback', runAt: r.expiresAt },
      ]);
      // The callback enqueued by the finishing write ran at once, in the same virtual millisecond.
      expect(callbacks).toEqual([{ requestId: r.id, at: r.expiresAt }]);
      expect(await storage.dueWork.nextRunAt()).toBeNull();

      // Clicks after the finish change nothing.
      await vt.advanceBy(minute);
      expect((await machine.dispatch(click(r.id, key(1), 'yes', vt.clock.now()))).outcome).toBe('finished');
      expect((await storage.requests.getRequest(r.id))?.version).toBe(2);
      // Thirty-one virtual minutes, no real waiting.
      expect(Date.now() - wallStart).toBeLessThan(10_000);
    },
  );

  it('a request answered by everyone before the expiry never sees the timeout', async () => {
    const { vt, storage, machine, ran, callbacks, r } = await wire({
      mode: 'onUserAction',
      recipientCount: 2,
    });
    await vt.advanceBy(minute);
    await machine.dispatch(click(r.id, key(1), 'yes', vt.clock.now()));
    await vt.advanceBy(minute);
    await machine.dispatch(click(r.id, key(2), 'no', vt.clock.now()));
    await vt.settle();
    expect(callbacks).toEqual([{ requestId: r.id, at: t0 + 2 * minute }]);

    await vt.advanceTo(r.expiresAt + minute);
    const stored = await storage.requests.getRequest(r.id);
    expect(stored?.status).toBe('finished');
    expect(stored?.finishedAt).toBe(t0 + 2 * minute);
    expect(stored?.version).toBe(2);
    expect(stored?.recipients.map((x) => x.expired)).toEqual([false, false]);
    expect(ran).toHaveLength(2);
    expect(callbacks).toHaveLength(1);
  });

  it('a click at the expiry, racing the timeout, finishes the request once', async () => {
    const { vt, storage, machine, ran, callbacks, r } = await wire({ mode: 'onTimeout' });
    await vt.advanceTo(r.expiresAt - 1);
    const clickResult = machine.dispatch(click(r.id, key(1), 'yes', r.expiresAt));
    await vt.advanceTo(r.expiresAt);

    expect((await clickResult).outcome).toBe('finished');
    const stored = await storage.requests.getRequest(r.id);
    expect(stored?.version).toBe(1);
    expect(stored?.recipients.map((x) => [x.value, x.expired])).toEqual([
      [null, true],
      [null, true],
      [null, true],
    ]);
    expect(ran).toHaveLength(1);
    expect(callbacks).toEqual([{ requestId: r.id, at: r.expiresAt }]);
  });
});
