import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the receiver does with one request. */
export type ReceiverBehaviour =
  | { status: number; headers?: Record<string, string> }
  /** Never answers (the sender's timeout must fire). */
  | { hang: true };

/** One request the receiver got. */
export interface ReceivedCallback {
  headers: Record<string, string>;
  body: string;
  host: string;
  answered: number | null;
}

/** A local HTTP endpoint standing in for a caller's callback receiver. */
export interface CallbackReceiver {
  url(path?: string, host?: string): string;
  port: number;
  received: ReceivedCallback[];
  /** TCP connections accepted, whatever came over them. */
  connections(): number;
  /** Behaviours for the next requests, in order; after them it answers 204. */
  plan(...behaviours: ReceiverBehaviour[]): void;
  /** Stops listening (connections are refused) until `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1. */
export async function startReceiver(): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const queue: ReceiverBehaviour[] = [];
  const hanging: ServerResponse[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const behaviour = queue.shift() ?? { status: 204 };
      const entry: ReceivedCallback = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
        host: req.headers.host ?? '',
        answered: 'hang' in behaviour ? null : behaviour.status,
      };
      received.push(entry);
      if ('hang' in behaviour) {
        hanging.push(res);
        return;
      }
      res.writeHead(behaviour.status, behaviour.headers ?? {}).end();
    });
  };
  let connections = 0;
  const listen = () => {
    const created = createServer(handler);
    created.on('connection', () => {
      connections += 1;
    });
    return created;
  };
  let server: Server = listen();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const stop = async () => {
    for (const res of hanging.splice(0)) res.destroy();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  };
  return {
    port,
    received,
    connections: () => connections,
    url: (path = '/hook', host = '127.0.0.1') => `http://${host}:${port}${path}`,
    plan: (...behaviours) => {
      queue.push(...behaviours);
    },
    pause: stop,
    async resume() {
      server = listen();
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    close: stop,
  };
}
