/**
 * Prints throughput figures of the hot paths, each against a baseline measured in the same run,
 * so the ratios mean something on any machine. Never a pass/fail on time.
 */
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { createNotifier } from '../core/notifier.js';
import { notifyRequestSchema } from '../core/schemas/notify-request.js';
import { testKeys, testSeed } from '../test/support/test-seed.js';
import { opsPerSecond, report } from './measure.js';
import { saveFigures, sized } from './options.js';

const unlimited = { burst: 1e12, perSecond: 1e12 };
const storage = memoryStorage();
const notifier = createNotifier({
  storage,
  transports: [inboxTransport()],
  rateLimits: { perKey: unlimited, perOrganization: unlimited },
});
await notifier.seed(testSeed);

const plainBody = JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deploy *v2* finished' });
const interactiveBody = JSON.stringify({
  user_emails: ['bob@acme.test', 'dave@acme.test'],
  message: 'Approve?',
  response_request: {
    options: [
      { text: 'Yes', value: 'yes' },
      { text: 'No', value: 'no' },
    ],
    timeout_minutes: 30,
  },
});
const bytes = (text: string) => [new TextEncoder().encode(text)];
const post = (body: string, extra: Record<string, string> = {}) =>
  notifier.handle({
    method: 'POST',
    url: '/api/notify',
    headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json', ...extra },
    body: bytes(body),
    clientAddress: '127.0.0.1',
  });

const baseline = await opsPerSecond(sized(20_000, 2_000), () =>
  notifyRequestSchema.parse(JSON.parse(plainBody)),
);
console.log(`baseline: JSON.parse + schema validation of a plain send body: ${baseline.toFixed(0)} ops/s\n`);

const figures: Record<string, number> = { baseline };
const measured = (name: string, value: number, against: number): void => {
  figures[name] = value;
  report(name, value, against);
};
const rounds = sized(5_000, 500);
measured(
  'send, fire-and-forget, 1 recipient (memory, inbox)',
  await opsPerSecond(rounds, () => post(plainBody)),
  baseline,
);
measured(
  'send, interactive, 2 recipients',
  await opsPerSecond(rounds, () => post(interactiveBody)),
  baseline,
);
measured(
  'send with Idempotency-Key, replayed',
  await opsPerSecond(rounds, () => post(plainBody, { 'idempotency-key': 'bench-replay' })),
  baseline,
);
const created = JSON.parse((await post(interactiveBody))?.body ?? '{}') as { request_id: string };
measured(
  'status read',
  await opsPerSecond(2 * rounds, () =>
    notifier.handle({
      method: 'GET',
      url: `/api/notify/status/${created.request_id}`,
      headers: { 'x-api-key': testKeys.alice },
      body: null,
      clientAddress: '127.0.0.1',
    }),
  ),
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
