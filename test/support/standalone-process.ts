import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** A log line of the standalone host (one JSON object per line). */
export type LogLine = Record<string, unknown>;

/** The JSON log lines of a process, as they come. */
export interface LogWatch {
  /** Every JSON line so far; other output (npm's banner) is left out. */
  lines: LogLine[];
  /** The first line (past or future) that matches; rejects when the process exits first or after `timeoutMs`. */
  next(matches: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
}

/** Collects the JSON lines a child writes on its standard output. */
export function watchLog(child: ChildProcess): LogWatch {
  const lines: LogLine[] = [];
  const waiters = new Set<{ matches: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (text) => {
    if (!text.startsWith('{')) return;
    const line = JSON.parse(text) as LogLine;
    lines.push(line);
    for (const waiter of waiters) if (waiter.matches(line)) waiter.resolve(line);
  });
  return {
    lines,
    next(matches, timeoutMs = 20_000) {
      const seen = lines.find(matches);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const waiter = {
          matches,
          resolve: (line: LogLine) => {
            settle();
            resolve(line);
          },
        };
        const onExit = (code: number | null) => {
          settle();
          reject(new Error(`exited with ${code} before the awaited log line`));
        };
        const timer = setTimeout(() => {
          settle();
          reject(new Error(`no such log line within ${timeoutMs} ms`));
        }, timeoutMs);
        const settle = () => {
          clearTimeout(timer);
          waiters.delete(waiter);
          child.off('exit', onExit);
        };
        waiters.add(waiter);
        child.once('exit', onExit);
      });
    },
  };
}

/** Waits for the exit code, at most `timeoutMs`; rejects if the process is still running then. */
export async function exitOf(child: ChildProcess, timeoutMs = 20_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await Promise.race([
    once(child, 'exit'),
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms`)), timeoutMs).unref(),
    ),
  ])) as [number | null];
  return code;
}

/** A standalone host running as its own process, as `npm start` runs it. */
export interface StandaloneProcess extends LogWatch {
  child: ChildProcess;
  base: string;
  port: number;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
}

/** How to start the standalone host and what to wait for. */
export interface StandaloneProcessOptions {
  /** Command-line arguments of the service, e.g. `['--wait-for-storage', '1']`. */
  args?: string[];
  /**
   * The log line to wait for: `ready` (storage connected, the API served; the default) or
   * `listening` (connections accepted, storage perhaps not yet reachable).
   */
  until?: 'ready' | 'listening';
  /** Longest wait for that line (ms, default 20 000). */
  timeoutMs?: number;
}

/** Starts the standalone host from source with extra environment, and waits for its `ready` (or `listening`) line. */
export async function startStandaloneProcess(
  environment: Record<string, string> = {},
  options: StandaloneProcessOptions = {},
): Promise<StandaloneProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'examples/standalone/main.ts', ...(options.args ?? [])],
    {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...environment },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const log = watchLog(child);
  const wanted = options.until ?? 'ready';
  const entry = await log
    .next((line) => line.message === wanted || line.message === 'could not start', options.timeoutMs)
    .catch((error: unknown) => {
      if (child.exitCode === null) child.kill('SIGKILL');
      throw error;
    });
  if (entry.message === 'could not start') throw new Error(String(entry.error));
  const port = Number(entry.port);
  return {
    ...log,
    child,
    base: `http://127.0.0.1:${port}`,
    port,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exitOf(child);
    },
  };
}
