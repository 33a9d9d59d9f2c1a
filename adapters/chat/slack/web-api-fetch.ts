import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import type { FetchFunction } from '@slack/web-api';
import { Agent, type Dispatcher, request } from 'undici';

/** What the Web API client hands a `fetch`, and what it reads of the answer. */
type FetchResponse = Awaited<ReturnType<FetchFunction>>;

/**
 * A post to Slack that failed once it was sent (it timed out, or the connection was cut before the
 * answer came): Slack may have posted the message, and posting it again could show it twice, so the
 * client must not retry it (`clients.ts`).
 */
export class PostOutcomeUnknownError extends Error {}

/**
 * A `429` the transport does not wait out: its `Retry-After` asks for longer than it waits, or it
 * came again after every wait allowed. Nothing was done, and the client must not retry it
 * (`clients.ts`), or every call to the workspace would pause that long.
 */
export class RateLimitedError extends Error {}

/** Codes of failures to connect: such a call never reached Slack, and may be made again. */
const neverSent = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The methods that post something new: calling one twice makes two of it. */
const posting = /\/chat\.postMessage$/;

/** Options of {@link webApiFetch}. */
export interface WebApiFetchOptions {
  /** Deadline for connecting, again for an answer's headers, and again for its whole body (ms; 0: none). */
  timeoutMs: number;
  /** Longest `Retry-After` of a `429` that is waited out (ms). */
  maxRetryAfterMs: number;
  /** How many `429`s of one call are waited out before it fails; 3 by default. */
  rateLimitRetries?: number;
  /** Told of each `429` about to be waited out, with the method called. */
  onRateLimited?: (retryAfterSeconds: number, url: string) => void;
}

/**
 * The `fetch` of the transport's Web API clients: undici's `request` on one keep-alive connection
 * pool, with a deadline of `timeoutMs` for connecting, again for the answer's headers, and again for
 * its whole body (0: none): undici's own body timeout bounds only the pause between two chunks, which
 * an answer trickling in a byte at a time never reaches.
 *
 * Node's own `fetch` (undici's WHATWG layer) costs several times the CPU of `request` per call
 * (web streams, a transferable `AbortSignal.timeout` per call), and a fan-out pays that once per
 * recipient on the event loop that serves the API. The Web API needs none of what it adds: every
 * call is a small form-encoded POST answered by a small JSON body (the transport uploads no files,
 * which the client would send as `FormData`). Redirects are not followed, and a body a proxy
 * compressed anyway is decompressed.
 *
 * A `429` is waited out here, for its `Retry-After` and no longer, and the call made again: the
 * client would add the pause of its next retry to that wait (1 to 2 s for the first), and count the
 * `429` among the retries meant for failures. Meanwhile every call of the same workspace (bot token)
 * waits too, as the client pauses its queue; a `Retry-After` below a second waits a second. One that
 * asks for longer than `maxRetryAfterMs`, or comes again after `rateLimitRetries` waits of one
 * attempt, fails with {@link RateLimitedError}.
 */
