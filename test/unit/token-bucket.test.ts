import { describe, expect, it } from 'vitest';
import type { BucketSpec } from '../../core/ports/rate-limit-store.js';
import { type BucketState, fullAt, refill, takeTokens } from '../../core/rate-limit/token-bucket.js';

const t0 = 1_000_000;
const spec = (key: string, capacity: number, refillPerSecond: number): BucketSpec => ({
  key,
  capacity,
  refillPerSecond,
});
const states = (entries: Record<string, BucketState>) => (key: string) => entries[key];

describe('refill', () => {
  const shape = spec('k', 10, 2);

  it('starts a new bucket full', () => {
    expect(refill(undefined, shape, t0)).toEqual({ tokens: 10, updatedAt: t0 });
  });

  it('adds refillPerSecond tokens per second, fractions included', () => {
    expect(refill({ tokens: 0, updatedAt: t0 }, shape, t0 + 1500)).toEqual({
      tokens: 3,
      updatedAt: t0 + 1500,
    });
    expect(refill({ tokens: 1, updatedAt: t0 }, shape, t0 + 250)).toEqual({
      tokens: 1.5,
      updatedAt: t0 + 250,
    });
  });

  it('is exact for whole milliseconds at rates that divide 1000', () => {
    expect(refill({ tokens: 0, updatedAt: t0 }, spec('k', 50, 5), t0 + 200).tokens).toBe(1);
  });

  it('never exceeds the capacity', () => {
    expect(refill({ tokens: 9, updatedAt: t0 }, shape, t0 + 60_000)).toEqual({
      tokens: 10,
      updatedAt: t0 + 60_000,
    });
  });

  it('clamps a state above a capacity that was lowered', () => {
    expect(refill({ tokens: 10, updatedAt: t0 }, spec('k', 4, 2), t0).tokens).toBe(4);
  });

  it('ignores a clock that steps back, without counting the interval twice later', () => {
    const back = refill({ tokens: 2, updatedAt: t0 }, shape, t0 - 5000);
    expect(back).toEqual({ tokens: 2, updatedAt: t0 });
    expect(refill(back, shape, t0 + 1000).tokens).toBe(4);
  });

  it('never refills at rate 0', () => {
    expect(refill({ tokens: 0, updatedAt: t0 }, spec('k', 3, 0), t0 + 1e9).tokens).toBe(0);
  });
});

describe('takeTokens', () => {
  const perKey = spec('key', 10, 2);
  const perOrg = spec('org', 50, 5);

  it('takes the cost from every bucket and returns their new states', () => {
    const result = takeTokens([perKey, perOrg], 1, states({}), t0);
    expect(result.shortIndex).toBeNull();
    expect(result.updates).toEqual(
      new Map([
        ['key', { tokens: 9, updatedAt: t0 }],
        ['org', { tokens: 49, updatedAt: t0 }],
      ]),
    );
  });

  it('takes nothing when one bucket is short and names the first short one', () => {
    const lookup = states({ key: { tokens: 0.5, updatedAt: t0 }, org: { tokens: 0, updatedAt: t0 } });
    expect(takeTokens([perKey, perOrg], 1, lookup, t0)).toEqual({ shortIndex: 0, updates: new Map() });
    expect(takeTokens([perOrg, perKey], 1, lookup, t0)).toEqual({ shortIndex: 0, updates: new Map() });
    const orgShort = states({ org: { tokens: 0, updatedAt: t0 } });
    expect(takeTokens([perKey, perOrg], 1, orgShort, t0)).toEqual({ shortIndex: 1, updates: new Map() });
  });

  it('counts the refill since the stored state before judging', () => {
    const lookup = states({ key: { tokens: 0, updatedAt: t0 } });
    expect(takeTokens([perKey], 1, lookup, t0 + 499).shortIndex).toBe(0);
    expect(takeTokens([perKey], 1, lookup, t0 + 500)).toEqual({
      shortIndex: null,
      updates: new Map([['key', { tokens: 0, updatedAt: t0 + 500 }]]),
    });
  });

  it('peeks with cost 0: needs one token, takes none', () => {
    const one = states({ key: { tokens: 1, updatedAt: t0 } });
    expect(takeTokens([perKey], 0, one, t0).updates.get('key')).toEqual({ tokens: 1, updatedAt: t0 });
    const almost = states({ key: { tokens: 0.99, updatedAt: t0 } });
    expect(takeTokens([perKey], 0, almost, t0).shortIndex).toBe(0);
  });

  it('charges a key listed twice twice', () => {
    const lookup = states({ key: { tokens: 1.5, updatedAt: t0 } });
    expect(takeTokens([perKey, perKey], 1, lookup, t0).shortIndex).toBe(1);
    const enough = states({ key: { tokens: 2, updatedAt: t0 } });
    expect(takeTokens([perKey, perKey], 1, enough, t0).updates.get('key')?.tokens).toBe(0);
  });

  it('passes with no buckets', () => {
    expect(takeTokens([], 5, states({}), t0)).toEqual({ shortIndex: null, updates: new Map() });
  });

  it('refuses a cost above the capacity', () => {
    expect(takeTokens([perKey], 11, states({}), t0).shortIndex).toBe(0);
  });

  it('rejects a negative or non-finite cost', () => {
    expect(() => takeTokens([perKey], -1, states({}), t0)).toThrow(RangeError);
    expect(() => takeTokens([perKey], Number.NaN, states({}), t0)).toThrow(RangeError);
    expect(() => takeTokens([perKey], Number.POSITIVE_INFINITY, states({}), t0)).toThrow(RangeError);
  });
});

describe('fullAt', () => {
  it('is when the missing tokens have refilled', () => {
    expect(fullAt({ tokens: 7, updatedAt: t0 }, spec('k', 10, 2))).toBe(t0 + 1500);
    expect(fullAt({ tokens: 10, updatedAt: t0 }, spec('k', 10, 2))).toBe(t0);
  });

  it('is never for a bucket that does not refill', () => {
    expect(fullAt({ tokens: 0, updatedAt: t0 }, spec('k', 1, 0))).toBe(Number.POSITIVE_INFINITY);
  });

  it('agrees with refill: the bucket is full at that instant', () => {
    const state = { tokens: 0.3, updatedAt: t0 };
    const shape = spec('k', 5, 3);
    expect(refill(state, shape, fullAt(state, shape)).tokens).toBe(5);
  });
});
