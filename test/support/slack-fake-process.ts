/**
 * The fake Slack of `fake-slack.ts` in a process of its own, for benchmarks: Slack's servers do not
 * share the event loop of the process that calls them, and a fake that answers on that loop charges
 * the caller for its own parsing, checks and replies, one share per call, so that a fan-out to 50
 * recipients pays it 50 times. In its own process it answers concurrent calls concurrently, as
 * Slack does. Tests that inspect calls and messages use `startFakeSlack` in process instead.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { FakeSlackWorkspace } from './fake-slack.js';

/** What the process is told to do. */
export type FakeSlackProcessCommand =
  | { kind: 'start'; workspaces: FakeSlackWorkspace[] }
  | { kind: 'set-latency'; ms: number }
  | { kind: 'close' };

/** What the process answers to each command: its address to `start`, `done` to the others. */
export type FakeSlackProcessReply = { kind: 'listening'; apiUrl: string } | { kind: 'done' };

/** A fake Slack running in a process of its own. */
export interface FakeSlackProcess {
  /** What to pass as `apiUrl`. */
  apiUrl: string;
  /** Every answer waits this long (ms) before it is sent, from the next call on. */
  setLatency(ms: number): Promise<void>;
  /** Stops the server and the process. */
  close(): Promise<void>;
}

/** Starts a fake Slack serving `workspaces` in a child process (run with `--import tsx`). */
export async function startFakeSlackProcess(workspaces: FakeSlackWorkspace[]): Promise<FakeSlackProcess> {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./slack-fake-process-main.ts', import.meta.url)),
    [],
    {
      execArgv: ['--import', 'tsx'],
      serialization: 'json',
    },
  );
  // A fake that dies (a crash while loading) fails the benchmark instead of leaving it waiting.
  const died = once(child, 'exit').then(([code]) => {
    throw new Error(`fake Slack process exited (${String(code)})`);
  });
  died.catch(() => {});
  const command = async (sent: FakeSlackProcessCommand): Promise<FakeSlackProcessReply> => {
    const answered = once(child, 'message') as Promise<[FakeSlackProcessReply]>;
    child.send(sent);
    const [reply] = await Promise.race([answered, died]);
    return reply;
  };
  const started = await command({ kind: 'start', workspaces });
  if (started.kind !== 'listening') throw new Error('fake Slack process: expected its address');
  return {
    apiUrl: started.apiUrl,
    async setLatency(ms) {
      await command({ kind: 'set-latency', ms });
    },
    async close() {
      await command({ kind: 'close' });
      await died.catch(() => {});
    },
  };
}
