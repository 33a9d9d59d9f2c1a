import { HttpError } from '@microsoft/agents-hosting';
import { describe, expect, it } from 'vitest';
import {
  type RetryEnvironment,
  retryDelay,
  retryPolicy,
  withRetries,
} from '../../adapters/chat/teams/retry.js';

const now = Date.parse('2026-03-01T09:00:00.000Z');

/** A failed Bot Connector call, as the SDK's HTTP client throws it. */
function httpError(status: number, retryAfter?: string): HttpError {
  const headers = new Headers(retryAfter === undefined ? {} : { 'retry-after': retryAfter });
  const config = { method: 'post', url: 'v3/conversations/a/activities' };
  return new HttpError(
    `Request failed with status ${status}`,
    {
      data: {},
      status,
      statusText: '',
      headers,
      config,
    },
    config,
  );
}

const policy = retryPolicy({ retries: 3, minDelayMs: 1000, maxDelayMs: 30_000 });
const middle = { random: () => 0.5, now: () => now };

describe('retryDelay', () => {
  it.each([
    ['429', httpError(429), 0, 750],
    ['412', httpError(412), 0, 750],
    ['502', httpError(502), 1, 1500],
    ['504', httpError(504), 2, 3000],
  ])('retries a %s with a jittered pause that doubles', (_name, error, attempt, delay) => {
    expect(retryDelay(error, attempt, policy, middle)).toBe(delay);
  });

  it('draws the pause in the upper half of its ceiling', () => {
    expect(retryDelay(httpError(429), 0, policy, { random: () => 0, now: () => now })).toBe(500);
    expect(retryDelay(httpError(429), 0, policy, { random: () => 0.999_999, now: () => now })).toBeCloseTo(
      1000,
      0,
    );
  });

  it('caps the pause at maxDelayMs', () => {
    expect(
      retryDelay(httpError(429), 10, retryPolicy({ retries: 20 }), { random: () => 1, now: () => now }),
    ).toBe(30_000);
  });

  it('waits at least what Retry-After asks, in seconds or as a date', () => {
    expect(retryDelay(httpError(429, '7'), 0, policy, middle)).toBe(7000);
    expect(retryDelay(httpError(429, new Date(now + 12_000).toUTCString()), 0, policy, middle)).toBe(12_000);
    expect(retryDelay(httpError(429, '0'), 0, policy, middle)).toBe(750);
  });

  it('gives up when Retry-After asks for more than maxDelayMs', () => {
    expect(retryDelay(httpError(429, '31'), 0, policy, middle)).toBeNull();
  });

  it.each([
    ['a 403', httpError(403)],
    ['a 404', httpError(404)],
    ['a 500', httpError(500)],
    ['a 503', httpError(503)],
    ['a network failure', new TypeError('fetch failed')],
  ])('does not retry %s', (_name, error) => {
    expect(retryDelay(error, 0, policy, middle)).toBeNull();
  });

  it('stops after the last retry', () => {
    expect(retryDelay(httpError(429), 2, policy, middle)).not.toBeNull();
    expect(retryDelay(httpError(429), 3, policy, middle)).toBeNull();
  });
});

describe('withRetries', () => {
  const environment = (): RetryEnvironment & { pauses: number[] } => {
    const pauses: number[] = [];
    return {
      pauses,
      sleep: async (ms) => {
        pauses.push(ms);
      },
      random: () => 0.5,
      now: () => now,
    };
  };

  it('answers the first success, after pausing as told', async () => {
    const env = environment();
    const failures = [httpError(429, '2'), httpError(502)];
    const answer = await withRetries(
      async () => {
        const failure = failures.shift();
        if (failure) throw failure;
        return 'sent';
      },
      policy,
      env,
    );
    expect(answer).toBe('sent');
    expect(env.pauses).toEqual([2000, 1500]);
  });

  it('rejects with the last failure once the retries are spent', async () => {
    const env = environment();
    let attempts = 0;
    const last = httpError(504);
    await expect(
      withRetries(
        async () => {
          attempts += 1;
          throw attempts <= 3 ? httpError(429) : last;
        },
        policy,
        env,
      ),
    ).rejects.toBe(last);
    expect(attempts).toBe(4);
    expect(env.pauses).toHaveLength(3);
  });
});
