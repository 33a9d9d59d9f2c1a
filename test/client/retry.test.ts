import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  createClient,
  type NotificationSent,
  NotifyClientError,
  type NotifyRequestInput,
  NotifyTimeoutError,
  type RequestCreated,
  type RequestStatus,
} from '../../client/index.js';
import { setLongTimeout } from '../../client/long-timeout.js';
import { parseRetryAfter } from '../../client/retry.js';

interface Seen {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
}

type Step = Response | Error | (() => Response);

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
const error = (status: number, details: string, headers: Record<string, string> = {}) =>
  json(status, { status: 'error', details }, headers);
const sent = () => json(200, { status: 'ok', notification_id: 'notif_AbCdEfGhIjKlMnOpQrStUvWx' });
const networkError = () => new TypeError('fetch failed', { cause: new Error('ECONNRESET') });

/** A client whose fetch plays `steps` in order and whose sleep only records. */
function scripted(
  steps: Step[],
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number },
) {
  const seen: Seen[] = [];
  const delays: number[] = [];
  const fakeFetch: typeof fetch = async (input, init) => {
    seen.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
    });
    const step = steps.shift();
    if (step === undefined) throw new Error('no more scripted answers');
    if (step instanceof Error) throw step;
    return typeof step === 'function' ? step() : step;
  };
  const client = createClient({
    baseUrl: 'https://notify.example.test/base/',
    apiKey: 'cnk_test',
    fetch: fakeFetch,
    sleep: async (ms) => {
      delays.push(ms);
    },
    ...(retry ? { retry } : {}),
  });
  return { client, seen, delays };
}

const plain = { user_emails: ['bob@acme.test'], message: 'hello' };

