import { describe, expect, it } from 'vitest';
import { nextRetryDelay, retryDelaysMs } from '../../core/callbacks/retry-schedule.js';

const hour = 3_600_000;

describe('retry schedule', () => {
  it('waits each step with ±20 % jitter, then gives up', () => {
    retryDelaysMs.forEach((step, attempt) => {
      expect(nextRetryDelay(attempt, null, 0)).toBe(step * 0.8);
      expect(nextRetryDelay(attempt, null, 0.5)).toBe(step);
    });
    expect(nextRetryDelay(retryDelaysMs.length, null, 0.5)).toBeNull();
  });

  it('lets Retry-After lengthen a pause up to the longest step (10 h), never beyond', () => {
    expect(Math.max(...retryDelaysMs)).toBe(10 * hour);
    expect(nextRetryDelay(0, 3_600_000, 0.5)).toBe(hour);
    expect(nextRetryDelay(0, 99_999_999_999_999_000, 0.5)).toBe(10 * hour);
    expect(nextRetryDelay(0, Number.POSITIVE_INFINITY, 0.5)).toBe(10 * hour);
    expect(nextRetryDelay(6, 99_999_999_999_999_000, 0.5)).toBe(10 * hour);
    expect(nextRetryDelay(6, 99_999_999_999_999_000, 0.99)).toBe(Math.round(10 * hour * 1.196));
  });

  it.each([Number.NaN, -1, Number.NEGATIVE_INFINITY, 0])('ignores a Retry-After of %d', (retryAfterMs) => {
    expect(nextRetryDelay(0, retryAfterMs, 0.5)).toBe(5_000);
  });
});
