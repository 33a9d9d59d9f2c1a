import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A standalone host running as its own process, as `npm start` runs it. */
export interface StandaloneProcess {
  child: ChildProcess;
  base: string;
  port: number;
  /** Every JSON log line so far. */
  lines: Record<string, unknown>[];
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the standalone host with extra environment, and waits for its "listening" line. */
export async function startStandaloneProcess(
  environment: Record<string, string> = {},
): Promise<StandaloneProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/standalone/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...environment },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    reader.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry.message === 'listening') resolve(entry);
      if (entry.message === 'could not start') reject(new Error(String(entry.error)));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  const entry = await listening;
  const port = Number(entry.port);
  return {
    child,
    base: `http://127.0.0.1:${port}`,
    port,
    lines,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}
