import { connect } from 'node:net';

/** What came back to an upload that never ends, and whether the server closed the connection. */
export interface EndlessUpload {
  /** Everything the server sent, as text. */
  received: string;
  /** True when the server ended the connection within `waitMs`; false when it read on. */
  closedByServer: boolean;
}

/**
 * Writes `head` (a request line and headers announcing a chunked body) to `origin`, then 64 KiB
 * chunks until the server answers, and waits at most `waitMs` in all for the server to close.
 */
export function endlessUpload(origin: string, head: string, waitMs = 3_000): Promise<EndlessUpload> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunk = `10000\r\n${' '.repeat(0x10000)}\r\n`;
    let received = '';
    let open = true;
    const finish = (closedByServer: boolean) => {
      if (!open) return;
      open = false;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received, closedByServer });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    let answered = false;
    // Paced: a server that closes with bytes unread resets the connection, and a client still
    // sending fast would lose the answer with it.
    const pump = (): void => {
      if (open && !answered) socket.write(chunk, () => setTimeout(pump, 2));
    };
    socket.setEncoding('utf8');
    // Once answered, it stops writing and waits: a server that keeps the connection open for the
    // rest of the body never closes it.
    socket.on('data', (text: string) => {
      answered = true;
      received += text;
    });
    // Writing into a connection the server closed fails (EPIPE, ECONNRESET); the close follows.
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
    socket.write(head);
    pump();
  });
}
