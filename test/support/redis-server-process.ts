import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { redisAvailable } from './redis.js';

/** A private `redis-server` that a test may stop and start again on the same port. */
export interface RedisServerProcess {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Stops the server without closing its connections (SIGSTOP), as a stuck server or a network that
   * drops packets would leave them: nothing is answered until {@link thaw}.
   */
  freeze(): void;
  /** Lets a frozen server run on (SIGCONT): it answers what it was sent meanwhile. */
  thaw(): void;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Whether the `redis-server` binary can be run here. */
export async function redisServerInstalled(): Promise<boolean> {
  const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
  const [code] = (await Promise.race([once(child, 'exit'), once(child, 'error').then(() => [1])])) as [
    number,
  ];
  return code === 0;
}

/**
 * Whether the `redis-server` binary can be run here, for the tests named `what`: under `CI=true` it
 * must be (the run fails rather than skip), elsewhere they are skipped with a warning that says so.
 */
export async function redisServerForTests(what: string): Promise<boolean> {
  const installed = await redisServerInstalled();
  if (!installed) {
    if (process.env.CI === 'true') throw new Error('redis-server must be installed under CI');
    console.warn(`${what} skipped: redis-server is not installed`);
  }
  return installed;
}

/** Prepares a server on a free port of 127.0.0.1, not yet started. */
export async function redisServerProcess(): Promise<RedisServerProcess> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  return {
    url,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      );
      for (let i = 0; i < 50 && !(await redisAvailable(url)); i += 1)
        await new Promise((r) => setTimeout(r, 100));
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
    async stop() {
      // A server killed before has a signal code, and no exit code: it exits no more.
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
