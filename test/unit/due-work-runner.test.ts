import { afterEach, describe, expect, it } from 'vitest';
import { memoryDueWorkStore } from '../../adapters/storage/memory/index.js';
import type { ClaimedDueItem, DueItem } from '../../core/domain/due-work.js';
import type { LoopTime } from '../../core/due-work/adaptive-limit.js';
import {
  createDueWorkRunner,
  type DueWorkHandler,
  type DueWorkRunner,
  type DueWorkRunnerOptions,
} from '../../core/due-work/due-work-runner.js';
import type { DueWorkStore } from '../../core/ports/due-work-store.js';
import type { LogFields, Logger } from '../../core/ports/logger.js';
import { countingScheduler, macrotask, virtualTime } from '../support/virtual-time.js';

const start = Date.parse('2026-03-01T10:00:00.000Z');

const item = (n: number, runAt: number, kind: DueItem['kind'] = 'timeout'): DueItem => ({
  id: `${kind}:req_${String(n).padStart(24, '0')}`,
  kind,
  requestId: `req_${String(n).padStart(24, '0')}`,
  runAt,
  attempt: 0,
});

interface Run {
  id: string;
  runAt: number;
  attempt: number;
  at: number;
}

function recordingLogger() {
  const errors: { message: string; fields: LogFields | undefined }[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error(message, fields) {
      errors.push({ message, fields });
    },
  };
  return { logger, errors };
}

const runners: DueWorkRunner[] = [];
afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop();
});

/**
 * An event loop that idled a second before each look: as if every item waited on the network, so
 * that the limit climbs to `concurrency` within six items and stays there.
 */
function idleLoop(): () => LoopTime {
  let idle = 0;
  return () => {
    idle += 1_000;
    return { idle, active: 0 };
  };
}

/** A runner over a memory store in virtual time; every handler call is recorded. */
function setup(
  options: {
    timeout?: DueWorkHandler;
    callback?: DueWorkHandler;
    store?: DueWorkStore;
  } & Partial<
    Pick<DueWorkRunnerOptions, 'pollMs' | 'leaseMs' | 'batchSize' | 'concurrency' | 'loopTime' | 'clock'>
  > = {},
) {
  const vt = virtualTime(start);
  const memory = memoryDueWorkStore();
  const store = options.store ?? memory;
  const runs: Run[] = [];
  const { logger, errors } = recordingLogger();
  let maxActions = 0;
  const scheduler = countingScheduler(vt.scheduler, () => {
    maxActions = Math.max(maxActions, vt.scheduler.actions.length);
  });
  const record =
    (handler: DueWorkHandler | undefined): DueWorkHandler =>
    async (claimed: ClaimedDueItem) => {
      runs.push({ id: claimed.id, runAt: claimed.runAt, attempt: claimed.attempt, at: vt.clock.now() });
      return handler ? handler(claimed) : { done: true };
    };
  const runner = createDueWorkRunner({
    store,
    clock: options.clock ?? vt.clock,
    logger,
    scheduler,
    handlers: {
      timeout: record(options.timeout),
      callback: record(options.callback),
      refresh: record(undefined),
    },
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    loopTime: options.loopTime ?? idleLoop(),
  });
  runners.push(runner);
  return { vt, memory, runner, runs, errors, scheduler, maxActions: () => maxActions };
}

