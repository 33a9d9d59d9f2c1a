import { describe, expect, it } from 'vitest';
import { copyIds } from '../../adapters/chat/inbox/copy-ids.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { TransportStateStore } from '../../core/ports/transport-state-store.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';

const copy = { sendId: 'req_000000000000000000000001', recipient: 'bob@acme.test' };

describe('inbox message ids', () => {
  it('are the same on every instance, and name the copy they were made for', async () => {
    const state = scopedTransportState(memoryStorage().transportState, 'inbox');
    const [one, two] = [copyIds(state), copyIds(state)];
    const id = await one.idOf(copy);
    expect(await two.idOf(copy)).toBe(id);
    expect(await two.copyOf(id)).toEqual(copy);
    // Another tag: its first character changed (the last one holds bits the tag does not use).
    const tag = id.lastIndexOf('.') + 1;
    const other = `${id.slice(0, tag)}${id[tag] === 'A' ? 'B' : 'A'}${id.slice(tag + 1)}`;
    expect(await two.copyOf(other)).toBeNull();
  });

  it('agree again within a minute once the store lost the key under running instances', async () => {
    const state = scopedTransportState(memoryStorage().transportState, 'inbox');
    let now = 0;
    const running = copyIds(state, () => now);
    const before = await running.idOf(copy);
    // The store is emptied (a flush, a restart without persistence); an instance that starts then
    // makes a key of its own.
    await state.delete('id-signing-key');
    const started = copyIds(state, () => now);
    const after = await started.idOf(copy);
    expect(after).not.toBe(before);
    expect(await started.copyOf(before)).toBeNull();
    now += 59_999;
    expect(await running.idOf(copy)).toBe(before);
    now += 1;
    expect(await running.idOf(copy)).toBe(after);
    expect(await running.copyOf(after)).toEqual(copy);
  });

  it('keep the key in use when the store fails at the minute it is read again', async () => {
    const state = scopedTransportState(memoryStorage().transportState, 'inbox');
    let failing = false;
    const flaky: TransportStateStore = {
      ...state,
      get: (key) => (failing ? Promise.reject(new Error('store down')) : state.get(key)),
      compareAndSet: (...args) =>
        failing ? Promise.reject(new Error('store down')) : state.compareAndSet(...args),
    };
    let now = 0;
    const ids = copyIds(flaky, () => now);
    const id = await ids.idOf(copy);
    failing = true;
    now += 60_000;
    expect(await ids.idOf(copy)).toBe(id);
    expect(await ids.copyOf(id)).toEqual(copy);
  });
});