describe('the client against a scripted fetch', () => {
  it('posts the request with the key, JSON and a fresh Idempotency-Key per logical send', async () => {
    const { client, seen } = scripted([sent(), sent()]);
    await client.send(plain);
    await client.send(plain);
    expect(seen[0]?.url).toBe('https://notify.example.test/base/api/notify');
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.headers.get('x-api-key')).toBe('cnk_test');
    expect(seen[0]?.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual(plain);
    const keys = seen.map((s) => s.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('uses the caller’s Idempotency-Key', async () => {
    const { client, seen } = scripted([sent()]);
    await client.send(plain, { idempotencyKey: 'deploy-42' });
    expect(seen[0]?.headers.get('idempotency-key')).toBe('deploy-42');
  });

  it('retries network errors, 408, 409 and 5xx with the same key and full-jitter backoff', async () => {
    const { client, seen, delays } = scripted(
      [
        networkError(),
        error(408, 'Request timed out'),
        error(409, 'busy', { 'retry-after': '1' }),
        error(503, 'down'),
        sent(),
      ],
      { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 300 },
    );
    const result = await client.send(plain);
    expect(result.notification_id).toBe('notif_AbCdEfGhIjKlMnOpQrStUvWx');
    expect(seen).toHaveLength(5);
    expect(new Set(seen.map((s) => s.headers.get('idempotency-key'))).size).toBe(1);
    expect(delays).toHaveLength(4);
    expect(delays[0]).toBeGreaterThanOrEqual(0);
    expect(delays[0]).toBeLessThan(100); // cap 100
    expect(delays[1]).toBeLessThan(200); // cap 200
    expect(delays[2]).toBeGreaterThanOrEqual(1000); // Retry-After: 1 wins over the jitter
    expect(delays[3]).toBeLessThan(300); // cap min(400, maxDelayMs 300)
  });

  // Every 5xx, as documented: a proxy's 522 and 524 (Cloudflare) and a 501 or 507 too.
  for (const status of [501, 502, 504, 507, 522, 524]) {
    it(`retries ${status}`, async () => {
      const { client, seen } = scripted([error(status, 'gateway'), sent()]);
      await client.send(plain);
      expect(seen).toHaveLength(2);
    });
  }

  it('waits Retry-After (or 1 s) on 429, and honours an HTTP-date Retry-After on 503', async () => {
    const inFive = new Date(Date.now() + 5000).toUTCString();
    const { client, delays } = scripted([
      error(429, 'Per-key rate limit exceeded (10 burst / 2 per second)', { 'retry-after': '2' }),
      error(429, 'limited'),
      error(503, 'unavailable', { 'retry-after': inFive }),
      sent(),
    ]);
    await client.send(plain);
    expect(delays[0]).toBe(2000);
    expect(delays[1]).toBe(1000);
    expect(delays[2]).toBeGreaterThanOrEqual(4000);
    expect(delays[2]).toBeLessThanOrEqual(6000);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const { client, seen, delays } = scripted(
      [error(502, 'a'), error(502, 'b'), error(503, 'still down', { 'retry-after': '3' })],
      { maxAttempts: 3 },
    );
    const failure = await client.send(plain).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NotifyClientError);
    expect(failure).toMatchObject({ status: 503, details: 'still down', retryAfterSeconds: 3 });
    // The key every attempt carried, to send again with later.
    expect((failure as NotifyClientError).idempotencyKey).toBe(seen[0]?.headers.get('idempotency-key'));
    expect(seen).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  it('reports a network failure with status 0 and the cause', async () => {
    const cause = networkError();
    const { client } = scripted([cause], { maxAttempts: 1 });
    const failure = await client.send(plain).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NotifyClientError);
    expect(failure).toMatchObject({ status: 0, cause });
    expect((failure as NotifyClientError).details).toMatch(/^Network error: fetch failed \(ECONNRESET\)/);
  });

  for (const [status, details] of [
    [400, 'message: must not be blank'],
    [401, 'Invalid API key'],
    [413, 'Body larger than 64 KiB'],
    [422, 'Unknown user emails: x@acme.test'],
  ] as const) {
    it(`does not retry ${status}`, async () => {
      const { client, seen } = scripted([error(status, details), sent()]);
      await expect(client.send(plain)).rejects.toMatchObject({ status, details });
      expect(seen).toHaveLength(1);
    });
  }

  it("rejects a successful answer that lacks what the call promises, without retrying, carrying the send's key", async () => {
    const interactive = {
      ...plain,
      response_request: {
        options: [
          { text: 'Yes', value: 'yes' },
          { text: 'No', value: 'no' },
        ],
        timeout_minutes: 5,
      },
    };
    for (const [call, answer, details] of [
      ['send', 'null', 'The answer is no JSON object'],
      ['send', '{}', 'The answer carries no notification_id'],
      [
        'send',
        JSON.stringify({ status: 'ok', request_id: 'req_AbCdEfGhIjKlMnOpQrStUvWx' }),
        'The answer carries no notification_id',
      ],
      [
        'interactive',
        JSON.stringify({ status: 'ok', notification_id: 'notif_AbCdEfGhIjKlMnOpQrStUvWx' }),
        'The answer carries no request_id',
      ],
      ['status', '[]', 'The answer is no JSON object'],
      [
        'status',
        '{"status":"weird","responses":[]}',
        'The answer is no request status: its status is neither pending nor finished',
      ],
      ['status', '{"status":"pending"}', 'The answer carries no responses list'],
    ] as const) {
      const { client, seen } = scripted([new Response(answer, { status: 200 }), sent()]);
      const made =
        call === 'status'
          ? client.status('req_AbCdEfGhIjKlMnOpQrStUvWx')
          : client.send(call === 'send' ? plain : interactive);
      const failure = await made.catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(NotifyClientError);
      expect(failure).toMatchObject({ status: 200, details });
      expect((failure as NotifyClientError).idempotencyKey).toBe(
        seen[0]?.headers.get('idempotency-key') ?? undefined,
      );
      expect(seen).toHaveLength(1);
    }
  });

  it('asks fetch not to follow redirects, and rejects a redirect answer at once, naming where it pointed', async () => {
    let redirect: RequestRedirect | undefined;
    const client = createClient({
      baseUrl: 'https://notify.example.test',
      apiKey: 'cnk_test',
      fetch: async (_input, init) => {
        redirect = init?.redirect;
        return new Response(null, { status: 307, headers: { location: 'http://elsewhere.test/steal' } });
      },
    });
    const failure = await client.send(plain).catch((e: unknown) => e);
    expect(redirect).toBe('manual');
    expect(failure).toBeInstanceOf(NotifyClientError);
    expect(failure).toMatchObject({ status: 307 });
    expect((failure as NotifyClientError).details).toMatch(/redirect to http:\/\/elsewhere\.test\/steal/);
  });

  describe('a send that may still run in the service after an attempt got no answer', () => {
    const busy = (retryAfter: string) =>
      error(409, 'A request with this Idempotency-Key is still being processed', {
        'retry-after': retryAfter,
      });

    it("waits out its 409s after a gateway's 502 without counting them, and gets its answer", async () => {
      const { client, seen, delays } = scripted([error(502, 'Bad Gateway'), busy('1'), busy('1'), sent()], {
        maxAttempts: 2,
        baseDelayMs: 0,
      });
      expect((await client.send(plain)).notification_id).toBe('notif_AbCdEfGhIjKlMnOpQrStUvWx');
      expect(seen).toHaveLength(4);
      expect(delays.slice(1)).toEqual([1000, 1000]);
    });

    it('waits a second at least on a Retry-After of 0, and 15 minutes in all, then gives up with the 409', async () => {
      const steps = [networkError(), ...Array.from({ length: 1000 }, () => busy('0'))];
      const { client, delays } = scripted(steps, { maxAttempts: 2, baseDelayMs: 0 });
      const failure = await client.send(plain).catch((e: unknown) => e);
      expect(failure).toMatchObject({ status: 409 });
      const waits = delays.slice(1);
      expect(waits.every((delay) => delay === 1000)).toBe(true);
      expect(waits.reduce((sum, delay) => sum + delay, 0)).toBe(15 * 60_000);
    });

    it('does not wait out a 409 asking for more than 10 minutes', async () => {
      const { client, delays } = scripted([networkError(), busy('3600')], { maxAttempts: 5, baseDelayMs: 0 });
      await expect(client.send(plain)).rejects.toMatchObject({ status: 409, retryAfterSeconds: 3600 });
      expect(delays).toHaveLength(1);
    });
  });

  it('describes an error answer that is not JSON', async () => {
    const { client } = scripted(
      [new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' })],
      { maxAttempts: 1 },
    );
    await expect(client.send(plain)).rejects.toMatchObject({ status: 502, details: 'HTTP 502 Bad Gateway' });
  });

  it('reads a status with GET and no Idempotency-Key, retrying 408, 429 and 5xx but not 404', async () => {
    const body: RequestStatus = { status: 'pending', responses: [] };
    const ok = scripted([
      error(429, 'limited', { 'retry-after': '1' }),
      error(500, 'oops'),
      error(408, 'Request timed out'),
      json(200, body),
    ]);
    expect(await ok.client.status('req_AbCdEfGhIjKlMnOpQrStUvWx')).toEqual(body);
    expect(ok.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'GET', 'GET']);
    expect(ok.seen[0]?.url).toBe(
      'https://notify.example.test/base/api/notify/status/req_AbCdEfGhIjKlMnOpQrStUvWx',
    );
    expect(ok.seen[0]?.headers.get('idempotency-key')).toBeNull();
    expect(ok.delays[0]).toBe(1000);

    const missing = scripted([error(404, 'Request not found'), json(200, body)]);
    await expect(missing.client.status('req_AbCdEfGhIjKlMnOpQrStUvWx')).rejects.toMatchObject({
      status: 404,
      details: 'Request not found',
    });
    expect(missing.seen).toHaveLength(1);

    const conflict = scripted([error(409, 'odd'), json(200, body)]);
    await expect(conflict.client.status('req_AbCdEfGhIjKlMnOpQrStUvWx')).rejects.toMatchObject({
      status: 409,
    });
  });

  it('stops waiting and rejects with the abort reason when the signal aborts', async () => {
    const controller = new AbortController();
    let calls = 0;
    const client = createClient({
      baseUrl: 'https://notify.example.test',
      apiKey: 'cnk_test',
      fetch: async () => {
        calls += 1;
        return error(503, 'down');
      },
      sleep: () => new Promise(() => {}), // never ends by itself
    });
    const pending = client.send(plain, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toBe(1);
    await expect(client.status('req_x', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('types send by the shape of the request', () => {
    const { client } = scripted([]);
    const interactive = {
      user_emails: ['bob@acme.test'],
      message: 'Approve?',
      response_request: {
        options: [
          { text: 'Yes', value: 'yes' },
          { text: 'No', value: 'no' },
        ],
        timeout_minutes: 5,
      },
    };
    // Type-level only: the functions are never called.
    expectTypeOf(() => client.send(interactive)).returns.resolves.toEqualTypeOf<RequestCreated>();
    expectTypeOf(() => client.send(plain)).returns.resolves.toEqualTypeOf<NotificationSent>();
    const either: NotifyRequestInput = plain;
    expectTypeOf(() => client.send(either)).returns.resolves.toEqualTypeOf<
      NotificationSent | RequestCreated
    >();
  });
});

describe('waitForCompletion against a scripted fetch', () => {
  const pending: RequestStatus = { status: 'pending', responses: [] };
  const finished: RequestStatus = {
    status: 'finished',
    responses: [
      {
        user_email: 'bob@acme.test',
        option_value: 'yes',
        timestamp: '2025-01-01T00:00:00.000Z',
        expired: false,
      },
    ],
  };

  it('polls with a doubling interval, capped, until finished', async () => {
    const { client, seen, delays } = scripted([
      json(200, pending),
      json(200, pending),
      json(200, pending),
      json(200, pending),
      json(200, pending),
      json(200, finished),
    ]);
    const result = await client.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx', {
      initialIntervalMs: 100,
      maxIntervalMs: 500,
    });
    expect(result).toEqual(finished);
    expect(seen).toHaveLength(6);
    expect(delays).toEqual([100, 200, 400, 500, 500]);
  });

  it('defaults to 1 s growing to 30 s', async () => {
    const steps = Array.from({ length: 8 }, () => json(200, pending));
    const { client, delays } = scripted([...steps, json(200, finished)]);
    await client.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx');
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('polls many times with the default timer without leaking abort listeners', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      let calls = 0;
      const client = createClient({
        baseUrl: 'https://notify.example.test',
        apiKey: 'cnk_test',
        fetch: async () => {
          calls += 1;
          return json(200, calls < 25 ? pending : finished);
        },
      });
      const result = await client.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx', {
        initialIntervalMs: 1,
        maxIntervalMs: 1,
        timeoutMs: 5000,
        signal: new AbortController().signal,
      });
      expect(result).toEqual(finished);
      expect(calls).toBe(25);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(warnings.map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rejects with a NotifyTimeoutError carrying the last status after timeoutMs', async () => {
    const client = createClient({
      baseUrl: 'https://notify.example.test',
      apiKey: 'cnk_test',
      fetch: async () => json(200, pending),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
    const started = Date.now();
    const failure = await client
      .waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx', { initialIntervalMs: 20, timeoutMs: 150 })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(failure).toBeInstanceOf(NotifyTimeoutError);
    expect(failure).toBeInstanceOf(NotifyClientError);
    expect(failure).toMatchObject({
      status: 0,
      requestId: 'req_AbCdEfGhIjKlMnOpQrStUvWx',
      timeoutMs: 150,
      lastStatus: pending,
    });
  });

  it('rejects with the abort reason when the signal aborts, and fails fast on a 404', async () => {
    const client = createClient({
      baseUrl: 'https://notify.example.test',
      apiKey: 'cnk_test',
      fetch: async () => json(200, pending),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
    const controller = new AbortController();
    const waiting = client.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx', {
      initialIntervalMs: 20,
      timeoutMs: 5000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('no longer needed')), 60);
    await expect(waiting).rejects.toThrow('no longer needed');

    const { client: missing } = scripted([error(404, 'Request not found')]);
    await expect(missing.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx')).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe('waitForCompletion timings', () => {
  const pending: RequestStatus = { status: 'pending', responses: [] };

  /** A client whose every status read answers `pending`, counting them. */
  function alwaysPending(sleep?: (ms: number) => Promise<void>) {
    const counted = { polls: 0 };
    const client = createClient({
      baseUrl: 'https://notify.example.test',
      apiKey: 'cnk_test',
      fetch: async () => {
        counted.polls += 1;
        return json(200, pending);
      },
      ...(sleep === undefined ? {} : { sleep }),
    });
    return { client, counted };
  }

  it('keeps waiting past the 24.8 days one Node timer holds, Infinity included, until aborted', async () => {
    for (const timeoutMs of [2 ** 31, 30 * 24 * 3_600_000, Number.POSITIVE_INFINITY]) {
      const { client, counted } = alwaysPending(
        (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 5))),
      );
      const controller = new AbortController();
      const waiting = client.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx', {
        initialIntervalMs: 1,
        timeoutMs,
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(new Error('enough')), 100);
      // A timer cut to 1 ms would have ended the wait with a NotifyTimeoutError after a poll or two.
      await expect(waiting).rejects.toThrow('enough');
      expect(counted.polls).toBeGreaterThan(3);
    }
  });

  it('refuses a time that is no number of at least 0 with a RangeError, before any poll', async () => {
    const { client, counted } = alwaysPending();
    for (const options of [
      { timeoutMs: Number.NaN },
      { timeoutMs: -1 },
      { initialIntervalMs: Number.NaN },
      { maxIntervalMs: -5 },
      { maxIntervalMs: '30' as unknown as number },
    ]) {
      await expect(client.waitForCompletion('req_AbCdEfGhIjKlMnOpQrStUvWx', options)).rejects.toThrow(
        RangeError,
      );
    }
    expect(counted.polls).toBe(0);
  });
});

describe('setLongTimeout', () => {
  it('fires once the whole delay has passed, in steps a Node timer can take, and can be cancelled', () => {
    vi.useFakeTimers();
    try {
      let fired = 0;
      setLongTimeout(
        () => {
          fired += 1;
        },
        2 ** 31 + 1000,
      );
      vi.advanceTimersByTime(2 ** 31 - 1);
      expect(fired).toBe(0);
      vi.advanceTimersByTime(1000);
      expect(fired).toBe(0);
      vi.advanceTimersByTime(1);
      expect(fired).toBe(1);
      const cancel = setLongTimeout(() => {
        fired += 1;
      }, 2 ** 32);
      vi.advanceTimersByTime(2 ** 31);
      cancel();
      vi.advanceTimersByTime(2 ** 32);
      expect(fired).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00.000Z');
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('1', now)).toBe(1);
    expect(parseRetryAfter(' 120 ', now)).toBe(120);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });

  it('reads a number of seconds too large to count exactly as endless', () => {
    expect(parseRetryAfter('9007199254740991')).toBe(9007199254740991);
    expect(parseRetryAfter('9007199254740993')).toBe(Infinity);
    expect(parseRetryAfter('9'.repeat(400))).toBe(Infinity);
  });
});

describe('a Retry-After longer than 10 minutes', () => {
  it('ends the call with its error at once, rather than waiting it out', async () => {
    for (const [status, retryAfter, seconds] of [
      [429, '601', 601],
      [503, '601', 601],
      [429, '9'.repeat(400), Infinity],
    ] as const) {
      const { client, seen, delays } = scripted([error(status, 'later', { 'retry-after': retryAfter })]);
      await expect(client.send({ user_emails: ['bob@acme.test'], message: 'Hi' })).rejects.toMatchObject({
        status,
        retryAfterSeconds: seconds,
      });
      expect(seen).toHaveLength(1);
      expect(delays).toEqual([]);
    }
  });

  it('is waited out up to 10 minutes, and an unreadable one is ignored', async () => {
    const { client, delays } = scripted([
      error(503, 'later', { 'retry-after': '600' }),
      error(503, 'later', { 'retry-after': '12 seconds' }),
      sent(),
    ]);
    await client.send({ user_emails: ['bob@acme.test'], message: 'Hi' });
    expect(delays[0]).toBe(600_000);
    expect(delays[1]).toBeLessThan(10_000);
  });
});
