import { describe, expect, it } from 'vitest';
import {
  type LegacySlackCopy,
  readSlackRef,
  slackCopies,
  slackRef,
} from '../../adapters/chat/slack/copies.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { manualClock } from '../support/manual-clock.js';

const legacyCopy: LegacySlackCopy = {
  organizationId: 'acme',
  teamId: 'T0ACME',
  sendId: 'req_AAAAAAAAAAAAAAAAAAAAAAAA',
  recipient: 'bób@acme.test',
  slackUserId: 'U0BOB',
  lastVersion: 0,
};

const setup = (retentionMs?: number) => {
  const clock = manualClock();
  const state = memoryStorage({ clock }).transportState;
  return { clock, state, copies: slackCopies(state, retentionMs) };
};

/** The ref of a message posted as D0BOB/1.1 to U0BOB of T0ACME with the view of version 2. */
const ref = slackRef(
  { channel: 'D0BOB', ts: '1.1' },
  { version: 2, installationId: 'T0ACME', userRef: 'U0BOB' },
);
const delivered = readSlackRef(ref);

describe('Slack message refs and records', () => {
  it('puts in the ref the message, the version it was delivered with, the workspace and the recipient', () => {
    expect(ref).toEqual({ channel: 'D0BOB', ts: '1.1', v: '2', t: 'T0ACME', u: 'U0BOB' });
    expect(delivered).toEqual({
      channel: 'D0BOB',
      ts: '1.1',
      delivered: { version: 2, installationId: 'T0ACME', userRef: 'U0BOB' },
    });
  });

  it('reads a ref of an earlier release (or with a version that is no number) as naming only the message', () => {
    expect(readSlackRef({ channel: 'D0BOB', ts: '1.1' }).delivered).toBeNull();
    expect(readSlackRef({ ...ref, v: '2x' }).delivered).toBeNull();
    expect(readSlackRef({ ...ref, v: '' }).delivered).toBeNull();
    expect(() => readSlackRef({ channel: 'D0BOB' })).toThrow(/without channel and ts/);
  });

  it('keeps nothing while a message shows the view it was delivered with; then the newest view shown', async () => {
    const { state, copies } = setup();
    const shown = async () => (await state.get('shown:D0BOB:1.1'))?.value;
    expect(await copies.claim(delivered, 2)).toBe(false);
    expect(await copies.claim(delivered, 1)).toBe(false);
    expect(await shown()).toBeUndefined();
    expect(await copies.claim(delivered, 4)).toBe(true);
    expect(await shown()).toBe('4');
    // The same view again (a call to Slack that failed, retried) still goes through.
    expect(await copies.claim(delivered, 4)).toBe(true);
    expect(await copies.claim(delivered, 3)).toBe(false);
    expect(await copies.claim(delivered, 2)).toBe(false);
    expect(await copies.claim(delivered, 5)).toBe(true);
    expect(await shown()).toBe('5');
    expect(await state.get('copy:D0BOB:1.1')).toBeNull();
  });

  it('of views racing for one message, records the newest whichever lands first', async () => {
    for (const order of [
      [6, 7, 8],
      [8, 7, 6],
      [7, 8, 6],
    ]) {
      const { state, copies } = setup();
      const claimed = await Promise.all(order.map((version) => copies.claim(delivered, version)));
      expect((await state.get('shown:D0BOB:1.1'))?.value).toBe('8');
      // The newest always wins; an older one may go first, never after it.
      expect(claimed[order.indexOf(8)]).toBe(true);
      expect(await copies.claim(delivered, 7)).toBe(false);
      expect(await copies.claim(delivered, 6)).toBe(false);
    }
  });

  it('tells a view it was superseded once a newer one was claimed, for messages of now and of an earlier release', async () => {
    const { state, copies } = setup();
    // Nothing changed since the delivery of version 2.
    expect(await copies.superseded(delivered, 2)).toBe(false);
    await copies.claim(delivered, 4);
    expect(await copies.superseded(delivered, 4)).toBe(false);
    expect(await copies.superseded(delivered, 3)).toBe(true);
    const legacy = readSlackRef({ channel: 'D0BOB', ts: '1.2' });
    expect(await copies.superseded(legacy, 1)).toBe(false);
    await state.set('copy:D0BOB:1.2', JSON.stringify({ ...legacyCopy, lastVersion: 5 }));
    expect(await copies.superseded(legacy, 5)).toBe(false);
    expect(await copies.superseded(legacy, 4)).toBe(true);
  });

  it('claims a message of an earlier release by the record it kept, rewritten as an array', async () => {
    const { state, copies } = setup();
    const legacy = readSlackRef({ channel: 'D0BOB', ts: '1.2' });
    await state.set(
      'copy:D0BOB:1.2',
      JSON.stringify(['acme', 'T0ACME', legacyCopy.sendId, 'bób@acme.test', 'U0BOB', 1]),
    );
    expect(await copies.legacy('D0BOB', '1.2')).toEqual({ ...legacyCopy, lastVersion: 1 });
    expect(await copies.claim(legacy, 1)).toBe(true);
    expect(await copies.claim(legacy, 0)).toBe(false);
    expect(await copies.claim(legacy, 3)).toBe(true);
    expect(JSON.parse((await state.get('copy:D0BOB:1.2'))?.value ?? 'null')).toEqual([
      'acme',
      'T0ACME',
      legacyCopy.sendId,
      'bób@acme.test',
      'U0BOB',
      3,
    ]);
    expect(await state.get('shown:D0BOB:1.2')).toBeNull();
  });

  it('reads a record in the object form of releases before, and rewrites it as an array', async () => {
    const { state, copies } = setup();
    await state.set('copy:D0BOB:1.3', JSON.stringify(legacyCopy));
    expect(await copies.legacy('D0BOB', '1.3')).toEqual(legacyCopy);
    expect(await copies.claim(readSlackRef({ channel: 'D0BOB', ts: '1.3' }), 3)).toBe(true);
    expect(JSON.parse((await state.get('copy:D0BOB:1.3'))?.value ?? 'null')).toEqual([
      'acme',
      'T0ACME',
      legacyCopy.sendId,
      'bób@acme.test',
      'U0BOB',
      3,
    ]);
  });

  it('treats a record in neither form, or none, as absent for a message of an earlier release', async () => {
    const { state, copies } = setup();
    // An earlier release spreads the array it read into an object and writes that back.
    await state.set(
      'copy:D0BOB:1.4',
      JSON.stringify({ ...['acme', 'T0ACME', legacyCopy.sendId], lastVersion: 2 }),
    );
    expect(await copies.legacy('D0BOB', '1.4')).toBeNull();
    await expect(copies.claim(readSlackRef({ channel: 'D0BOB', ts: '1.4' }), 3)).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(copies.claim(readSlackRef({ channel: 'D0BOB', ts: '1.5' }), 3)).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('keeps the newest view shown for the retention after its last write, plus a day', async () => {
    const hour = 60 * 60_000;
    const { clock, state, copies } = setup(hour);
    await copies.claim(delivered, 3);
    clock.advance(24 * hour);
    await copies.claim(delivered, 4);
    clock.advance(25 * hour - 1);
    expect((await state.get('shown:D0BOB:1.1'))?.value).toBe('4');
    clock.advance(1);
    expect(await state.get('shown:D0BOB:1.1')).toBeNull();
  });
});
