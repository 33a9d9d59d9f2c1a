import { request } from 'node:http';
import type { Answer } from './client.js';

/** A request written as given: the path is not resolved (fetch would), and a header may repeat. */
export interface RawRequest {
  method?: string;
  /** The request target exactly as sent, e.g. `//evil.example/api/notify`. */
  path: string;
  /** A list value sends the header once per entry, on separate lines. */
  headers?: Record<string, string | string[]>;
  body?: string;
}

/** Sends a request to `origin` (`http://127.0.0.1:<port>`) byte for byte and reads the whole answer. */
export function rawRequest(origin: string, raw: RawRequest): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { hostname, port, method: raw.method ?? 'GET', path: raw.path, headers: raw.headers ?? {} },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const entry of [value ?? []].flat()) headers.append(name, entry);
          }
          resolve({ status: response.statusCode ?? 0, headers, text, json });
        });
      },
    );
    outgoing.on('error', reject);
    // Headers sent on their own go out as latin1, byte for byte (no-break space is 0xA0); sent
    // together with a body they would take the body's UTF-8 encoding.
    outgoing.flushHeaders();
    outgoing.end(raw.body);
  });
}
