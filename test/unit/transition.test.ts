import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  DisableMode,
  InteractiveRequest,
  RecipientState,
} from '../../core/domain/interactive-request.js';
import type { RequestCommand, RequestEvent, TransitionOutcome } from '../../core/request/events.js';
import { requestView } from '../../core/request/message-view.js';
import { transition } from '../../core/request/transition.js';

const t0 = Date.parse('2026-03-01T10:00:00.000Z');
const minute = 60_000;
const expiresAt = t0 + 30 * minute;
const t1 = t0 + 1 * minute;
const t2 = t0 + 2 * minute;
const t3 = t0 + 3 * minute;
const requestId = 'req_AAAAAAAAAAAAAAAAAAAAAAAA';

const alice = 'alice@acme.test';
const bob = 'bob@acme.test';
const carol = 'carol@acme.test';
const keys = [alice, bob, carol] as const;
const mallory = 'mallory@acme.test';

/** The answer part of a recipient: one of the three states of docs/behaviour.md#lifecycle. */
type Answer = Pick<RecipientState, 'value' | 'respondedAt' | 'expired'>;
const open: Answer = { value: null, respondedAt: null, expired: false };
const expired: Answer = { value: null, respondedAt: null, expired: true };
const answered = (value: string, at: number): Answer => ({ value, respondedAt: at, expired: false });

const recipients = (answers: readonly Answer[]): RecipientState[] =>
  answers.map((answer, i) => {
    const key = keys[i] ?? `user${i}@acme.test`;
    // The spelling the caller used differs from the key, so a mix-up of the two shows.
    return { email: key.replace(/^./, (c) => c.toUpperCase()), key, ...answer };
  });

interface RequestShape {
  mode: DisableMode;
  answers: readonly Answer[];
  status?: 'pending' | 'finished';
  finishedAt?: number | null;
  callback?: boolean;
}

const request = ({ mode, answers, status = 'pending', finishedAt = null, callback = true }: RequestShape) =>
  ({
    id: requestId,
    organizationId: 'acme',
    version: 7,
    status,
    message: 'Deploy *v2.3* to production?',
    options: [
      { text: 'Approve', value: 'approve' },
      { text: 'Reject', value: 'reject' },
      { text: 'Later', value: 'later' },
    ],
    mode,
    timeoutMinutes: 30,
    createdAt: t0,
    expiresAt,
    finishedAt,
    externalReferenceId: 'deploy-42',
    sender: { userId: 'u_alice', name: 'Alice Doe' },
    callback: callback ? { url: 'https://hooks.example.com/notify', secret: 'whsec_c2VjcmV0' } : null,
    recipients: recipients(answers),
  }) satisfies InteractiveRequest;

const click = (recipient: string, value: string, at: number): RequestEvent => ({
  type: 'click',
  requestId,
  recipient,
  value,
  at,
});
const timeout = (at: number): RequestEvent => ({ type: 'timeout', requestId, at });

const update = (...recipientKeys: string[]): RequestCommand => ({
  type: 'update-messages',
  recipients: recipientKeys,
});
const cancelTimeout: RequestCommand = { type: 'cancel-timeout' };
const callbackAt = (runAt: number): RequestCommand => ({ type: 'enqueue-callback', runAt });

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

interface Row {
  name: string;
  state: InteractiveRequest;
  event: RequestEvent;
  outcome: TransitionOutcome;
  /** Expected recipients after the event, in order alice, bob, carol. */
  answers: readonly Answer[];
  status: 'pending' | 'finished';
  finishedAt: number | null;
  commands: RequestCommand[];
}

const userAction = (answers: readonly Answer[], extra: Partial<RequestShape> = {}) =>
  request({ mode: 'onUserAction', answers, ...extra });
const onTimeout = (answers: readonly Answer[], extra: Partial<RequestShape> = {}) =>
  request({ mode: 'onTimeout', answers, ...extra });

const finishedByAnswers = { status: 'finished', finishedAt: t3 } as const;
const finishedByTimeout = { status: 'finished', finishedAt: expiresAt } as const;

