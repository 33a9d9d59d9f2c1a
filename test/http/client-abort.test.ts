import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { capturingLogger } from '../support/capturing-logger.js';
import { expectOk, inbox, plainBody, send } from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

/** Sends the headers and part of a body of `POST <path>`, then drops the connection. */
async function abortMidUpload(origin: string, path: string, key: string): Promise<void> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user_emails":["bob@acme.test"],',
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.destroy();
}

/** Waits until `condition` holds; fails the test when it never does. */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe.each(hostKinds)('a client that disconnects mid-upload (%s)', (kind) => {
  let host: TestHost;
  afterEach(async () => {
    await host.close();
  });

  it('is logged once at debug level, without a stack trace, and the service goes on', async () => {
    const logger = capturingLogger();
    host = await startTestHost(kind, { logger });
    await abortMidUpload(host.origin, '/chat/api/notify', host.keys.alice);
    await eventually(() => logger.entries.length > 0);
    // Let anything else the abort might log arrive too.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(logger.entries.map((entry) => entry.level)).toEqual(['debug']);
    expect(JSON.stringify(logger.entries)).not.toMatch(/\bat .+:\d+:\d+/);
    expectOk(await send(host, plainBody()));
    expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
  });
});
