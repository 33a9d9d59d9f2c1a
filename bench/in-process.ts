/**
 * Prints throughput figures of the hot paths, each against a baseline measured in the same run,
 * so the ratios mean something on any machine. Never a pass/fail on time.
 */

import { memoryStorage } from '../adapters/storage/memory/index.js';
import { notifyRequestSchema } from '../core/schemas/notify-request.js';
import { interactiveBody, plainBody, post, readStatus } from '../test/support/api-requests.js';
import { benchNotifier } from './bench-notifier.js';
import { opsPerSecond, report } from './measure.js';
import { saveFigures, sized } from './options.js';

const storage = memoryStorage();
const notifier = await benchNotifier(storage);

const plain = plainBody();
const interactive = interactiveBody(['bob@acme.test', 'dave@acme.test']);
const send = (body: string, headers?: Record<string, string>) => post(notifier, body, headers);

const baseline = await opsPerSecond(sized(200_000, 2_000), () =>
  notifyRequestSchema.parse(JSON.parse(plain)),
);
console.log(`baseline: JSON.parse + schema validation of a plain send body: ${baseline.toFixed(0)} ops/s\n`);

const figures: Record<string, number> = { baseline };
const measured = (name: string, value: number, against: number): void => {
  figures[name] = value;
  report(name, value, against);
};
// Long enough for the optimizing compiler to have done its work: with 5,000 sends and 10,000 status
// reads, a run measured mostly the code before it was optimized (a third fewer sends a second, and
// a change that sped status reads up by a fifth measured slower).
const rounds = sized(50_000, 500);
measured(
  'send, fire-and-forget, 1 recipient (memory, inbox)',
  await opsPerSecond(rounds, () => send(plain)),
  baseline,
);
measured('send, interactive, 2 recipients', await opsPerSecond(rounds, () => send(interactive)), baseline);
measured(
  'send with Idempotency-Key, replayed',
  await opsPerSecond(rounds, () => send(plain, { 'idempotency-key': 'bench-replay' })),
  baseline,
);
const created = JSON.parse((await send(interactive))?.body ?? '{}') as { request_id: string };
measured(
  'status read',
  await opsPerSecond(2 * rounds, () => readStatus(notifier, created.request_id)),
  baseline,
);

const { dueWork } = memoryStorage();
const pending = sized(1_000_000, 10_000);
await dueWork.enqueue(
  Array.from({ length: pending }, (_, i) => ({
    id: `t${i}`,
    kind: 'timeout' as const,
    requestId: `r${i}`,
    runAt: 1e15 + i,
    attempt: 0,
  })),
);
const emptyClaim = await opsPerSecond(sized(100_000, 5_000), () => dueWork.claim(0, 100, 1000));
figures['claim, none due, large queue'] = emptyClaim;
console.log(
  `\nbaseline: claim of due work with ${pending} items pending, none due: ${emptyClaim.toFixed(0)} ops/s`,
);
const small = memoryStorage().dueWork;
await small.enqueue([{ id: 'one', kind: 'timeout', requestId: 'r', runAt: 1e15, attempt: 0 }]);
measured(
  'claim with 1 item pending, none due',
  await opsPerSecond(sized(100_000, 5_000), () => small.claim(0, 100, 1000)),
  emptyClaim,
);
await notifier.stop();
saveFigures({ opsPerSecond: figures });