const rows: Row[] = [
  // ---- onUserAction ----
  {
    name: 'onUserAction: first click of a recipient is accepted',
    state: userAction([open, open, open]),
    event: click(alice, 'approve', t1),
    outcome: 'accepted',
    answers: [answered('approve', t1), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [update(alice)],
  },
  {
    name: 'onUserAction: a second recipient answers, one still open',
    state: userAction([answered('approve', t1), open, open]),
    event: click(bob, 'reject', t2),
    outcome: 'accepted',
    answers: [answered('approve', t1), answered('reject', t2), open],
    status: 'pending',
    finishedAt: null,
    commands: [update(bob)],
  },
  {
    name: 'onUserAction: the last answer finishes the request and enqueues the callback at that time',
    state: userAction([answered('approve', t1), answered('reject', t2), open]),
    event: click(carol, 'later', t3),
    outcome: 'accepted',
    answers: [answered('approve', t1), answered('reject', t2), answered('later', t3)],
    status: 'finished',
    finishedAt: t3,
    // Every copy changes (answered → closed), not only the clicker's: see the view property below.
    commands: [update(alice, bob, carol), cancelTimeout, callbackAt(t3)],
  },
  {
    name: 'onUserAction: the last answer without a callback_url enqueues no callback',
    state: userAction([answered('approve', t1), answered('reject', t2), open], { callback: false }),
    event: click(carol, 'later', t3),
    outcome: 'accepted',
    answers: [answered('approve', t1), answered('reject', t2), answered('later', t3)],
    status: 'finished',
    finishedAt: t3,
    commands: [update(alice, bob, carol), cancelTimeout],
  },
  {
    name: 'onUserAction: a second click with another value is final',
    state: userAction([answered('approve', t1), open, open]),
    event: click(alice, 'reject', t2),
    outcome: 'final',
    answers: [answered('approve', t1), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onUserAction: a second click with the same value is final (timestamp kept)',
    state: userAction([answered('approve', t1), open, open]),
    event: click(alice, 'approve', t2),
    outcome: 'final',
    answers: [answered('approve', t1), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onUserAction: a value that is no option',
    state: userAction([open, open, open]),
    event: click(alice, 'APPROVE', t1),
    outcome: 'unknown-option',
    answers: [open, open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onUserAction: a click by someone who is not a recipient',
    state: userAction([open, open, open]),
    event: click(mallory, 'approve', t1),
    outcome: 'not-found',
    answers: [open, open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onUserAction: a click matches recipients by normalized key, not by the spelled address',
    state: userAction([open, open, open]),
    event: click('Alice@acme.test', 'approve', t1),
    outcome: 'not-found',
    answers: [open, open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onUserAction: the timeout expires only the recipients without an answer',
    state: userAction([answered('approve', t1), open, open]),
    event: timeout(expiresAt),
    outcome: 'expired',
    answers: [answered('approve', t1), expired, expired],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [update(alice, bob, carol), cancelTimeout, callbackAt(expiresAt)],
  },
  {
    name: 'onUserAction: the timeout with nobody answered expires everyone',
    state: userAction([open, open, open], { callback: false }),
    event: timeout(expiresAt + 250),
    outcome: 'expired',
    answers: [expired, expired, expired],
    status: 'finished',
    finishedAt: expiresAt + 250,
    commands: [update(alice, bob, carol), cancelTimeout],
  },
  {
    name: 'onUserAction: a click one millisecond before the expiry counts',
    state: userAction([open, open, open]),
    event: click(bob, 'reject', expiresAt - 1),
    outcome: 'accepted',
    answers: [open, answered('reject', expiresAt - 1), open],
    status: 'pending',
    finishedAt: null,
    commands: [update(bob)],
  },
  {
    name: 'onUserAction: a click exactly at the expiry finishes the request as the timeout and is not counted',
    state: userAction([answered('approve', t1), open, open]),
    event: click(bob, 'reject', expiresAt),
    outcome: 'finished',
    answers: [answered('approve', t1), expired, expired],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [update(alice, bob, carol), cancelTimeout, callbackAt(expiresAt)],
  },
  {
    name: 'onUserAction: a late click that would have been the last answer does not finish it as answered',
    state: userAction([answered('approve', t1), answered('reject', t2), open]),
    event: click(carol, 'later', expiresAt + 5_000),
    outcome: 'finished',
    answers: [answered('approve', t1), answered('reject', t2), expired],
    status: 'finished',
    finishedAt: expiresAt + 5_000,
    commands: [update(alice, bob, carol), cancelTimeout, callbackAt(expiresAt + 5_000)],
  },
  {
    name: 'onUserAction: a click after the request finished on answers changes nothing',
    state: userAction(
      [answered('approve', t1), answered('reject', t2), answered('later', t3)],
      finishedByAnswers,
    ),
    event: click(alice, 'reject', t3 + 1),
    outcome: 'finished',
    answers: [answered('approve', t1), answered('reject', t2), answered('later', t3)],
    status: 'finished',
    finishedAt: t3,
    commands: [],
  },
  {
    name: 'onUserAction: a timeout after the request finished on answers changes nothing',
    state: userAction(
      [answered('approve', t1), answered('reject', t2), answered('later', t3)],
      finishedByAnswers,
    ),
    event: timeout(expiresAt),
    outcome: 'finished',
    answers: [answered('approve', t1), answered('reject', t2), answered('later', t3)],
    status: 'finished',
    finishedAt: t3,
    commands: [],
  },
  {
    name: 'onUserAction: a click by an expired recipient after the timeout changes nothing',
    state: userAction([answered('approve', t1), expired, expired], finishedByTimeout),
    event: click(bob, 'approve', expiresAt + 1),
    outcome: 'finished',
    answers: [answered('approve', t1), expired, expired],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [],
  },
  {
    name: 'onUserAction: an invalid click after the finish reads as finished',
    state: userAction([answered('approve', t1), expired, expired], finishedByTimeout),
    event: click(mallory, 'bogus', t2),
    outcome: 'finished',
    answers: [answered('approve', t1), expired, expired],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [],
  },

  // ---- onTimeout ----
  {
    name: 'onTimeout: first click of a recipient is accepted',
    state: onTimeout([open, open, open]),
    event: click(bob, 'later', t1),
    outcome: 'accepted',
    answers: [open, answered('later', t1), open],
    status: 'pending',
    finishedAt: null,
    commands: [update(bob)],
  },
  {
    name: 'onTimeout: a re-click replaces value and timestamp',
    state: onTimeout([answered('approve', t1), open, open]),
    event: click(alice, 'reject', t2),
    outcome: 'accepted',
    answers: [answered('reject', t2), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [update(alice)],
  },
  {
    name: 'onTimeout: a re-click on the same value is taken again with the new timestamp',
    state: onTimeout([answered('approve', t1), open, open]),
    event: click(alice, 'approve', t2),
    outcome: 'accepted',
    answers: [answered('approve', t2), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [update(alice)],
  },
  {
    name: 'onTimeout: a click made before the stored answer, written after it (another instance), changes nothing',
    state: onTimeout([answered('approve', t2), open, open]),
    event: click(alice, 'reject', t1),
    outcome: 'accepted',
    answers: [answered('approve', t2), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onTimeout: everyone having answered does not finish the request',
    state: onTimeout([answered('approve', t1), answered('reject', t2), open]),
    event: click(carol, 'later', t3),
    outcome: 'accepted',
    answers: [answered('approve', t1), answered('reject', t2), answered('later', t3)],
    status: 'pending',
    finishedAt: null,
    commands: [update(carol)],
  },
  {
    name: 'onTimeout: a re-click after everyone answered still does not finish it',
    state: onTimeout([answered('approve', t1), answered('reject', t2), answered('later', t3)]),
    event: click(bob, 'approve', t3 + 10),
    outcome: 'accepted',
    answers: [answered('approve', t1), answered('approve', t3 + 10), answered('later', t3)],
    status: 'pending',
    finishedAt: null,
    commands: [update(bob)],
  },
  {
    name: 'onTimeout: a value that is no option',
    state: onTimeout([answered('approve', t1), open, open]),
    event: click(alice, 'bogus', t2),
    outcome: 'unknown-option',
    answers: [answered('approve', t1), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onTimeout: a click by someone who is not a recipient',
    state: onTimeout([open, open, open]),
    event: click(mallory, 'reject', t1),
    outcome: 'not-found',
    answers: [open, open, open],
    status: 'pending',
    finishedAt: null,
    commands: [],
  },
  {
    name: 'onTimeout: the timeout captures the last answers; responders keep expired false',
    state: onTimeout([answered('reject', t2), open, answered('later', t3)]),
    event: timeout(expiresAt),
    outcome: 'expired',
    answers: [answered('reject', t2), expired, answered('later', t3)],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [update(alice, bob, carol), cancelTimeout, callbackAt(expiresAt)],
  },
  {
    name: 'onTimeout: the timeout with everyone answered expires nobody',
    state: onTimeout([answered('reject', t2), answered('approve', t1), answered('later', t3)], {
      callback: false,
    }),
    event: timeout(expiresAt + 40),
    outcome: 'expired',
    answers: [answered('reject', t2), answered('approve', t1), answered('later', t3)],
    status: 'finished',
    finishedAt: expiresAt + 40,
    commands: [update(alice, bob, carol), cancelTimeout],
  },
  {
    name: 'onTimeout: a re-click at the expiry finishes the request and does not replace the answer',
    state: onTimeout([answered('approve', t1), open, open]),
    event: click(alice, 'reject', expiresAt),
    outcome: 'finished',
    answers: [answered('approve', t1), expired, expired],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [update(alice, bob, carol), cancelTimeout, callbackAt(expiresAt)],
  },
  {
    name: 'onTimeout: a re-click one millisecond before the expiry still replaces the answer',
    state: onTimeout([answered('approve', t1), open, open]),
    event: click(alice, 'reject', expiresAt - 1),
    outcome: 'accepted',
    answers: [answered('reject', expiresAt - 1), open, open],
    status: 'pending',
    finishedAt: null,
    commands: [update(alice)],
  },
  {
    name: 'onTimeout: a click after the finish changes nothing',
    state: onTimeout([answered('reject', t2), expired, answered('later', t3)], finishedByTimeout),
    event: click(alice, 'approve', expiresAt + minute),
    outcome: 'finished',
    answers: [answered('reject', t2), expired, answered('later', t3)],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [],
  },
  {
    name: 'onTimeout: a second timeout changes nothing',
    state: onTimeout([answered('reject', t2), expired, answered('later', t3)], finishedByTimeout),
    event: timeout(expiresAt + 1),
    outcome: 'finished',
    answers: [answered('reject', t2), expired, answered('later', t3)],
    status: 'finished',
    finishedAt: expiresAt,
    commands: [],
  },
];

describe('transition (table)', () => {
  it.each(rows)('$name', (row) => {
    const input = deepFreeze(structuredClone(row.state));
    const before = structuredClone(input);

    const result = transition(input, row.event);

    expect(result.outcome).toBe(row.outcome);
    expect(result.state.recipients).toEqual(recipients(row.answers));
    expect(result.state.status).toBe(row.status);
    expect(result.state.finishedAt).toBe(row.finishedAt);
    expect(result.commands).toEqual(row.commands);
    // The input is never mutated (it is frozen: a write would also have thrown).
    expect(input).toEqual(before);

    const changed = row.commands.length > 0;
    if (changed) {
      expect(result.state).not.toBe(input);
      expect(result.state.version).toBe(input.version + 1);
      // Nothing but version, status, finishedAt and recipients ever changes.
      const { version, status, finishedAt, recipients: _r, ...rest } = result.state;
      const { version: _v, status: _s, finishedAt: _f, recipients: _r2, ...inputRest } = input;
      expect(rest).toEqual(inputRest);
    } else {
      expect(result.state).toBe(input);
    }
  });

  it('covers every per-recipient state of docs/behaviour.md#lifecycle in both modes, before and after', () => {
    const seen = new Set<string>();
    const kind = (a: Answer) => (a.expired ? 'expired' : a.value === null ? 'open' : 'answered');
    for (const row of rows) {
      for (const a of [...row.state.recipients, ...recipients(row.answers)])
        seen.add(`${row.state.mode}:${kind(a)}`);
    }
    expect([...seen].sort()).toEqual([
      'onTimeout:answered',
      'onTimeout:expired',
      'onTimeout:open',
      'onUserAction:answered',
      'onUserAction:expired',
      'onUserAction:open',
    ]);
  });
});

describe('transition (events of no known kind)', () => {
  it('throws for an event of a kind it has no arm for, on a pending request, and changes nothing', () => {
    const state = userAction([open, open, open]);
    const before = structuredClone(state);
    const stray = { type: 'escalate', requestId, at: t1 } as unknown as RequestEvent;
    expect(() => transition(state, stray)).toThrow(
      new TypeError(`Unknown request event ${JSON.stringify(stray)}`),
    );
    expect(state).toEqual(before);
  });
});

describe('transition (sequences)', () => {
  it('versions count the changes exactly: accepted clicks and the finish, nothing for rejected events', () => {
    let state: InteractiveRequest = userAction([open, open, open]);
    const events = [
      click(alice, 'approve', t1), // +1
      click(alice, 'reject', t1 + 1), // final
      click(mallory, 'approve', t1 + 2), // not-found
      click(bob, 'nope', t1 + 3), // unknown-option
      click(bob, 'reject', t2), // +1
      click(carol, 'later', t3), // +1, finishes
      timeout(expiresAt), // finished
    ];
    const outcomes = events.map((event) => {
      const result = transition(state, event);
      state = result.state;
      return `${result.outcome}@${state.version}`;
    });
    expect(outcomes).toEqual([
      'accepted@8',
      'final@8',
      'not-found@8',
      'unknown-option@8',
      'accepted@9',
      'accepted@10',
      'finished@10',
    ]);
    expect(state.status).toBe('finished');
    expect(state.finishedAt).toBe(t3);
  });

  it('onTimeout keeps only the last click of each user and captures it at the expiry', () => {
    let state: InteractiveRequest = onTimeout([open, open, open]);
    for (const event of [
      click(alice, 'approve', t1),
      click(alice, 'reject', t2),
      click(bob, 'later', t2),
      click(alice, 'later', t3),
      timeout(expiresAt),
      click(carol, 'approve', expiresAt + 1),
    ]) {
      state = transition(state, event).state;
    }
    expect(state.recipients).toEqual(recipients([answered('later', t3), answered('later', t2), expired]));
    expect(state.version).toBe(7 + 5);
  });
});

// ---- property ----

const optionValues = ['approve', 'reject', 'later'];
const eventArb = (keyCount: number): fc.Arbitrary<RequestEvent> => {
  const who = fc.constantFrom(...keys.slice(0, keyCount), mallory);
  const what = fc.constantFrom(...optionValues, 'bogus');
  // Mostly before the expiry; some at or after it.
  const when = fc.integer({ min: t0, max: expiresAt + 10 * minute });
  return fc.oneof(
    { weight: 12, arbitrary: fc.tuple(who, what, when).map(([r, v, at]) => click(r, v, at)) },
    { weight: 1, arbitrary: when.map((at) => timeout(at)) },
  );
};

const scenarioArb = fc
  .record({
    mode: fc.constantFrom<DisableMode>('onUserAction', 'onTimeout'),
    recipientCount: fc.integer({ min: 1, max: 3 }),
    callback: fc.boolean(),
  })
  .chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      events: fc.array(eventArb(shape.recipientCount), { maxLength: 40 }),
    }),
  );

const isSpecState = (r: RecipientState): boolean =>
  (r.value === null && r.respondedAt === null && !r.expired) ||
  (r.value !== null && r.respondedAt !== null && !r.expired) ||
  (r.value === null && r.respondedAt === null && r.expired);

describe('transition (property)', () => {
  it('holds the lifecycle invariants over any sequence of events', () => {
    fc.assert(
      fc.property(scenarioArb, ({ shape, events }) => {
        let state: InteractiveRequest = deepFreeze(
          request({
            mode: shape.mode,
            answers: Array.from({ length: shape.recipientCount }, () => open),
            callback: shape.callback,
          }),
        );
        const firstAnswer = new Map<string, { value: string; at: number }>();

        for (const event of events) {
          const before = state;
          const result = transition(before, event);
          const next = result.state;

          // Once finished, nothing changes.
          if (before.status === 'finished') {
            expect(next).toBe(before);
            expect(result.commands).toEqual([]);
            expect(result.outcome).toBe('finished');
          }
          // Exactly one version per change, none without.
          if (next === before) {
            expect(result.commands).toEqual([]);
          } else {
            expect(next.version).toBe(before.version + 1);
            expect(result.commands.length).toBeGreaterThan(0);
          }
          // Every recipient is in exactly one state of docs/behaviour.md#lifecycle; expiry only on a finished request.
          for (const r of next.recipients) {
            expect(isSpecState(r)).toBe(true);
            if (r.expired) expect(next.status).toBe('finished');
          }
          expect(next.finishedAt === null).toBe(next.status === 'pending');
          // Events at or after the expiry never count as answers.
          if (event.type === 'click' && event.at >= expiresAt) {
            expect(result.outcome === 'accepted').toBe(false);
          }
          // Finishing: cancel the timeout, callback exactly when configured, at the finish time.
          const finishing = before.status === 'pending' && next.status === 'finished';
          expect(result.commands.some((c) => c.type === 'cancel-timeout')).toBe(finishing);
          expect(result.commands.filter((c) => c.type === 'enqueue-callback')).toEqual(
            finishing && shape.callback ? [callbackAt(next.finishedAt ?? Number.NaN)] : [],
          );
          if (finishing && shape.mode === 'onTimeout') {
            expect(event.type === 'timeout' || event.at >= expiresAt).toBe(true);
          }
          if (shape.mode === 'onUserAction' && next.status === 'pending') {
            expect(next.recipients.some((r) => r.value === null)).toBe(true);
          }
          if (shape.mode === 'onUserAction') {
            for (const r of next.recipients) {
              const first = firstAnswer.get(r.key);
              if (first) {
                expect({ value: r.value, at: r.respondedAt }).toEqual(first);
              } else if (r.value !== null && r.respondedAt !== null) {
                firstAnswer.set(r.key, { value: r.value, at: r.respondedAt });
              }
            }
          }
          state = deepFreeze(next);
        }
      }),
      { numRuns: 500 },
    );
  });

  /** What a recipient sees: the view without its version, which every transition raises. */
  const shown = (request: InteractiveRequest, key: string) => ({ ...requestView(request, key), version: 0 });

  it('updates every copy whose view changed (core/domain/message-view.ts: "the transport receives a new view for every copy")', () => {
    fc.assert(
      fc.property(scenarioArb, ({ shape, events }) => {
        let state: InteractiveRequest = request({
          mode: shape.mode,
          answers: Array.from({ length: shape.recipientCount }, () => open),
          callback: shape.callback,
        });
        for (const event of events) {
          const result = transition(state, event);
          const updated = new Set(
            result.commands.flatMap((c) => (c.type === 'update-messages' ? c.recipients : [])),
          );
          const stale = state.recipients
            .map((r) => r.key)
            .filter((k) => !updated.has(k))
            .filter((k) => JSON.stringify(shown(state, k)) !== JSON.stringify(shown(result.state, k)));
          expect(stale).toEqual([]);
          state = result.state;
        }
      }),
      { numRuns: 300 },
    );
  });
});
