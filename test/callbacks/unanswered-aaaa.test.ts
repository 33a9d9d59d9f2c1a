import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../adapters/callbacks/index.js';
import { callbackSetup, interactive } from './callback-setup.js';

const port = 63531;
const publicV4 = [93, 184, 216, 34];

/**
 * A DNS server that answers every A query at once with {@link publicV4} and drops every AAAA query,
 * as some broken servers and middleboxes do.
 */
async function aaaaDroppingDns(): Promise<Socket> {
  const socket = createSocket('udp4');
  socket.on('message', (query, from) => {
    let at = 12;
    for (let length = query[at] ?? 0; length > 0; length = query[at] ?? 0) at += 1 + length;
    if (query.readUInt16BE(at + 1) === 28) return;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(1, 6);
    const record = Buffer.alloc(12);
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(1, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(60, 6);
    record.writeUInt16BE(4, 10);
    const answer = Buffer.concat([header, query.subarray(12, at + 5), record, Buffer.from(publicV4)]);
    socket.send(answer, from.port, from.address);
  });
  socket.bind(port, '127.0.0.1');
  await once(socket, 'listening');
  return socket;
}

let dns: Socket;
beforeEach(async () => {
  dns = await aaaaDroppingDns();
});
afterEach(async () => {
  await new Promise<void>((resolve) => dns.close(() => resolve()));
});

describe('a callback host whose AAAA query goes unanswered', () => {
  it('resolves to its A address well before the 5 s the check gives DNS', async () => {
    const resolver = createDnsResolver({ servers: [`127.0.0.1:${port}`] });
    const started = performance.now();
    expect(await resolver.resolve('hooks.example')).toEqual([publicV4.join('.')]);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('is accepted as a send’s callback_url', async () => {
    const setup = await callbackSetup({ resolver: createDnsResolver({ servers: [`127.0.0.1:${port}`] }) });
    const sent = await setup.send(interactive('https://hooks.example/hook'));
    expect(sent.status).toBe(200);
    await setup.notifier.stop();
  });
});
