import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A DNS server on 127.0.0.1 standing in for the Internet's (none is reachable here), speaking the
 * wire protocol over UDP: A and AAAA records from `records`, NXDOMAIN for other names, and no answer
 * at all for the names in `silent` (a server that never answers, as an attacker's may).
 */
export async function fakeDns(
  records: Record<string, { a?: string[]; aaaa?: string[] }>,
  silent: readonly string[] = [],
): Promise<{ server: string; queries: string[]; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, from) => {
    const { name, type, end } = question(query);
    queries.push(name);
    if (silent.includes(name)) return;
    const entry = records[name];
    const values =
      entry === undefined ? [] : type === 1 ? (entry.a ?? []) : type === 28 ? (entry.aaaa ?? []) : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    // QR, RD and RA set; RCODE 3 (NXDOMAIN) for a name without records.
    header.writeUInt16BE(entry === undefined ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(values.length, 6);
    const answers = values.map((value) => {
      const data = Buffer.from(ipaddr.parse(value).toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, end), ...answers]), from.port, from.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** The name and type of a query's one question, and where the question ends. */
function question(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  for (let length = query[at] ?? 0; length > 0; length = query[at] ?? 0) {
    labels.push(
      query
        .subarray(at + 1, at + 1 + length)
        .toString('ascii')
        .toLowerCase(),
    );
    at += 1 + length;
  }
  return { name: labels.join('.'), type: query.readUInt16BE(at + 1), end: at + 5 };
}
