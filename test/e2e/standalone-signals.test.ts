import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';
import { interactiveBody } from '../support/api-requests.js';
import {
  exitOf,
  type StandaloneProcess,
  startStandaloneProcess,
  watchLog,
} from '../support/standalone-process.js';

const started: StandaloneProcess[] = [];
const groups: number[] = [];

/** Whether any process of the group is still alive. */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

afterEach(() => {
  for (const host of started.splice(0)) if (host.child.exitCode === null) host.child.kill('SIGKILL');
  for (const pgid of groups.splice(0)) if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
});

async function start(environment: Record<string, string> = {}) {
  const host = await startStandaloneProcess(environment);
  started.push(host);
  return host;
}

const portRefused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

async function untilGone(pgid: number): Promise<boolean> {
  for (let i = 0; i < 100 && groupAlive(pgid); i += 1) await new Promise((r) => setTimeout(r, 100));
  return !groupAlive(pgid);
}

/**
 * A send whose headers the server has taken (it answered `100 Continue`) but whose body is still
 * to come: an in-flight request. `finish` sends the body and resolves with the answer.
 */
async function inFlightSend(base: string) {
  const body = JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Sent while stopping' });
  const outgoing = request(`${base}/api/notify`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-api-key': demoApiKey,
      expect: '100-continue',
    },
  });
  const answer = new Promise<{ status: number; connection: string | undefined; body: string }>(
    (resolve, reject) => {
      outgoing.once('error', reject);
      outgoing.once('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, body: text }),
        );
      });
    },
  );
  answer.catch(() => undefined);
  await once(outgoing, 'continue');
  return {
    finish: () => {
      outgoing.end(body);
      return answer;
    },
  };
}

describe('stopping the standalone host', () => {
  it.each([
    { signal: 'SIGTERM', to: 'npm', target: (pgid: number) => pgid },
    { signal: 'SIGINT', to: 'npm', target: (pgid: number) => pgid },
    {
      signal: 'SIGINT',
      to: 'the whole process group, as Ctrl-C in a terminal',
      target: (pgid: number) => -pgid,
    },
  ] as const)(
    '`npm start` stops cleanly on $signal sent to $to: the port is freed and no process of the tree is left',
    async ({ signal, target }) => {
      const npm = spawn('npm', ['start'], {
        detached: true,
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const pgid = npm.pid as number;
      groups.push(pgid);
      const log = watchLog(npm);
      const ready = await log.next((line) => line.message === 'ready', 60_000);
      const port = Number(ready.port);
      expect(await portRefused(port)).toBe(false);

      process.kill(target(pgid), signal);
      await exitOf(npm);
      expect(await untilGone(pgid)).toBe(true);
      expect(await portRefused(port)).toBe(true);
      expect(log.lines.map((line) => line.message)).toEqual(expect.arrayContaining(['stopping', 'stopped']));
      expect(log.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    },
    90_000,
  );

  it('finishes a request in flight, tells its client to close the connection, then exits 0', async () => {
    const host = await start();
    const send = await inFlightSend(host.base);
    host.child.kill('SIGTERM');
    await host.next((line) => line.message === 'stopping');
    const answer = await send.finish();
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'ok' });
    expect(answer.connection).toBe('close');
    expect(await exitOf(host.child)).toBe(0);
    expect(host.lines.map((line) => line.message)).toContain('stopped');
  });

  it('does not wait for connections that sent nothing, or only part of their headers', async () => {
    const host = await start({ NOTIFY_SHUTDOWN_TIMEOUT_MS: '20000' });
    const silent = connect(host.port, '127.0.0.1');
    const partial = connect(host.port, '127.0.0.1');
    for (const socket of [silent, partial]) {
      socket.on('error', () => undefined);
      await once(socket, 'connect');
    }
    partial.write('GET /healthz HTTP/1.1\r\nHo');
    const stoppedAt = Date.now();
    host.child.kill('SIGTERM');
    expect(await exitOf(host.child, 10_000)).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    expect(host.lines.map((line) => line.message)).toContain('stopped');
  });

  it('closes the connection of an upload that stalls, half NOTIFY_SHUTDOWN_TIMEOUT_MS on, and exits 0', async () => {
    const host = await start({ NOTIFY_SHUTDOWN_TIMEOUT_MS: '4000' });
    const stalled = connect(host.port, '127.0.0.1');
    stalled.on('error', () => undefined);
    await once(stalled, 'connect');
    stalled.write(
      `POST /api/notify HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${demoApiKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    const closed = once(stalled, 'close');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stoppedAt = Date.now();
    host.child.kill('SIGTERM');
    expect(await exitOf(host.child, 10_000)).toBe(0);
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - stoppedAt).toBeLessThan(3_900);
    await closed;
    expect(host.lines.map((line) => line.message)).toContain('stopped');
  });

  it('exits after NOTIFY_SHUTDOWN_TIMEOUT_MS when work in flight never finishes, saying so', async () => {
    // A callback receiver that takes the request and never answers: the attempt holds the stop.
    const receiver = createServer(() => undefined);
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const received = once(receiver, 'request');
    try {
      const host = await start({ NOTIFY_SHUTDOWN_TIMEOUT_MS: '500', NOTIFY_ALLOW_INSECURE_CALLBACKS: '1' });
      const headers = { 'content-type': 'application/json', 'x-api-key': demoApiKey };
      const sent = await fetch(`${host.base}/api/notify`, {
        method: 'POST',
        headers,
        body: interactiveBody(
          ['carol@acme.test'],
          5,
          'Shift tonight?',
          `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        ),
      });
      expect(sent.status).toBe(200);
      const [message] = (await (
        await fetch(`${host.base}/inbox/api/messages?email=carol@acme.test`)
      ).json()) as { id: string }[];
      const clicked = await fetch(`${host.base}/inbox/api/messages/${message?.id}/click`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"value":"yes"}',
      });
      expect(clicked.status).toBe(200);
      await received;
      host.child.kill('SIGTERM');
      expect(await exitOf(host.child, 10_000)).toBe(1);
      expect(host.lines.find((line) => line.level === 'error')?.message).toMatch(/500 ms/);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  });

  it('exits at once on a second signal (one that is not the echo of the first)', async () => {
    const host = await start({ NOTIFY_SHUTDOWN_TIMEOUT_MS: '60000' });
    await inFlightSend(host.base);
    host.child.kill('SIGTERM');
    await host.next((line) => line.message === 'stopping');
    // Signals within a second of the first are taken as the same one, delivered twice.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    host.child.kill('SIGINT');
    expect(await exitOf(host.child, 10_000)).toBe(1);
    expect(host.lines.map((line) => line.message)).toContain('second signal; exiting now');
  });
});
