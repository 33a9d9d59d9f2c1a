import { describe, expect, it } from 'vitest';
import { createLazySweep } from '../../adapters/storage/memory/lazy-sweep.js';

interface Entry {
  expiresAt: number;
}
const isExpired = (entry: Entry, now: number): boolean => entry.expiresAt <= now;

describe('lazy sweep of a memory store map', () => {
  it('drops the expired entries of a map with few keys that are written over and over', () => {
    // The inbox's per-period lists: a handful of keys, appended to for ever, never read once expired.
    const map = new Map<string, Entry>([
      ['old period', { expiresAt: 10 }],
      ['current period', { expiresAt: 1_000 }],
    ]);
    const sweep = createLazySweep(map, isExpired, { now: () => 100 });
    for (let write = 0; write < 64; write += 1) sweep();
    expect([...map.keys()]).toEqual(['current period']);
  });

  it('keeps a growing map within about twice its live entries plus the writes since the last sweep', () => {
    const map = new Map<number, Entry>();
    let now = 0;
    const sweep = createLazySweep(map, isExpired, { now: () => now });
    let largest = 0;
    for (; now < 100_000; now += 1) {
      // Each entry lives 1,000 writes: about 1,000 are live at any moment.
      map.set(now, { expiresAt: now + 1_000 });
      sweep();
      largest = Math.max(largest, map.size);
    }
    expect(largest).toBeLessThanOrEqual(3_000);
  });

  it('does not scan a small map on every write, nor read the clock between scans', () => {
    let checks = 0;
    let clockReads = 0;
    const map = new Map<string, Entry>([['live', { expiresAt: Number.POSITIVE_INFINITY }]]);
    const clock = {
      now: () => {
        clockReads += 1;
        return 0;
      },
    };
    const sweep = createLazySweep(
      map,
      (entry: Entry, now: number) => {
        checks += 1;
        return isExpired(entry, now);
      },
      clock,
    );
    for (let write = 0; write < 640; write += 1) sweep();
    expect([checks, clockReads]).toEqual([10, 10]);
  });
});