describe('due-work runner', () => {
  it('holds one timer however many items are pending, and runs them in runAt order, each on time', async () => {
    const { vt, memory, runner, runs, scheduler, maxActions } = setup({ pollMs: 60_000 });
    const count = 10_000;
    // Distinct runAts from start+1s to start+11s, enqueued in a scrambled order (7919 is prime to 10,000).
    const items = Array.from({ length: count }, (_, i) => item(i, start + 1_000 + ((i * 7_919) % count)));
    await memory.enqueue(items);

    runner.start();
    expect(vt.scheduler.actions).toHaveLength(1);
    await vt.advanceTo(start + 500);
    expect(runs).toEqual([]);
    expect(vt.scheduler.actions).toHaveLength(1);

    await vt.advanceTo(start + 1_000 + count);
    expect(runs).toHaveLength(count);
    expect(runs.map((r) => r.runAt)).toEqual(Array.from({ length: count }, (_, i) => start + 1_000 + i));
    // Nothing ran early or late: each item at exactly its runAt.
    expect(runs.every((r) => r.at === r.runAt)).toBe(true);
    expect(maxActions()).toBe(1);
    expect(vt.scheduler.actions).toHaveLength(1);
    // One schedule per wake-up (plus the start), not one per item.
    expect(scheduler.scheduled).toBeLessThanOrEqual(count + 2);
    expect(await memory.nextRunAt()).toBeNull();
  });

  // Slots fewer than a batch, and more (each fill then takes several claims, during which items end).
  it.each([32, 128, 250])(
    'holds one timer when 10,000 items fall due at once, running them all in one wake-up (%s at once)',
    async (concurrency) => {
      const { vt, memory, runner, runs, scheduler, maxActions } = setup({
        pollMs: 60_000,
        batchSize: 100,
        concurrency,
      });
      await memory.enqueue(Array.from({ length: 10_000 }, (_, i) => item(i, start + 5_000)));
      runner.start();
      await vt.advanceTo(start + 5_000);

      expect(runs).toHaveLength(10_000);
      expect(runs.every((r) => r.at === start + 5_000)).toBe(true);
      // Equal runAts come out in the order they were enqueued.
      expect(runs.map((r) => r.id)).toEqual(Array.from({ length: 10_000 }, (_, i) => item(i, 0).id));
      expect(maxActions()).toBe(1);
      // start, the wake-up at start+5s (nothing was due before), and the re-arm after it.
      expect(scheduler.scheduled).toBe(3);
    },
  );

  it('runs nothing before its runAt, even when polling', async () => {
    const { vt, memory, runner, runs } = setup({ pollMs: 1_000 });
    await memory.enqueue([item(1, start + 5_500), item(2, start + 5_499, 'callback')]);
    runner.start();

    await vt.advanceTo(start + 5_498);
    expect(runs).toEqual([]);
    await vt.advanceTo(start + 5_499);
    expect(runs).toEqual([
      { id: item(2, 0, 'callback').id, runAt: start + 5_499, attempt: 0, at: start + 5_499 },
    ]);
    await vt.advanceTo(start + 5_500);
    expect(runs.map((r) => [r.id, r.at])).toEqual([
      [item(2, 0, 'callback').id, start + 5_499],
      [item(1, 0).id, start + 5_500],
    ]);
  });

  it('sleeps at most pollMs, so work enqueued elsewhere is found without a poke', async () => {
    const { vt, memory, runner, runs } = setup({ pollMs: 1_000 });
    await memory.enqueue([item(9, start + 3_600_000)]); // the next known item is an hour away
    runner.start();
    await vt.advanceTo(start + 100);
    await memory.enqueue([item(1, start + 200)]); // another instance wrote it: nobody pokes
    await vt.advanceTo(start + 999);
    expect(runs).toEqual([]);
    await vt.advanceTo(start + 1_000);
    expect(runs.map((r) => r.at)).toEqual([start + 1_000]);
  });

  it('poke() re-arms the timer at once, replacing the sleeping one', async () => {
    const { vt, memory, runner, runs, maxActions } = setup({ pollMs: 60_000 });
    runner.poke(); // before start: nothing
    expect(vt.scheduler.actions).toHaveLength(0);
    runner.start();
    await vt.settle();
    expect(vt.scheduler.actions).toHaveLength(1);
    expect(vt.scheduler.actions[0]?.delay).toBe(start + 60_000);

    await vt.advanceTo(start + 10);
    await memory.enqueue([item(1, start + 10)]);
    await vt.settle();
    expect(runs).toEqual([]); // still asleep until the poll

    runner.poke();
    expect(vt.scheduler.actions).toHaveLength(1);
    await vt.settle();
    expect(runs.map((r) => r.at)).toEqual([start + 10]);
    expect(maxActions()).toBe(1);
  });

  it('re-runs the item of a handler that threw once its lease ends, and logs the failure', async () => {
    let calls = 0;
    const { vt, memory, runner, runs, errors } = setup({
      pollMs: 1_000,
      leaseMs: 10_000,
      async timeout() {
        calls += 1;
        if (calls === 1) throw new Error('boom');
        return { done: true };
      },
    });
    await memory.enqueue([item(1, start + 100)]);
    runner.start();

    await vt.advanceTo(start + 100);
    expect(runs.map((r) => [r.at, r.attempt])).toEqual([[start + 100, 0]]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain('due work failed');
    expect(errors[0]?.fields).toMatchObject({ kind: 'timeout', requestId: item(1, 0).requestId, attempt: 0 });
    expect(String(errors[0]?.fields?.error)).toContain('boom');
    expect(await memory.nextRunAt()).toBe(start + 100 + 10_000);

    await vt.advanceTo(start + 100 + 9_999);
    expect(runs).toHaveLength(1);
    await vt.advanceTo(start + 100 + 10_000);
    // Same attempt: a crash is not a reschedule.
    expect(runs.map((r) => [r.at, r.attempt])).toEqual([
      [start + 100, 0],
      [start + 10_100, 0],
    ]);
    expect(await memory.nextRunAt()).toBeNull();
  });

  it('reschedules on {done:false, retryAt} with attempt + 1', async () => {
    const { vt, memory, runner, runs } = setup({
      pollMs: 60_000,
      async callback(claimed) {
        return claimed.attempt < 2 ? { done: false, retryAt: vt.clock.now() + 5_000 } : { done: true };
      },
    });
    await memory.enqueue([item(7, start + 100, 'callback')]);
    runner.start();

    await vt.advanceTo(start + 100);
    expect(await memory.nextRunAt()).toBe(start + 5_100);
    await vt.advanceTo(start + 5_099);
    expect(runs).toHaveLength(1);
    await vt.advanceTo(start + 20_000);
    expect(runs).toEqual([
      { id: item(7, 0, 'callback').id, runAt: start + 100, attempt: 0, at: start + 100 },
      { id: item(7, 0, 'callback').id, runAt: start + 5_100, attempt: 1, at: start + 5_100 },
      { id: item(7, 0, 'callback').id, runAt: start + 10_100, attempt: 2, at: start + 10_100 },
    ]);
    expect(await memory.nextRunAt()).toBeNull();
  });

  it('completes every item its handler is done with', async () => {
    const memory = memoryDueWorkStore();
    const completed: string[] = [];
    const store: DueWorkStore = {
      ...memory,
      async complete(claimed) {
        completed.push(claimed.id);
        await memory.complete(claimed);
      },
    };
    const { vt, runner, runs } = setup({ store, timeout: async () => ({ done: true }) });
    await store.enqueue([item(1, start + 10), item(2, start + 20)]);
    runner.start();
    await vt.advanceTo(start + 100);
    expect(runs.map((run) => run.id)).toEqual([item(1, 0).id, item(2, 0).id]);
    expect(completed).toEqual([item(1, 0).id, item(2, 0).id]);
    expect(await store.nextRunAt()).toBeNull();
  });

  it('runs items independently: a slow callback does not delay the timeouts that fall due behind it', async () => {
    let release = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { vt, memory, runner, runs } = setup({
      pollMs: 1_000,
      async callback() {
        await slow; // a receiver taking its full 15 s, or longer
        return { done: true };
      },
    });
    await memory.enqueue([
      item(1, start + 100, 'callback'),
      item(2, start + 100),
      item(3, start + 200),
      item(4, start + 5_000),
    ]);
    runner.start();
    await vt.advanceTo(start + 5_000);
    expect(runs.map((r) => [r.id, r.at])).toEqual([
      [item(1, 0, 'callback').id, start + 100],
      [item(2, 0).id, start + 100],
      [item(3, 0).id, start + 200],
      [item(4, 0).id, start + 5_000],
    ]);
    release();
  });

  it('runs at most `concurrency` items at once and starts the next as soon as one ends', async () => {
    const gates = new Map<string, () => void>();
    let running = 0;
    let most = 0;
    const { vt, memory, runner, runs } = setup({
      concurrency: 2,
      async timeout(claimed) {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => gates.set(claimed.id, resolve));
        running -= 1;
        return { done: true };
      },
    });
    await memory.enqueue([1, 2, 3, 4].map((n) => item(n, start + 10)));
    runner.start();
    await vt.advanceTo(start + 10);
    expect(runs.map((r) => r.id)).toEqual([item(1, 0).id, item(2, 0).id]);
    gates.get(item(1, 0).id)?.();
    await vt.settle();
    expect(runs.map((r) => r.id)).toEqual([item(1, 0).id, item(2, 0).id, item(3, 0).id]);
    for (const n of [2, 3]) gates.get(item(n, 0).id)?.();
    await vt.settle();
    gates.get(item(4, 0).id)?.();
    await vt.settle();
    expect(runs).toHaveLength(4);
    expect(most).toBe(2);
  });

  describe('how many run at once', () => {
    /**
     * `count` items due at once with the default slots, each handler taking 50 µs of the loop's
     * time (as an expiry on memory does) and, when `waiting(n)` holds for the nth item started, 1 ms
     * idle as if on the network; answers the most items running at once among the first and the
     * last 1,000 started.
     */
    async function runAtOnce(
      waiting: (started: number) => boolean,
      count = 6_000,
    ): Promise<[number, number]> {
      const loop = { idle: 0, active: 0 };
      let running = 0;
      const most: number[] = [];
      // The default most at once: 128.
      const { memory, runner } = setup({
        loopTime: () => ({ ...loop }),
        async timeout() {
          running += 1;
          most.push(running);
          const started = most.length;
          // Every item started before any ends: a claim resolves before the next macrotask.
          await new Promise((resolve) => setImmediate(resolve));
          loop.active += 0.05;
          if (waiting(started)) loop.idle += 1;
          running -= 1;
          return { done: true };
        },
      });
      await memory.enqueue(Array.from({ length: count }, (_, i) => item(i, start)));
      expect(await runner.drain()).toBe(count);
      return [Math.max(...most.slice(0, 1_000)), Math.max(...most.slice(-1_000))];
    }

    // On a loop that never idles the limit tries a step up (to 24) every tenth window.
    it('runs few at once while the loop never idles, the items waiting on the processor only', async () => {
      const [first, last] = await runAtOnce(() => false);
      expect(Math.max(first, last)).toBeLessThanOrEqual(24);
    });

    it('runs up to `concurrency` at once while the loop idles, the items waiting on the network', async () => {
      expect(await runAtOnce(() => true)).toEqual([128, 128]);
    });

    it('runs more at once as soon as the items start waiting on the network', async () => {
      const [first, last] = await runAtOnce((started) => started > 3_000);
      expect(first).toBeLessThanOrEqual(24);
      expect(last).toBe(128);
    });

    it('runs fewer at once again when the items stop waiting on the network', async () => {
      // At the most on a busy loop the limit tries a step down every tenth window of 2,000 items.
      const [first, last] = await runAtOnce((started) => started <= 3_000, 40_000);
      expect(first).toBe(128);
      expect(last).toBeLessThanOrEqual(24);
    });

    /**
     * A runner whose callbacks hang until `answer()`, on a loop that idles (`idle`) or never idles
     * (`busy`, as in a process kept busy by HTTP requests: the limit stays at 16) as virtual time
     * passes, so that a window passes only when the test moves time; `clockOffset` moves the
     * runner's wall clock away from virtual time.
     */
    function withHangingCallbacks(
      loop: 'idle' | 'busy',
      options: Parameters<typeof setup>[0] & { clockOffset?: () => number } = {},
    ) {
      let answer: () => void = () => {};
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      let now = () => start;
      const { clockOffset, ...rest } = options;
      const run = setup({
        callback: () => answered.then(() => ({ done: true })),
        loopTime: () => (loop === 'idle' ? { idle: now(), active: 0 } : { idle: 0, active: now() }),
        ...(clockOffset === undefined ? {} : { clock: { now: () => now() + clockOffset() } }),
        ...rest,
      });
      now = () => run.vt.clock.now();
      const timeouts = () => run.runs.filter((ran) => ran.id.startsWith('timeout')).length;
      return { ...run, answer: () => answer(), timeouts };
    }

    /** 16 callbacks whose receiver does not answer, then 50 timeouts, all due at `start + 10`. */
    async function slowCallbacksFirst(setupRun: ReturnType<typeof setup>['memory']): Promise<void> {
      await setupRun.enqueue(Array.from({ length: 16 }, (_, i) => item(i, start + 10, 'callback')));
      await setupRun.enqueue(Array.from({ length: 50 }, (_, i) => item(100 + i, start + 10)));
    }

    it('runs the timeouts behind 16 callbacks that hang, the limit growing while the loop idles', async () => {
      const { vt, memory, runner, runs, answer, timeouts } = withHangingCallbacks('idle');
      try {
        await slowCallbacksFirst(memory);
        runner.start();
        await vt.advanceTo(start + 10);
        expect(timeouts()).toBe(0);
        // One window later the runner looks again, finds that the loop idled, and takes more at once.
        await vt.advanceTo(start + 110);
        expect(timeouts()).toBe(50);
      } finally {
        answer();
      }
      await vt.settle();
      expect(runs).toHaveLength(66);
    });

    it('drain() runs the timeouts behind 16 callbacks that hang, the limit growing while the loop idles', async () => {
      const { vt, memory, runner, answer, timeouts } = withHangingCallbacks('idle');
      await slowCallbacksFirst(memory);
      await vt.advanceTo(start + 10);
      const drained = runner.drain();
      try {
        await vt.settle();
        expect(timeouts()).toBe(0);
        await vt.advanceTo(start + 110);
        expect(timeouts()).toBe(50);
      } finally {
        answer();
      }
      expect(await drained).toBe(66);
      expect(vt.scheduler.actions).toHaveLength(0);
    });

    it('runs the timeouts behind 24 callbacks that hang on a loop kept busy: those running a window no longer count', async () => {
      const { vt, memory, runner, runs, answer, timeouts } = withHangingCallbacks('busy');
      try {
        await memory.enqueue(Array.from({ length: 24 }, (_, i) => item(i, start + 10, 'callback')));
        await memory.enqueue(Array.from({ length: 50 }, (_, i) => item(100 + i, start + 10)));
        runner.start();
        await vt.advanceTo(start + 109);
        expect(runs).toHaveLength(16);
        // The first 16 have run a window: the other 8 callbacks start, and the timeouts run in the
        // 8 slots left.
        await vt.advanceTo(start + 110);
        expect(timeouts()).toBe(50);
        expect(runs).toHaveLength(74);
      } finally {
        answer();
      }
      await vt.settle();
    });

    it('counts items started before the wall clock was set back for one window more, not for as long', async () => {
      let offset = 0;
      const { vt, memory, runner, runs, answer, timeouts } = withHangingCallbacks('busy', {
        clockOffset: () => offset,
      });
      try {
        await memory.enqueue(Array.from({ length: 16 }, (_, i) => item(i, start - 120_000, 'callback')));
        await memory.enqueue(Array.from({ length: 50 }, (_, i) => item(100 + i, start - 120_000)));
        runner.start();
        await vt.advanceTo(start + 10);
        expect(runs).toHaveLength(16);
        offset = -60_000;
        await vt.advanceTo(start + 310);
        expect(timeouts()).toBe(50);
      } finally {
        answer();
      }
      await vt.settle();
    });

    it('start() while stop() waits for its items looks again once they are done, without spinning meanwhile', async () => {
      let answer: () => void = () => {};
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      const memory = memoryDueWorkStore();
      let looks = 0;
      const store: DueWorkStore = {
        ...memory,
        nextRunAt: () => {
          looks += 1;
          return memory.nextRunAt();
        },
      };
      const { vt, runner, runs } = setup({
        store,
        callback: () => answered.then(() => ({ done: true })),
      });
      await memory.enqueue([item(1, start, 'callback')]);
      runner.start();
      await vt.advanceTo(start);
      expect(runs).toHaveLength(1);
      await memory.enqueue([item(2, start + 60)]);
      const stopped = runner.stop();
      runner.start();
      const looksBefore = looks;
      await vt.advanceTo(start + 300);
      expect(looks - looksBefore).toBeLessThan(5);
      expect(runs).toHaveLength(1);
      answer();
      await stopped;
      await vt.advanceTo(start + 310);
      expect(runs.map((run) => run.id)).toEqual([item(1, 0, 'callback').id, item(2, 0).id]);
    });

    it('drain() called while a drain waits on hung items makes it look again at once', async () => {
      const { vt, memory, runner, runs, answer, timeouts } = withHangingCallbacks('idle');
      await memory.enqueue(Array.from({ length: 15 }, (_, i) => item(i, start, 'callback')));
      const drained = runner.drain();
      try {
        await vt.settle();
        expect(runs).toHaveLength(15);
        await memory.enqueue(Array.from({ length: 5 }, (_, i) => item(100 + i, start)));
        const joined = runner.drain();
        await vt.settle();
        expect(timeouts()).toBe(5);
        expect(joined).toBe(drained);
      } finally {
        answer();
      }
      expect(await drained).toBe(20);
    });

    it('a drain waiting on a hung item whose items ran out does not look again every window', async () => {
      const memory = memoryDueWorkStore();
      let claims = 0;
      const store: DueWorkStore = {
        ...memory,
        claim: (now, limit, leaseMs) => {
          claims += 1;
          return memory.claim(now, limit, leaseMs);
        },
      };
      const { vt, runner, answer } = withHangingCallbacks('idle', { store });
      await memory.enqueue([item(1, start, 'callback')]);
      const drained = runner.drain();
      try {
        await vt.settle();
        const before = claims;
        await vt.advanceBy(1_000);
        expect(claims - before).toBe(0);
      } finally {
        answer();
      }
      expect(await drained).toBe(1);
    });

    it('stop() ends a drain under way: it starts no more items, and answers once its items are done', async () => {
      const { vt, memory, runner, runs, answer } = withHangingCallbacks('idle');
      await memory.enqueue(Array.from({ length: 40 }, (_, i) => item(i, start, 'callback')));
      const drained = runner.drain();
      await vt.settle();
      expect(runs).toHaveLength(16);
      const stopped = runner.stop();
      try {
        // A window later the limit would have grown and the drain taken more.
        await vt.advanceBy(500);
        expect(runs).toHaveLength(16);
      } finally {
        answer();
      }
      await stopped;
      expect(await drained).toBe(16);
      expect(vt.scheduler.actions).toHaveLength(0);
      expect(await memory.nextRunAt()).toBe(start);
    });

    it('stop() ends a fill under way: no claim after it, though claims came back full', async () => {
      const memory = memoryDueWorkStore();
      let claims = 0;
      let release: () => void = () => {};
      const store: DueWorkStore = {
        ...memory,
        claim: async (now, limit, leaseMs) => {
          claims += 1;
          // The second claim waits until the test lets it go.
          if (claims === 2) await new Promise<void>((resolve) => (release = resolve));
          return memory.claim(now, limit, leaseMs);
        },
      };
      const { runner, runs } = setup({ store, batchSize: 4, concurrency: 128 });
      await memory.enqueue(Array.from({ length: 40 }, (_, i) => item(i, start)));
      const drained = runner.drain();
      await macrotask();
      expect(claims).toBe(2);
      const stopped = runner.stop();
      release();
      await stopped;
      expect(claims).toBe(2);
      expect(await drained).toBe(8);
      expect(runs).toHaveLength(8);
    });

    it('drain() after a drain that stop() ended runs what is due', async () => {
      const { memory, runner, runs } = setup({});
      await memory.enqueue(Array.from({ length: 5 }, (_, i) => item(i, start)));
      const drained = runner.drain();
      await runner.stop();
      await drained;
      const before = runs.length;
      await memory.enqueue(Array.from({ length: 5 }, (_, i) => item(10 + i, start)));
      expect(await runner.drain()).toBe(10 - before);
      expect(runs).toHaveLength(10);
    });

    it('counts a claim that came back full as holding items back, though items ended while it ran', async () => {
      const memory = memoryDueWorkStore();
      // A claim takes a turn of the event loop, as a round trip to Redis does, and so does an item:
      // each claim finds slots freed by the items that ended while it ran.
      const store: DueWorkStore = {
        ...memory,
        claim: async (now, limit, leaseMs) => {
          await new Promise((resolve) => setImmediate(resolve));
          return memory.claim(now, limit, leaseMs);
        },
      };
      let running = 0;
      let most = 0;
      const { runner } = setup({
        store,
        concurrency: 128,
        async timeout() {
          running += 1;
          most = Math.max(most, running);
          await new Promise((resolve) => setImmediate(resolve));
          running -= 1;
          return { done: true };
        },
      });
      await memory.enqueue(Array.from({ length: 2_000 }, (_, i) => item(i, start)));
      expect(await runner.drain()).toBe(2_000);
      expect(most).toBeGreaterThan(24);
    });
  });

  it('drain() runs everything due now, across batches, and answers the count', async () => {
    const { vt, memory, runner, runs } = setup({ batchSize: 2 });
    await memory.enqueue([
      item(1, start - 10),
      item(2, start),
      item(3, start - 5, 'callback'),
      item(4, start + 1),
      item(5, start - 1),
      item(6, start + 60_000, 'callback'),
    ]);

    expect(await runner.drain()).toBe(4);
    expect(runs.map((r) => r.runAt)).toEqual([start - 10, start - 5, start - 1, start]);
    expect(await memory.nextRunAt()).toBe(start + 1);
    expect(await runner.drain()).toBe(0);
    // drain() does not start the timer.
    expect(vt.scheduler.actions).toHaveLength(0);
  });

  it('drain() called while draining joins the running drain; each item runs once', async () => {
    const { memory, runner, runs } = setup({ batchSize: 3 });
    await memory.enqueue(Array.from({ length: 7 }, (_, i) => item(i, start - i)));
    const [a, b] = await Promise.all([runner.drain(), runner.drain()]);
    expect(a).toBe(7);
    expect(b).toBe(7);
    expect(runs).toHaveLength(7);
    expect(new Set(runs.map((r) => r.id)).size).toBe(7);
  });

  it('stop() cancels the timer and waits for the items being run', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { vt, memory, runner, runs } = setup({
      pollMs: 1_000,
      async timeout(claimed) {
        if (claimed.requestId === item(1, 0).requestId) await gate;
        return { done: true };
      },
    });
    await memory.enqueue([item(1, start + 1_000), item(2, start + 2_000)]);
    runner.start();
    await vt.advanceTo(start + 1_000);
    expect(runs).toHaveLength(1);

    let stopped = false;
    const stopping = runner.stop().then(() => {
      stopped = true;
    });
    expect(vt.scheduler.actions).toHaveLength(0);
    await vt.settle();
    expect(stopped).toBe(false); // item 1 is still running
    release();
    await stopping;
    expect(stopped).toBe(true);

    await vt.advanceTo(start + 10_000);
    runner.poke();
    await vt.advanceTo(start + 20_000);
    expect(runs.map((r) => r.id)).toEqual([item(1, 0).id]);
    expect(vt.scheduler.actions).toHaveLength(0);
    expect(await memory.nextRunAt()).toBe(start + 2_000);
  });

  it('keeps going when the store is unreachable: logs and tries again after pollMs', async () => {
    const memory = memoryDueWorkStore();
    let failures = 1;
    const flaky: DueWorkStore = {
      ...memory,
      async claim(now, limit, leaseMs) {
        if (failures > 0) {
          failures -= 1;
          throw new Error('connection refused');
        }
        return memory.claim(now, limit, leaseMs);
      },
    };
    const { vt, runner, runs, errors } = setup({ store: flaky, pollMs: 1_000 });
    await memory.enqueue([item(1, start)]);
    runner.start();
    await vt.settle();
    expect(runs).toEqual([]);
    expect(errors.map((e) => e.message)).toEqual(['due work store unreachable; trying again']);
    await vt.advanceTo(start + 999);
    expect(runs).toEqual([]);
    await vt.advanceTo(start + 1_000);
    expect(runs.map((r) => r.at)).toEqual([start + 1_000]);
  });

  it('logs nothing when a look under way fails once stop() has returned, the store closed after it', async () => {
    const memory = memoryDueWorkStore();
    let fail: (error: Error) => void = () => {};
    const closing: DueWorkStore = {
      ...memory,
      nextRunAt: () =>
        new Promise((_, reject) => {
          fail = reject;
        }),
    };
    const { vt, runner, errors } = setup({ store: closing });
    runner.start();
    await vt.settle();
    await runner.stop();
    fail(new Error('The client is closed'));
    await vt.settle();
    expect(errors).toEqual([]);
    expect(vt.scheduler.actions).toHaveLength(0);
  });
});
