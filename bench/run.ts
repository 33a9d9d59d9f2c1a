/**
 * Prints throughput figures of the hot paths, each against a baseline measured in the same run,
 * so the ratios mean something on any machine. Never a pass/fail on time.
 */
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { createNotifier } from '../core/notifier.js';
import { notifyRequestSchema } from '../core/schemas/notify-request.js';
import { testKeys, testSeed } from '../test/support/test-seed.js';
import { benchmarkMarkdown } from './markdown.js';
import { opsPerSecond, report } from './measure.js';

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

const baseline = await opsPerSecond(20_000, () => notifyRequestSchema.parse(JSON.parse(plainBody)));
console.log(`baseline: JSON.parse + schema validation of a plain send body: ${baseline.toFixed(0)} ops/s\n`);

report(
  'send, fire-and-forget, 1 recipient (memory, inbox)',
  await opsPerSecond(5_000, () => post(plainBody)),
  baseline,
);
report('send, interactive, 2 recipients', await opsPerSecond(5_000, () => post(interactiveBody)), baseline);
report(
  'send with Idempotency-Key, replayed',
  await opsPerSecond(5_000, () => post(plainBody, { 'idempotency-key': 'bench-replay' })),
  baseline,
);
const created = JSON.parse((await post(interactiveBody))?.body ?? '{}') as { request_id: string };
report(
  'status read',
  await opsPerSecond(10_000, () =>
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
const pending = 1_000_000;
await dueWork.enqueue(
  Array.from({ length: pending }, (_, i) => ({
    id: `t${i}`,
    kind: 'timeout' as const,
    requestId: `r${i}`,
    runAt: 1e15 + i,
    attempt: 0,
  })),
);
const emptyClaim = await opsPerSecond(100_000, () => dueWork.claim(0, 100, 1000));
console.log(
  `\nbaseline: claim of due work with ${pending} items pending, none due: ${emptyClaim.toFixed(0)} ops/s`,
);
const small = memoryStorage().dueWork;
await small.enqueue([{ id: 'one', kind: 'timeout', requestId: 'r', runAt: 1e15, attempt: 0 }]);
report(
  'claim with 1 item pending, none due',
  await opsPerSecond(100_000, () => small.claim(0, 100, 1000)),
  emptyClaim,
);
await notifier.stop();

console.log('');
await benchmarkMarkdown();
