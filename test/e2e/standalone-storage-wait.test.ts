import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';
import {
  type RedisServerProcess,
  redisServerForTests,
  redisServerProcess,
} from '../support/redis-server-process.js';
import {
  exitOf,
  type StandaloneProcess,
  startStandaloneProcess,
  watchLog,
} from '../support/standalone-process.js';

const installed = await redisServerForTests('Storage wait tests');

const hosts: StandaloneProcess[] = [];
const servers: RedisServerProcess[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) if (host.child.exitCode === null) host.child.kill('SIGKILL');
  for (const server of servers.splice(0)) await server.stop();
});

const send = (base: string) =>
  fetch(`${base}/api/notify`, {
    method: 'POST',
    headers: { 'x-api-key': demoApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Is anyone there?' }),
    signal: AbortSignal.timeout(5_000),
  });

const health = (base: string) => fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });

/** Runs the service until it exits, with a time limit; returns its exit code and log. */
async function runToExit(environment: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/standalone/main.ts', ...args], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...environment },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const log = watchLog(child);
  try {
    return { code: await exitOf(child, 20_000), lines: log.lines };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** Checks that the service stopped at once with `could not start` and `said`, without waiting for storage. */
function expectStoppedAtOnce(run: Awaited<ReturnType<typeof runToExit>>, said: RegExp, what: string): void {
  expect(run.code, what).toBe(1);
  const failure = run.lines.find((line) => line.level === 'error');
  expect(failure?.message, what).toBe('could not start');
  expect(String(failure?.error), what).toMatch(said);
  expect(String(failure?.error), what).not.toMatch(/refused the setting.*refused the setting/);
  expect(
    run.lines.some((line) => line.message === 'storage not reachable; retrying'),
    what,
  ).toBe(false);
}

describe.skipIf(!installed)('waiting for storage at start-up', () => {
  it('answers 503 on /healthz and the API while Redis is unreachable, says why, then serves once it starts', async () => {
    const redis = await redisServerProcess();
    servers.push(redis);
    const host = await startStandaloneProcess({ NOTIFY_STORAGE: redis.url }, { until: 'listening' });
    hosts.push(host);

    const retry = await host.next((line) => line.message === 'storage not reachable; retrying');
    expect(retry).toMatchObject({ level: 'warn', storage: redis.url, attempt: 1 });
    expect(retry.retryInMs).toEqual(expect.any(Number));
    expect(String(retry.error)).toMatch(/ECONNREFUSED/);

    const waiting = await health(host.base);
    expect(waiting.status).toBe(503);
    expect(waiting.headers.get('content-type')).toMatch(/^application\/json/);
    const reason = (await waiting.json()) as { status: string; details: string };
    expect(reason.status).toBe('error');
    expect(reason.details).toContain(redis.url);
    expect(reason.details).toMatch(/ECONNREFUSED/);

    const refused = await send(host.base);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ status: 'error', details: 'Storage is temporarily unavailable' });

    await redis.start();
    await host.next((line) => line.message === 'ready', 30_000);
    const healthy = await health(host.base);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ status: 'ok' });
    expect((await send(host.base)).status).toBe(200);
  }, 60_000);

  it('stops at once, with exit code 0, on SIGTERM while it waits', async () => {
    const redis = await redisServerProcess();
    const host = await startStandaloneProcess({ NOTIFY_STORAGE: redis.url }, { until: 'listening' });
    hosts.push(host);
    await host.next((line) => line.message === 'storage not reachable; retrying');
    expect(await host.stop()).toBe(0);
    expect(host.lines.map((line) => line.message)).toContain('stopped');
  });

  it('never logs the password of the storage URL', async () => {
    const redis = await redisServerProcess();
    const url = redis.url.replace('redis://', 'redis://app:s3cret-pass@');
    const redacted = redis.url.replace('redis://', 'redis://app:***@');
    const { code, lines } = await runToExit({ NOTIFY_STORAGE: url, NOTIFY_WAIT_FOR_STORAGE: '2' });
    expect(code).toBe(1);
    expect(JSON.stringify(lines)).not.toContain('s3cret-pass');
    expect(lines.find((line) => line.level === 'warn')?.storage).toBe(redacted);
    expect(String(lines.find((line) => line.level === 'error')?.error)).toContain(redacted);
  }, 30_000);

  it('stops at once, exit code 1, on what waiting does not mend: a refused password or database, a malformed URL', async () => {
    const redis = await redisServerProcess();
    servers.push(redis);
    await redis.start();
    const port = new URL(redis.url).port;
    for (const [storage, said] of [
      [`redis://app:s3cret-pass@127.0.0.1:${port}`, /refused the setting: WRONGPASS/],
      [`redis://127.0.0.1:${port}/99`, /refused the setting: ERR DB index is out of range/],
      [`redis://127.0.0.1:${port}/db`, /the path of a redis:\/\/ URL is a database number/],
      [`redis://127.0.0.1:${port}/?db=3`, /a redis:\/\/ URL takes no query, which the driver ignores/],
      // A password with an unencoded / reads as a host and a path.
      ['redis://:p@ss/word@127.0.0.1:6379', /the path of a redis:\/\/ URL is a database number/],
      ['redis://127.0.0.1:abc', /NOTIFY_STORAGE is no valid URL/],
      [
        `redis://:s3cret-pass%zz@127.0.0.1:${port}`,
        /NOTIFY_STORAGE is no URL the driver reads: .*URI malformed/,
      ],
      [
        `redis://127.0.0.1:${port}/10000000000000000000000`,
        /the path of a redis:\/\/ URL is a database number/,
      ],
      // The MongoDB driver reads what follows the first @ as the host.
      [
        'mongodb://app:s3cret-pass@word@127.0.0.1:27017/x',
        /a password with @, \/ or : must be percent-encoded/,
      ],
      ['mongodb://app:p@ss/word@127.0.0.1:27017/x', /a password with @, \/ or : must be percent-encoded/],
      [
        'mongodb://app:s3cret-pass/x@127.0.0.1:27017/x',
        /no URL the driver reads: Password contains unescaped/,
      ],
      ['mongodb://127.0.0.1:27017/x?foo=bar', /no URL the driver reads: option foo is not supported/],
    ] as const) {
      const started = Date.now();
      const run = await runToExit({ NOTIFY_STORAGE: storage });
      expect(Date.now() - started, storage).toBeLessThan(10_000);
      expectStoppedAtOnce(run, said, storage);
      expect(JSON.stringify(run.lines), storage).not.toMatch(/s3cret-pass|ss\/word/);
    }
  }, 120_000);

  // A frozen server holds a command in flight (the due work's look at the store) until the storage
  // gives up on its reply, after 5 s: the stop waits for that, not for the shutdown timeout (25 s).
  it.each([
    [
      'down',
      async (redis: RedisServerProcess, host: StandaloneProcess) => {
        await redis.stop();
        await host.next((line) => line.message === 'redis connection lost; reconnecting');
      },
      5_000,
    ],
    ['frozen, its connections open', async (redis: RedisServerProcess) => redis.freeze(), 10_000],
  ])(
    'stops with exit code 0 on SIGTERM while Redis is %s after the start',
    async (_state, fail, withinMs) => {
      const redis = await redisServerProcess();
      servers.push(redis);
      await redis.start();
      const host = await startStandaloneProcess({ NOTIFY_STORAGE: redis.url });
      hosts.push(host);
      await fail(redis, host);
      const started = Date.now();
      expect(await host.stop()).toBe(0);
      // Where QUIT waited for a server that did not answer, until the shutdown timeout (25 s).
      expect(Date.now() - started).toBeLessThan(withinMs);
      expect(host.lines.map((line) => line.message)).toContain('stopped');
    },
    60_000,
  );

  it('stops at once, exit code 1, on a Redis that wants a password the URL does not give', async () => {
    const redis = await redisServerProcess();
    servers.push(redis);
    await redis.start();
    const admin = createClient({ url: redis.url });
    await admin.connect();
    await admin.configSet('requirepass', 's3cret-pass');
    admin.destroy();
    const started = Date.now();
    const run = await runToExit({ NOTIFY_STORAGE: redis.url });
    expect(Date.now() - started).toBeLessThan(10_000);
    expectStoppedAtOnce(run, /refused the setting: NOAUTH/, redis.url);
  }, 30_000);

  it('waits out a storage lost while it loads the seed, rather than fail the start', async () => {
    const redis = await redisServerProcess();
    servers.push(redis);
    await redis.start();
    // Users with passwords, whose hashing takes a few seconds: the storage is lost meanwhile.
    const seedFile = join(mkdtempSync(join(tmpdir(), 'seed-')), 'seed.json');
    const users = Array.from({ length: 12 }, (_, index) => ({
      email: `user${index}@acme.test`,
      name: `User ${index}`,
      role: 'member',
      password: `password of user ${index}`,
    }));
    writeFileSync(seedFile, JSON.stringify({ organizations: [{ id: 'acme', name: 'Acme', users }] }));
    const host = await startStandaloneProcess(
      { NOTIFY_STORAGE: redis.url, NOTIFY_SEED: seedFile },
      { until: 'listening' },
    );
    hosts.push(host);
    for (;;) {
      const details = ((await (await health(host.base)).json()) as { details?: string }).details ?? '';
      if (details.includes('hashing the passwords')) break;
      expect(host.lines.map((line) => line.message)).not.toContain('ready');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    redis.freeze();
    await host.next((line) => line.message === 'storage not reachable; retrying', 20_000);
    redis.thaw();
    await host.next((line) => line.message === 'ready', 60_000);
    expect(host.lines.map((line) => line.message)).not.toContain('could not start');
    expect((await health(host.base)).status).toBe(200);
  }, 90_000);

  it('names HOST and PORT when it cannot listen there', async () => {
    const { code, lines } = await runToExit({ HOST: 'no-such-host.invalid' });
    expect(code).toBe(1);
    expect(String(lines.find((line) => line.level === 'error')?.error)).toMatch(
      /^cannot listen on HOST no-such-host\.invalid, PORT 0: /,
    );
  }, 30_000);

  it('says a seed in error at once, while storage is still unreachable', async () => {
    const redis = await redisServerProcess();
    const twice = join(mkdtempSync(join(tmpdir(), 'seed-')), 'seed.json');
    const acme = { id: 'acme', name: 'Acme', users: [] };
    writeFileSync(twice, JSON.stringify({ organizations: [acme, acme] }));
    for (const [seed, said] of [
      ['/nonexistent/seed.json', /NOTIFY_SEED: \/nonexistent\/seed\.json could not be read/],
      [twice, /is no valid seed: .*this organization id is already given at organizations\[0\]\.id/s],
    ] as const) {
      expectStoppedAtOnce(await runToExit({ NOTIFY_STORAGE: redis.url, NOTIFY_SEED: seed }), said, seed);
    }
  }, 30_000);

  it('gives up after --wait-for-storage seconds with a clear error line and exit code 1', async () => {
    const redis = await redisServerProcess();
    const { code, lines } = await runToExit({ NOTIFY_STORAGE: redis.url }, ['--wait-for-storage', '1']);
    expect(code).toBe(1);
    const failure = lines.find((line) => line.level === 'error');
    expect(failure?.message).toBe('could not start');
    expect(String(failure?.error)).toMatch(
      new RegExp(`^storage ${redis.url} not reachable within 1 s \\(--wait-for-storage\\): .*ECONNREFUSED`),
    );
  }, 30_000);

  it('gives up within its budget on a storage that takes the connection and never answers', async () => {
    // A frozen Redis, or a proxy whose backend is down: the connection opens, no reply ever comes.
    const silent = createServer((socket) => {
      sockets.push(socket);
    });
    const sockets: Socket[] = [];
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const url = `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const started = Date.now();
      const { code, lines } = await runToExit({ NOTIFY_STORAGE: url, NOTIFY_WAIT_FOR_STORAGE: '3' });
      expect(code).toBe(1);
      expect(Date.now() - started).toBeLessThan(12_000);
      const failure = lines.find((line) => line.level === 'error');
      expect(String(failure?.error)).toMatch(
        new RegExp(
          `^storage ${url} not reachable within 3 s \\(NOTIFY_WAIT_FOR_STORAGE\\): no answer within`,
        ),
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  }, 30_000);

  it('waits while Redis takes connections but refuses writes (out of memory), saying so, then serves', async () => {
    const redis = await redisServerProcess();
    servers.push(redis);
    await redis.start();
    const admin = createClient({ url: redis.url });
    await admin.connect();
    try {
      await admin.sendCommand(['CONFIG', 'SET', 'maxmemory', '1', 'maxmemory-policy', 'noeviction']);
      const host = await startStandaloneProcess({ NOTIFY_STORAGE: redis.url }, { until: 'listening' });
      hosts.push(host);
      const retry = await host.next((line) => line.message === 'storage not reachable; retrying');
      expect(String(retry.error)).toMatch(/^Storage is temporarily unavailable \(OOM /);
      expect((await health(host.base)).status).toBe(503);
      await admin.sendCommand(['CONFIG', 'SET', 'maxmemory', '0']);
      await host.next((line) => line.message === 'ready', 30_000);
      expect((await send(host.base)).status).toBe(200);
    } finally {
      admin.destroy();
    }
  }, 60_000);

  it('takes the budget from NOTIFY_WAIT_FOR_STORAGE too, for MongoDB as for Redis', async () => {
    const redis = await redisServerProcess();
    const mongoUrl = `mongodb://127.0.0.1:${new URL(redis.url).port}/notify`;
    const { code, lines } = await runToExit({ NOTIFY_STORAGE: mongoUrl, NOTIFY_WAIT_FOR_STORAGE: '1' });
    expect(code).toBe(1);
    expect(String(lines.find((line) => line.level === 'error')?.error)).toMatch(
      `storage ${mongoUrl} not reachable within 1 s`,
    );
  }, 30_000);

  it('refuses a budget that is not a number of seconds', async () => {
    const { code, lines } = await runToExit({ NOTIFY_WAIT_FOR_STORAGE: 'soon' });
    expect(code).toBe(1);
    expect(String(lines.find((line) => line.level === 'error')?.error)).toMatch(/NOTIFY_WAIT_FOR_STORAGE/);
  }, 30_000);
});
