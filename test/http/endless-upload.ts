import { connect } from 'node:net';

/**
 * Writes `head` (a request line and headers announcing a chunked body) to `origin`, then 64 KiB
 * chunks, paced, that never end; answers what the server sent once its answer's head has come (or
 * the connection closed, or `waitMs` passed). A server that waited for the whole body would answer
 * nothing.
 */
export function endlessUpload(origin: string, head: string, waitMs = 3_000): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunk = `10000\r\n${' '.repeat(0x10000)}\r\n`;
    let received = '';
    let open = true;
    const finish = () => {
      if (!open) return;
      open = false;
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(finish, waitMs);
    const pump = (): void => {
      if (open) socket.write(chunk, () => setTimeout(pump, 2));
    };
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      received += text;
      if (received.includes('\r\n\r\n')) finish();
    });
    // Writing into a connection the server closed fails (EPIPE, ECONNRESET); the close follows.
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(head);
    pump();
  });
}
