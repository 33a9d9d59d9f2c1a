import { isNotifyError, NotifyError } from '../errors.js';

/** The largest body the API accepts (docs/http-api.md#error-reference), and any route by default. */
export const maxBodyBytes = 64 * 1024;

const tooLarge = (limit: number) =>
  new NotifyError(
    'payload_too_large',
    `Request body exceeds the limit of ${limit} bytes (${Math.floor(limit / 1024)} KiB)`,
  );

/**
 * The body stream failed before its end: the client went away mid-upload (Node reports `aborted`,
 * `ECONNRESET`). Routine on the Internet, so it is no server error; the answer reaches nobody.
 */
export class IncompleteBodyError extends Error {
  override readonly name = 'IncompleteBodyError';
  /** What the stream reported, e.g. `ECONNRESET`. */
  readonly reason: string;

  constructor(cause: unknown) {
    super('The request body ended before it was complete', { cause });
    const code = (cause as { code?: unknown } | null)?.code;
    this.reason = typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
  }
}

type BodySource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** The part of a Node readable stream (an `IncomingMessage`) that {@link collectStream} uses. */
interface ReadableBody {
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
  pause(): unknown;
}

const isReadable = (body: BodySource): body is BodySource & ReadableBody =>
  typeof (body as Partial<ReadableBody>).on === 'function' &&
  typeof (body as Partial<ReadableBody>).pause === 'function';

const toBytes = (chunk: Uint8Array | string): Uint8Array =>
  typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;

/**
 * Collects a Node stream through its events: its async iterator costs a promise and a wrapper
 * stream per request, more than the rest of reading a small body.
 */
function collectStream(body: ReadableBody, limit: number): Promise<Uint8Array[]> {
  if (body.readableEnded) return Promise.resolve([]);
  if (body.destroyed) return Promise.reject(new Error('The body stream was destroyed before it was read'));
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      // The rest flows on, unread, until the answer has gone out: destroying the stream here would
      // take the connection, and the answer, with it.
      settled = true;
      reject(error);
    };
    body.on('data', (chunk) => {
      if (settled) return;
      const bytes = toBytes(chunk);
      size += bytes.byteLength;
      if (size > limit) fail(tooLarge(limit));
      else chunks.push(bytes);
    });
    body.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks);
    });
    body.on('error', fail);
    // Destroyed before its end without an error (the client went away): Node's `aborted`.
    body.on('close', () => {
      if (!body.readableEnded) fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
  });
}

/** Collects a stream through its events, anything else through its iterator. */
const collect = (body: BodySource, limit: number): Promise<Uint8Array[]> =>
  isReadable(body) ? collectStream(body, limit) : collectIterable(body, limit);

async function collectIterable(body: BodySource, limit: number): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = toBytes(chunk);
    size += bytes.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(bytes);
  }
  return chunks;
}

/**
 * Reads a raw body, refusing it as soon as it grows past `limit` (bytes) rather than buffering all
 * of it. Rejects with NotifyError `payload_too_large`, or IncompleteBodyError when the stream fails.
 */
export function readBody(
  body: BodySource | null,
  declaredLength: string | undefined,
  limit = maxBodyBytes,
): Promise<Uint8Array> {
  if (declaredLength !== undefined && Number(declaredLength) > limit) return Promise.reject(tooLarge(limit));
  if (!body) return Promise.resolve(new Uint8Array());
  // Every send reads a body: its chunks are joined without an asynchronous step of their own.
  return collect(body, limit).then(joined, (error: unknown) => {
    if (isNotifyError(error)) throw error;
    throw new IncompleteBodyError(error);
  });
}

/** The chunks of a body as one array of bytes: the only chunk itself, as a small body comes. */
function joined(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const all = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}
