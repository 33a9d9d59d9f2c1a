import { randomUUID } from 'node:crypto';
import {
  type AnswerShape,
  notificationSentShape,
  requestCreatedShape,
  requestStatusShape,
} from './answer-shapes.js';
import { clientSettings, waitSettings } from './client-settings.js';
import { NotifyClientError, type NotifyClientErrorInit, NotifyTimeoutError } from './errors.js';
import { setLongTimeout } from './long-timeout.js';
import { backoffDelay, parseRetryAfter, pause, timerSleep } from './retry.js';
import type {
  ClientOptions,
  NotificationSent,
  NotifyClient,
  NotifyRequestInput,
  RequestCreated,
  RequestStatus,
  SendOptions,
  Sleep,
  StatusOptions,
  WaitOptions,
} from './types.js';

/** Seconds to wait on a 429 that carries no `Retry-After`. */
const defaultRateLimitWaitSeconds = 1;

/**
 * The longest `Retry-After` a call waits out (10 minutes): a server that asks for more ends the call
 * with its error at once, whose `retryAfterSeconds` tells the caller when to try again.
 */
const longestRetryAfterSeconds = 600;

/** An attempt's answer, read whole. */
interface Answered {
  response: Response;
  text: string;
}

/** An attempt that got no whole answer: the network failed, or the attempt timed out. */
interface Lost {
  error: unknown;
  timedOut: boolean;
}

/**
 * The longest a send waits on its own attempt still running in the service (answered `409` after an
 * attempt of it timed out): a send that slow is Slack's or Teams' pace for many recipients.
 */
const longestWaitOnRunningMs = 15 * 60_000;

interface Call {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal | undefined;
  /** Statuses worth another attempt besides every 5xx. */
  retryable: ReadonlySet<number>;
  /** What a successful answer's body must hold. */
  shape: AnswerShape;
  /** The send's `Idempotency-Key`, which its errors carry. */
  idempotencyKey?: string;
}

/** `408`: the service (`NOTIFY_REQUEST_TIMEOUT_MS`) or a proxy gave up waiting for the request. */
const sendRetryable: ReadonlySet<number> = new Set([408, 409, 429]);
const statusRetryable: ReadonlySet<number> = new Set([408, 429]);

/** Whether an answer is worth another attempt: every 5xx (a proxy's 522 and 524 too), and `retryable`. */
const worthRetrying = (status: number, retryable: ReadonlySet<number>): boolean =>
  (status >= 500 && status <= 599) || retryable.has(status);

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}

/** What a redirect answer is told as: the client follows none, or the API key would go along. */
function redirectDetails(response: Response): string {
  const location = response.headers.get('location');
  return `The service answered a redirect${location ? ` to ${location}` : ''}, which the client does not follow: the API key would go along. Set baseUrl to where the service answers.`;
}

