import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scopedTransportState, type TransportStateStore } from '../core/adapter-kit.js';

/** What an adapter hands the transport-state contract for one test. */
export interface TransportStateContractHarness {
  /** A fresh, empty store: nothing another test wrote may be visible. */
  state: TransportStateStore;
  /** Advances the store's own clock; omit it for a server's clock (the suite then waits, briefly). */
  clock?: { advance(ms: number): void };
  /** The same store seen by another instance of the service, over a connection of its own. */
  secondInstance?(): Promise<TransportStateStore>;
  /** Releases what the setup took. */
  teardown(): Promise<void>;
}

/** Builds the store of one test; called before each test, and its teardown after. */
export type TransportStateContractSetup = () => Promise<TransportStateContractHarness>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const key = (): string => `k:${randomUUID()}`;

/** Short enough to wait for in real time; {@link passed} is safely beyond it on any clock. */
const shortTtl = 50;
const passed = 150;
const longTtl = 3_600_000;

/** Values a backend could mangle: empty, operators, JSON, non-ASCII, large. */
const awkwardValues = ['', '$set', '{"$literal":[1,2],"a":null}', 'é ✓ 𝄞', 'x'.repeat(100_000)];

/**
 * The behaviour every storage adapter's `TransportStateStore` must share. Times the store judges
 * (expiry) are advanced through the harness clock, or really waited for when it has none.
 */
