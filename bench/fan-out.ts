/**
 * Fan-out through Slack: an interactive send to 50 recipients against a local fake Slack Web API
 * that takes 20 ms per call (standing in for Slack's servers, in a process of its own as they are on
 * machines of their own), against the same send to one recipient in the same run. Users' ids are
 * looked up once and cached, as in production after the first send; the figure is the latency of
 * the whole HTTP-level send, as the caller waits for it.
 */
import { sendInteractive } from '../test/support/send-interactive.js';
import { numberedUsers } from '../test/support/test-seed.js';
import { benchSlackNotifier } from './bench-notifier.js';
import { quick, saveFigures, sized } from './options.js';

const latencyMs = 20;
const { notifier, slack } = await benchSlackNotifier(numberedUsers);

/** The latency of one interactive send, as the caller waits for it. */
const send = async (recipients: readonly string[]): Promise<number> => {
  const started = performance.now();
  await sendInteractive(notifier, recipients, 30);
  return performance.now() - started;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const fifty = numberedUsers.slice(0, 50);
// Warm the user-id cache and the clients, as a running service has them.
await send(fifty);
await slack.setLatency(latencyMs);
const runs = sized(15, 3);
const single: number[] = [];
const many: number[] = [];
for (let run = 0; run < runs; run += 1) {
  single.push(await send([fifty[run % fifty.length] ?? 'user01@acme.test']));
  many.push(await send(fifty));
}
const singleMs = median(single);
const manyMs = median(many);
console.log(
  `fake Slack Web API adding ${latencyMs} ms per call; median of ${runs} sends each${quick ? ' (quick)' : ''}`,
);
console.log(`baseline: interactive send to 1 recipient      ${singleMs.toFixed(0).padStart(6)} ms`);
console.log(
  `interactive send to 50 recipients                ${manyMs.toFixed(0).padStart(6)} ms   ${(manyMs / singleMs).toFixed(2)}x baseline (aim: under 4x)`,
);
saveFigures({ latencyMs, runs, singleMs, fiftyMs: manyMs, ratio: manyMs / singleMs });
await notifier.stop();
await slack.close();