function errorFromAnswer(response: Response, text: string): NotifyClientErrorInit {
  let details: string | undefined;
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'details' in body && typeof body.details === 'string') {
      details = body.details;
    }
  } catch {
    // not JSON: described below
  }
  return {
    status: response.status,
    details: details ?? `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
    retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
  };
}

/**
 * The service's rule for an `Idempotency-Key`, less spaces at either end, which `fetch` would trim
 * (making `"k "` the key `"k"`). Checked here: a key `fetch` cannot send (beyond Latin-1, a line
 * break) would otherwise fail as if the network were down, and be tried again.
 */
const idempotencyKeyPattern = /^[\x21-\x7E](?:[\x20-\x7E]{0,253}[\x21-\x7E])?$/;

/**
 * A request id as the last segment of the status path. Any id the service can be asked about gets
 * its answer (`400 Invalid request_id format` for a malformed one); an empty id, `.` and `..` cannot
 * be asked about: they are no segment but steps in the path, which `fetch` (and any proxy) resolves,
 * encoded or not (RFC 3986 §6.2.2), and which the service answers as no endpoint. Neither can text
 * with a lone surrogate, which no URL can carry.
 */
function requestIdSegment(requestId: string): string {
  const unsendable = (got: string) =>
    new TypeError(`status: requestId must be a request id (req_ and 24 letters or digits), got ${got}`);
  if (requestId === '' || requestId === '.' || requestId === '..') {
    throw unsendable(JSON.stringify(requestId));
  }
  try {
    return encodeURIComponent(requestId);
  } catch {
    throw unsendable('text with a lone surrogate');
  }
}

/**
 * A client of the service's HTTP API. Only `fetch` and `node:crypto` are used at run time.
 * @throws TypeError or RangeError when an option could not work (a `baseUrl` that is no absolute URL).
 *
 * ```ts
 * const notify = createClient({ baseUrl: 'https://notify.example.com', apiKey: process.env.NOTIFY_API_KEY! });
 * const { request_id } = await notify.send({ user_emails: ['bob@acme.test'], message: 'Deploy?', response_request: { ... } });
 * const final = await notify.waitForCompletion(request_id, { timeoutMs: 30 * 60_000 });
 * ```
 */
export function createClient(options: ClientOptions): NotifyClient {
  const { baseUrl, policy, attemptTimeoutMs } = clientSettings(options);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const sleep: Sleep = options.sleep ?? timerSleep;

  /**
   * One attempt: the answer and its text, or, when none came whole, why. The attempt is given up
   * after `attemptTimeoutMs`; the caller's signal aborts it too (then its reason is thrown). One
   * controller per attempt, its timer and listener removed once it ends: `AbortSignal.any` on a
   * caller's long-lived signal kept an entry per call on Node 20.
   */
  async function attemptOnce(request: Call): Promise<Answered | Lost> {
    const { signal } = request;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`No whole answer within ${attemptTimeoutMs} ms`));
    }, attemptTimeoutMs);
    const forward = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    try {
      const response = await fetchImpl(`${baseUrl}${request.path}`, {
        method: request.method,
        headers: request.headers,
        // A redirect followed would carry the API key to wherever it points, another origin too.
        redirect: 'manual',
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: controller.signal,
      });
      return { response, text: await response.text() };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      return { error, timedOut };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }

  async function call<T>(request: Call): Promise<T> {
    const { signal } = request;
    const failure = (init: NotifyClientErrorInit) =>
      new NotifyClientError({ ...init, idempotencyKey: request.idempotencyKey });
    /** How long the call has waited on a send still running after one of its attempts got no answer. */
    let waitedOnRunning: number | null = null;
    for (let attempt = 1; ; attempt += 1) {
      signal?.throwIfAborted();
      const answered = await attemptOnce(request);
      if ('error' in answered) {
        const lost = failure({
          status: 0,
          details: answered.timedOut
            ? `No whole answer within ${attemptTimeoutMs} ms`
            : `Network error: ${describe(answered.error)}`,
          cause: answered.error,
        });
        // The service may still be sending under the key: its repeats are answered 409 until then.
        if (request.idempotencyKey !== undefined) waitedOnRunning ??= 0;
        if (attempt >= policy.maxAttempts) throw lost;
        await pause(sleep, backoffDelay(policy, attempt), signal);
        continue;
      }
      const { response, text } = answered;

      // A browser's fetch hides a redirect it did not follow behind status 0.
      if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status <= 399)) {
        throw failure({ status: response.status, details: redirectDetails(response) });
      }

      if (response.ok) {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (error) {
          throw failure({ status: response.status, details: 'The answer is not valid JSON', cause: error });
        }
        const lacking = request.shape(body);
        if (lacking !== null) throw failure({ status: response.status, details: lacking });
        return body as T;
      }

      const refused = errorFromAnswer(response, text);
      // A send whose attempt got no answer, or a gateway's error, may run on in the service: its 409s
      // say so, and are waited out without counting, a second at least and up to a while in all,
      // until the repeat gets the send's answer.
      if (
        response.status === 409 &&
        waitedOnRunning !== null &&
        waitedOnRunning < longestWaitOnRunningMs &&
        (refused.retryAfterSeconds ?? 0) <= longestRetryAfterSeconds
      ) {
        const delay = Math.min(
          Math.max((refused.retryAfterSeconds ?? 1) * 1000, 1000),
          longestWaitOnRunningMs - waitedOnRunning,
        );
        waitedOnRunning += delay;
        attempt -= 1;
        await pause(sleep, delay, signal);
        continue;
      }
      if (response.status >= 500 && request.idempotencyKey !== undefined) waitedOnRunning ??= 0;
      if (
        !worthRetrying(response.status, request.retryable) ||
        attempt >= policy.maxAttempts ||
        (refused.retryAfterSeconds ?? 0) > longestRetryAfterSeconds
      ) {
        throw failure(refused);
      }
      const retryAfterMs =
        refused.retryAfterSeconds === undefined ? undefined : refused.retryAfterSeconds * 1000;
      const delay =
        response.status === 429
          ? (retryAfterMs ?? defaultRateLimitWaitSeconds * 1000)
          : Math.max(retryAfterMs ?? 0, backoffDelay(policy, attempt));
      await pause(sleep, delay, signal);
    }
  }

  // Every method is async, so that what a caller passes wrong (a body JSON cannot write, a key or id
  // that cannot be sent) rejects the promise it awaits rather than throwing where it called.
  async function send(
    request: NotifyRequestInput,
    sendOptions: SendOptions = {},
  ): Promise<NotificationSent | RequestCreated> {
    const { idempotencyKey } = sendOptions;
    if (idempotencyKey !== undefined && !idempotencyKeyPattern.test(idempotencyKey)) {
      throw new TypeError(
        'send: idempotencyKey must be 1 to 255 printable ASCII characters (codes 0x20 to 0x7E), without spaces at either end',
      );
    }
    const key = idempotencyKey ?? randomUUID();
    return call({
      method: 'POST',
      path: '/api/notify',
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        'x-api-key': options.apiKey,
        'idempotency-key': key,
      },
      body: JSON.stringify(request),
      signal: sendOptions.signal,
      retryable: sendRetryable,
      shape: request.response_request === undefined ? notificationSentShape : requestCreatedShape,
      idempotencyKey: key,
    });
  }

  async function status(requestId: string, statusOptions: StatusOptions = {}): Promise<RequestStatus> {
    return call({
      method: 'GET',
      path: `/api/notify/status/${requestIdSegment(requestId)}`,
      headers: { accept: 'application/json', 'x-api-key': options.apiKey },
      signal: statusOptions.signal,
      retryable: statusRetryable,
      shape: requestStatusShape,
    });
  }

  async function waitForCompletion(requestId: string, waitOptions: WaitOptions = {}): Promise<RequestStatus> {
    const { signal } = waitOptions;
    const { timeoutMs, initialIntervalMs, maxIntervalMs } = waitSettings(waitOptions);
    let interval = initialIntervalMs;
    signal?.throwIfAborted();

    const controller = new AbortController();
    const forwardAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    let timedOut = false;
    const cancelTimer = setLongTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, timeoutMs);
    let last: RequestStatus | undefined;
    try {
      for (;;) {
        last = await status(requestId, { signal: controller.signal });
        if (last.status === 'finished') return last;
        await pause(sleep, interval, controller.signal);
        interval = Math.min(interval * 2, maxIntervalMs);
      }
    } catch (error) {
      if (timedOut && !signal?.aborted) throw new NotifyTimeoutError(requestId, timeoutMs, last);
      throw error;
    } finally {
      cancelTimer();
      signal?.removeEventListener('abort', forwardAbort);
    }
  }

  return { send: send as NotifyClient['send'], status, waitForCompletion };
}