export function webApiFetch(options: WebApiFetchOptions): FetchFunction {
  const { timeoutMs, maxRetryAfterMs, rateLimitRetries = 3, onRateLimited } = options;
  const dispatcher = new Agent({
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  /** Until when (`performance.now()`) the calls of a workspace wait, by their `Authorization` header. */
  const pausedUntil = new Map<string, number>();

  const attempt: FetchFunction = async (url, init = {}) => {
    const body = init.body ?? '';
    if (typeof body !== 'string') {
      throw new TypeError('The Slack transport makes form-encoded calls only, no uploads');
    }
    let answer: Dispatcher.ResponseData;
    let bytes: Buffer;
    try {
      answer = await request(url, {
        method: init.method ?? 'POST',
        headers: init.headers ?? {},
        body,
        dispatcher,
        ...(init.signal ? { signal: init.signal } : {}),
      });
      const status = answer.statusCode;
      if (status >= 300 && status < 400) {
        // Dropped, not read: reading it to keep the connection would give it no deadline of its own.
        // Destroying emits the stream's abort as an error, which nothing else listens for.
        answer.body.on('error', () => undefined).destroy();
        throw new TypeError(`Slack Web API answered a redirect (${status}), which is not followed`);
      }
      // Read in full before answering: a connection cut mid-body rejects here, as a network failure
      // the client retries.
      bytes = await decoded(answer, await wholeBody(answer, timeoutMs));
    } catch (error) {
      const failure = timedOut(error)
        ? new Error(`Slack Web API call timed out after ${timeoutMs} ms`, { cause: error })
        : error;
      const code = (error as { code?: unknown } | null)?.code;
      if (posting.test(String(url)) && !(typeof code === 'string' && neverSent.has(code))) {
        throw new PostOutcomeUnknownError(
          `Slack may have posted the message, so it is not posted again: ${String(failure)}`,
          { cause: failure },
        );
      }
      throw failure;
    }
    return fetchResponse(String(url), answer, bytes);
  };

  return async (url, init = {}) => {
    const workspace = authorizationOf(init.headers);
    for (let waits = 0; ; waits += 1) {
      const until = pausedUntil.get(workspace) ?? 0;
      if (until > performance.now()) await sleep(until - performance.now());
      const response = await attempt(url, init);
      if (response.status !== 429) return response;
      // Read as the client reads it (`parseRetryHeaders`). A date is no number to it, and it gives
      // up on such a 429 at once: it is answered as it is.
      const seconds = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
      if (Number.isNaN(seconds)) return response;
      if (seconds * 1000 > maxRetryAfterMs) {
        throw new RateLimitedError(
          `Slack answered 429 and asked to wait ${seconds} s, longer than the transport waits (retry.maxRetryAfterMs: ${maxRetryAfterMs} ms): not tried again`,
        );
      }
      if (waits >= rateLimitRetries) {
        throw new RateLimitedError(
          `Slack answered 429 again after ${waits} waits (retry.retries: ${rateLimitRetries}): not tried again`,
        );
      }
      onRateLimited?.(seconds, String(url));
      // At least a second (the pause of the client's first retry, which a `Retry-After: 0` got
      // before), and no longer than the longest wait.
      const resume = performance.now() + Math.min(Math.max(seconds * 1000, 1000), maxRetryAfterMs);
      pausedUntil.set(workspace, Math.max(resume, pausedUntil.get(workspace) ?? 0));
      await sleep(resume - performance.now());
      // Unless a later 429 paused the workspace for longer (a timer may also wake a moment early).
      if ((pausedUntil.get(workspace) ?? 0) <= resume) pausedUntil.delete(workspace);
    }
  };
}

/** The `Authorization` header of a call: which workspace (bot token) it is made for. */
function authorizationOf(headers: Record<string, string> | undefined): string {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'authorization') return value;
  }
  return '';
}

/** Decoders of the encodings a proxy on the way might compress with, though none is asked for. */
const decoders: Readonly<Record<string, (body: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

function decoded(answer: Dispatcher.ResponseData, body: Buffer): Promise<Buffer> {
  const raw = answer.headers['content-encoding'];
  const encoding = (Array.isArray(raw) ? raw.join(',') : raw)?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return Promise.resolve(body);
  const decode = decoders[encoding];
  if (decode === undefined) {
    return Promise.reject(new Error(`Slack Web API answered an unknown content-encoding: ${encoding}`));
  }
  return decode(body);
}

/** An answer's body that did not arrive in full within the deadline. */
class BodyDeadlineError extends Error {}

/** The answer's body, read in full within `timeoutMs` (0: no deadline). */
async function wholeBody(answer: Dispatcher.ResponseData, timeoutMs: number): Promise<Buffer> {
  if (timeoutMs === 0) return Buffer.from(await answer.body.arrayBuffer());
  const deadline = setTimeout(() => answer.body.destroy(new BodyDeadlineError()), timeoutMs);
  try {
    return Buffer.from(await answer.body.arrayBuffer());
  } finally {
    clearTimeout(deadline);
  }
}

const timedOut = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    error instanceof BodyDeadlineError ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  );
};

function fetchResponse(url: string, answer: Dispatcher.ResponseData, body: Buffer): FetchResponse {
  const { statusCode: status, statusText, headers } = answer;
  const value = (name: string): string | null => {
    const raw = headers[name.toLowerCase()];
    if (raw === undefined) return null;
    return Array.isArray(raw) ? raw.join(', ') : raw;
  };
  const text = async (): Promise<string> => body.toString('utf8');
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText,
    url,
    headers: {
      get: value,
      entries: () => Object.keys(headers).map((name): [string, string] => [name, value(name) ?? '']),
    },
    arrayBuffer: async () => new Uint8Array(body).buffer,
    json: async () => JSON.parse(await text()),
    text,
  };
}
