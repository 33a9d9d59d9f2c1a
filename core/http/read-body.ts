import { isNotifyError, NotifyError } from '../errors.js';

/** The largest body the API accepts (docs/http-api.md#error-reference). */
export const maxBodyBytes = 64 * 1024;

const tooLarge = () =>
  new NotifyError('payload_too_large', `Request body exceeds the limit of ${maxBodyBytes} bytes (64 KiB)`);

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

async function collect(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
    size += bytes.byteLength;
    if (size > maxBodyBytes) throw tooLarge();
    chunks.push(bytes);
  }
  return chunks;
}

/**
 * Reads a raw body, refusing it as soon as it grows past the limit rather than buffering all of it.
 * @throws NotifyError `payload_too_large`; IncompleteBodyError when the stream fails.
 */
export async function readBody(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | null,
  declaredLength: string | undefined,
): Promise<Uint8Array> {
  if (declaredLength !== undefined && Number(declaredLength) > maxBodyBytes) throw tooLarge();
  if (!body) return new Uint8Array();
  let chunks: Uint8Array[];
  try {
    chunks = await collect(body);
  } catch (error) {
    if (isNotifyError(error)) throw error;
    throw new IncompleteBodyError(error);
  }
  const all = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}