export function describeTransportStateContract(name: string, setup: TransportStateContractSetup): void {
  describe(`transport state contract: ${name}`, () => {
    let harness: TransportStateContractHarness;
    let state: TransportStateStore;

    beforeEach(async () => {
      harness = await setup();
      state = harness.state;
    });

    afterEach(async () => {
      await harness.teardown();
    });

    /** Lets `ms` pass on the store's own clock. */
    const elapse = async (ms: number): Promise<void> => {
      if (harness.clock === undefined) await sleep(ms);
      else harness.clock.advance(ms);
    };

    describe('records', () => {
      it('answers null for a key never written', async () => {
        expect(await state.get(key())).toBeNull();
      });

      it('stores a value and answers a larger version on every write', async () => {
        const k = key();
        const first = await state.set(k, 'one');
        expect(Number.isInteger(first) && first > 0).toBe(true);
        expect(await state.get(k)).toEqual({ value: 'one', version: first });
        const second = await state.set(k, 'two');
        expect(second).toBeGreaterThan(first);
        const third = await state.set(k, 'two');
        expect(third).toBeGreaterThan(second);
        expect(await state.get(k)).toEqual({ value: 'two', version: third });
      });

      it('keeps every value exactly as given', async () => {
        for (const value of awkwardValues) {
          const k = key();
          await state.set(k, value);
          expect((await state.get(k))?.value).toBe(value);
        }
      });

      it('keeps keys with any characters apart', async () => {
        const keys = ['a', 'a:b', 'a:', ':a', 'a b', 'é', '*', 'a\nb'].map((suffix) => `${key()}${suffix}`);
        for (const [index, k] of keys.entries()) await state.set(k, String(index));
        expect((await state.getMany(keys)).map((record) => record?.value)).toEqual(
          keys.map((_, i) => String(i)),
        );
      });

      it('reads several records in key order, with null where there is none', async () => {
        const [a, b, missing] = [key(), key(), key()];
        const va = await state.set(a, 'A');
        const vb = await state.set(b, 'B');
        expect(await state.getMany([b, missing, a, b])).toEqual([
          { value: 'B', version: vb },
          null,
          { value: 'A', version: va },
          { value: 'B', version: vb },
        ]);
        expect(await state.getMany([])).toEqual([]);
      });

      it('reads many records in one call', async () => {
        const keys = Array.from({ length: 300 }, key);
        await Promise.all(keys.map((k, i) => state.set(k, String(i))));
        const records = await state.getMany(keys);
        expect(records.map((record) => record?.value)).toEqual(keys.map((_, i) => String(i)));
      });

      it('deletes a record, idempotently', async () => {
        const k = key();
        await state.set(k, 'v');
        await state.delete(k);
        expect(await state.get(k)).toBeNull();
        await state.delete(k);
        await state.delete(key());
        expect(await state.get(k)).toBeNull();
      });
    });

    describe('compare-and-set', () => {
      it('creates a record only when there is none', async () => {
        const k = key();
        const created = await state.compareAndSet(k, 'first', null);
        expect(created).not.toBeNull();
        expect(await state.get(k)).toEqual({ value: 'first', version: created });
        expect(await state.compareAndSet(k, 'second', null)).toBeNull();
        expect(await state.get(k)).toEqual({ value: 'first', version: created });
      });

      it('writes when the version is current and answers a larger one', async () => {
        const k = key();
        const version = await state.set(k, 'one');
        const next = await state.compareAndSet(k, 'two', version);
        expect(next).toBeGreaterThan(version);
        expect(await state.get(k)).toEqual({ value: 'two', version: next });
      });

      it('refuses a stale version and writes nothing', async () => {
        const k = key();
        const stale = await state.set(k, 'one');
        const current = await state.set(k, 'two');
        expect(await state.compareAndSet(k, 'three', stale)).toBeNull();
        expect(await state.get(k)).toEqual({ value: 'two', version: current });
      });

      it('refuses a version when there is no record', async () => {
        const k = key();
        expect(await state.compareAndSet(k, 'v', 1)).toBeNull();
        expect(await state.get(k)).toBeNull();
        const version = await state.set(k, 'v');
        await state.delete(k);
        expect(await state.compareAndSet(k, 'again', version)).toBeNull();
        expect(await state.get(k)).toBeNull();
      });

      it('lets exactly one of 50 racing writers win each version', async () => {
        const k = key();
        const initial = await state.set(k, 'start');
        const other = harness.secondInstance ? await harness.secondInstance() : state;
        const stores = [state, other];
        const first = await Promise.all(
          Array.from({ length: 50 }, (_, i) => stores[i % 2]!.compareAndSet(k, `w${i}`, initial)),
        );
        expect(first.filter((version) => version !== null)).toHaveLength(1);

        // Every writer now loops read -> compare-and-set until its own write lands.
        const wins = new Map<number, string>();
        const writer = async (i: number): Promise<void> => {
          const store = stores[i % 2]!;
          for (;;) {
            const current = await store.get(k);
            const won = await store.compareAndSet(k, `r${i}`, current?.version ?? null);
            if (won === null) continue;
            expect(wins.has(won)).toBe(false);
            wins.set(won, `r${i}`);
            return;
          }
        };
        await Promise.all(Array.from({ length: 50 }, (_, i) => writer(i)));
        expect(new Set(wins.values()).size).toBe(50);
        const last = Math.max(...wins.keys());
        expect(await state.get(k)).toEqual({ value: wins.get(last), version: last });
      });
    });

    describe('expiry', () => {
      it('forgets a record after its ttl, and keeps one without', async () => {
        const [short, long, forever] = [key(), key(), key()];
        await state.set(short, 's', { ttlMs: shortTtl });
        await state.set(long, 'l', { ttlMs: longTtl });
        await state.compareAndSet(forever, 'f', null);
        await elapse(passed);
        expect(await state.get(short)).toBeNull();
        expect(await state.getMany([short, long, forever])).toEqual([
          null,
          { value: 'l', version: expect.any(Number) },
          { value: 'f', version: expect.any(Number) },
        ]);
      });

      it('treats an expired record as absent for compare-and-set', async () => {
        const k = key();
        const version = await state.compareAndSet(k, 'old', null, { ttlMs: shortTtl });
        await elapse(passed);
        expect(await state.compareAndSet(k, 'stale', version)).toBeNull();
        const created = await state.compareAndSet(k, 'new', null);
        expect(created).not.toBeNull();
        expect(await state.get(k)).toEqual({ value: 'new', version: created });
      });

      it('sets the expiry anew on each write: a new ttl, or none', async () => {
        const [renewed, persisted, shortened] = [key(), key(), key()];
        await state.set(renewed, 'a', { ttlMs: shortTtl });
        await state.set(renewed, 'b', { ttlMs: longTtl });
        await state.set(persisted, 'a', { ttlMs: shortTtl });
        const version = await state.set(persisted, 'b');
        await state.set(shortened, 'a');
        await state.compareAndSet(shortened, 'b', (await state.get(shortened))?.version ?? null, {
          ttlMs: shortTtl,
        });
        await elapse(passed);
        expect((await state.get(renewed))?.value).toBe('b');
        expect(await state.get(persisted)).toEqual({ value: 'b', version });
        expect(await state.get(shortened)).toBeNull();
      });

      it('refuses a ttl that is not a positive number', async () => {
        for (const ttlMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
          await expect(state.set(key(), 'v', { ttlMs })).rejects.toThrow(RangeError);
          await expect(state.append(key(), 'v', { ttlMs })).rejects.toThrow(RangeError);
        }
      });
    });

    describe('lists', () => {
      it('reads entries in append order, and [] for a list never written', async () => {
        const k = key();
        expect(await state.readList(k)).toEqual([]);
        for (const value of ['b', 'a', 'c', 'a', ...awkwardValues]) await state.append(k, value);
        expect(await state.readList(k)).toEqual(['b', 'a', 'c', 'a', ...awkwardValues]);
      });

      it('keeps every one of many concurrent appends', async () => {
        const k = key();
        const other = harness.secondInstance ? await harness.secondInstance() : state;
        const values = Array.from({ length: 100 }, (_, i) => `v${i}`);
        await Promise.all(values.map((value, i) => (i % 2 === 0 ? state : other).append(k, value)));
        expect([...(await state.readList(k))].sort()).toEqual([...values].sort());
      });

      it('keeps a record and a list of the same key apart, and deletes both', async () => {
        const k = key();
        const version = await state.set(k, 'record');
        await state.append(k, 'entry');
        expect(await state.get(k)).toEqual({ value: 'record', version });
        expect(await state.readList(k)).toEqual(['entry']);
        await state.delete(k);
        expect(await state.get(k)).toBeNull();
        expect(await state.readList(k)).toEqual([]);
      });

      it('forgets a list after its ttl, renews it on each append, and starts it afresh after', async () => {
        const [short, renewed, forever] = [key(), key(), key()];
        await state.append(short, 'a', { ttlMs: shortTtl });
        await state.append(renewed, 'a', { ttlMs: shortTtl });
        await state.append(renewed, 'b', { ttlMs: longTtl });
        await state.append(forever, 'a', { ttlMs: shortTtl });
        await state.append(forever, 'b');
        await elapse(passed);
        expect(await state.readList(short)).toEqual([]);
        expect(await state.readList(renewed)).toEqual(['a', 'b']);
        expect(await state.readList(forever)).toEqual(['a', 'b']);
        await state.append(short, 'c');
        expect(await state.readList(short)).toEqual(['c']);
      });
    });

    describe('namespaced by platform', () => {
      it('keeps the keys of one platform away from every other', async () => {
        const slack = scopedTransportState(state, 'slack');
        const teams = scopedTransportState(state, 'teams');
        const k = key();
        const version = await slack.set(k, 'slack value');
        await slack.append(k, 'slack entry');
        expect(await teams.get(k)).toBeNull();
        expect(await teams.getMany([k])).toEqual([null]);
        expect(await teams.readList(k)).toEqual([]);
        expect(await teams.compareAndSet(k, 'teams value', version)).toBeNull();
        expect(await teams.compareAndSet(k, 'teams value', null)).not.toBeNull();
        await teams.delete(k);
        expect(await slack.get(k)).toEqual({ value: 'slack value', version });
        expect(await slack.getMany([k])).toEqual([{ value: 'slack value', version }]);
        expect(await slack.readList(k)).toEqual(['slack entry']);
        expect(await state.get(`slack:${k}`)).toEqual({ value: 'slack value', version });
        expect(await state.get(k)).toBeNull();
      });

      it('refuses a platform name that could meet another on a key', () => {
        expect(() => scopedTransportState(state, 'a:b')).toThrow(RangeError);
        expect(() => scopedTransportState(state, '')).toThrow(RangeError);
      });
    });
  });
}
