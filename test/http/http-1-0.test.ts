import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { plainBody } from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

/** Sends `request` as written and reads everything until the server closes the connection. */
function exchange(origin: string, request: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      received += text;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(request);
  });
}

/** The status, the `Content-Length` and the body of an answer read whole. */
function parse(answer: string): { status: number; length: string | undefined; body: string } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const length = /^content-length: *(\d+)$/im.exec(head)?.[1];
  return { status: Number(head.split(' ')[1]), length, body };
}

describe.each(hostKinds)('HTTP/1.0 clients (%s)', (kind) => {
  let host: TestHost;
  afterEach(async () => {
    await host.close();
  });

  it('get the length of every answer, a success and an error alike', async () => {
    host = await startTestHost(kind, { mount: '/chat' });
    const body = JSON.stringify(plainBody());
    const sent = parse(
      await exchange(
        host.origin,
        `POST /chat/api/notify HTTP/1.0\r\nHost: x\r\nX-API-Key: ${host.keys.alice}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
    expect(sent.status).toBe(200);
    expect(sent.length).toBe(String(Buffer.byteLength(sent.body)));
    const refused = parse(
      await exchange(host.origin, 'GET /chat/api/notify/status/req_x HTTP/1.0\r\nHost: x\r\n\r\n'),
    );
    expect(refused.status).toBe(401);
    expect(refused.length).toBe(String(Buffer.byteLength(refused.body)));
  });
});
