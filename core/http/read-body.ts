import { NotifyError } from '../errors.js';

/** The largest body the API accepts (DECISIONS §1). */
export const maxBodyBytes = 64 * 1024;

const tooLarge = () =>
  new NotifyError('payload_too_large', `Request body exceeds the limit of ${maxBodyBytes} bytes (64 KiB)`);

/** Reads a raw body, refusing it as soon as it grows past the limit rather than buffering all of it. */
export async function readBody(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | null,
  declaredLength: string | undefined,
): Promise<Uint8Array> {
  if (declaredLength !== undefined && Number(declaredLength) > maxBodyBytes) throw tooLarge();
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
    size += bytes.byteLength;
    if (size > maxBodyBytes) throw tooLarge();
    chunks.push(bytes);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}
