/**
 * Cost of dispatching one event to the request machine as the number of stored requests that have
 * had events grows (each had a group of its own while its event ran). The figure with one request
 * is the baseline: the ratios should stay near 1.
 */
import { memoryStorage } from '../adapters/storage/memory/index.js';
import type { InteractiveRequest } from '../core/domain/interactive-request.js';
import { silentLogger } from '../core/ports/logger.js';
import { createRequestMachine } from '../core/request/request-machine.js';
import { opsPerSecond, report } from './measure.js';
import { sized } from './options.js';

const requestId = (n: number) => `req_${String(n).padStart(24, '0')}`;

function pendingRequest(n: number): InteractiveRequest {
  const createdAt = Date.now();
  return {
    id: requestId(n),
    organizationId: 'acme',
    version: 0,
    status: 'pending',
    message: 'Ship it?',
    options: [
      { text: 'Yes', value: 'yes' },
      { text: 'No', value: 'no' },
    ],
    mode: 'onTimeout',
    timeoutMinutes: 60,
    createdAt,
    expiresAt: createdAt + 3_600_000,
    finishedAt: null,
    externalReferenceId: null,
    sender: { userId: 'u_alice', name: 'Alice Doe' },
    callback: null,
    recipients: [
      { email: 'bob@acme.test', key: 'bob@acme.test', value: null, respondedAt: null, expired: false },
    ],
  };
}

/** Dispatches per second to one request while `live` requests hold open queues. */
async function dispatchRate(live: number): Promise<number> {
  const storage = memoryStorage();
  for (let n = 0; n < live; n += 1) {
    await storage.requests.createRequest(pendingRequest(n), { enqueue: [], cancel: [] });
  }
  const machine = createRequestMachine({
    requests: storage.requests,
    dueWork: storage.dueWork,
    logger: silentLogger,
    runCommands: async () => true,
  });
  // One event per request opens its group, which closes once the event has settled.
  await Promise.all(
    Array.from({ length: live }, (_, n) =>
      machine.dispatch({
        type: 'click',
        requestId: requestId(n),
        recipient: 'bob@acme.test',
        value: 'none',
        at: 0,
      }),
    ),
  );
  // An unknown option changes nothing: the figure is the machine's own cost, not the store's writes.
  const rate = await opsPerSecond(sized(20_000, 2_000), () =>
    machine.dispatch({
      type: 'click',
      requestId: requestId(0),
      recipient: 'bob@acme.test',
      value: 'none',
      at: 0,
    }),
  );
  await machine.close();
  return rate;
}

const baseline = await dispatchRate(1);
console.log(`baseline: dispatch of an event with 1 live request: ${baseline.toFixed(0)} ops/s`);
for (const live of sized([1_000, 10_000], [1_000])) {
  report(`dispatch with ${live} live requests`, await dispatchRate(live), baseline);
}
