import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exitOf, type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

const hosts: StandaloneProcess[] = [];
afterEach(() => {
  for (const host of hosts.splice(0)) if (host.child.exitCode === null) host.child.kill('SIGKILL');
});

const start = async (environment: Record<string, string> = {}) => {
  const host = await startStandaloneProcess(environment);
  hosts.push(host);
  return host;
};

/** Sends a CONNECT with more bytes behind it, and resets the connection at once. */
const connectAndReset = (port: number): Promise<void> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n${'z'.repeat(200_000)}`);
      socket.resetAndDestroy();
      setTimeout(resolve, 5);
    });
    socket.on('error', () => resolve());
  });

describe('the standalone service and CONNECT, whose socket Node hands over whole', () => {
  it('keeps running when CONNECT clients reset their connections while it answers', async () => {
    const host = await start();
    for (let i = 0; i < 100; i += 1) await connectAndReset(host.port);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(host.child.exitCode).toBeNull();
    expect((await fetch(`${host.base}/healthz`)).status).toBe(200);
  });

  it('stops at once, exit code 0, while a CONNECT client keeps its side of the connection open', async () => {
    const host = await start({ NOTIFY_SHUTDOWN_TIMEOUT_MS: '8000' });
    const client = connect({ port: host.port, host: '127.0.0.1', allowHalfOpen: true });
    client.on('error', () => undefined);
    client.resume();
    client.write('CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    host.child.kill('SIGTERM');
    expect(await exitOf(host.child, 15_000)).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    client.destroy();
  });
});
