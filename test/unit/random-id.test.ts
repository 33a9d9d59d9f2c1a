import { describe, expect, it } from 'vitest';
import { randomBase62, randomIds } from '../../core/security/random-id.js';

describe('randomBase62', () => {
  it('answers exactly the length asked for, in base62 characters only', () => {
    for (const length of [0, 1, 24, 40, 5000]) {
      expect(randomBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
    }
  });

  it('puts the prefix before exactly the length asked for, for ids longer and shorter than the last', () => {
    for (const [length, prefix] of [
      [24, 'req_'],
      [200, 'notif_'],
      [3, 'msg_'],
      [0, 'x_'],
    ] as const) {
      expect(randomBase62(length, prefix)).toMatch(new RegExp(`^${prefix}[0-9A-Za-z]{${length}}$`));
    }
  });

  it('draws every character equally often (no modulo bias towards the first ones)', () => {
    const counts = new Map<string, number>();
    const draws = 62 * 8000;
    for (const char of randomBase62(draws)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 8,000 each (sd ~89); a byte taken modulo 62 would give '0'..'7' 25% more than the rest.
    const early =
      ['0', '1', '2', '3', '4', '5', '6', '7'].reduce((sum, c) => sum + (counts.get(c) ?? 0), 0) / 8;
    const late = ['u', 'v', 'w', 'x', 'y', 'z'].reduce((sum, c) => sum + (counts.get(c) ?? 0), 0) / 6;
    expect(early / late).toBeGreaterThan(0.95);
    expect(early / late).toBeLessThan(1.05);
    for (const count of counts.values()) expect(Math.abs(count - 8000)).toBeLessThan(600);
  });

  it('never repeats an id across many draws (the byte pool hands each byte out once)', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => randomIds.requestId()));
    expect(ids.size).toBe(20_000);
  });
});
