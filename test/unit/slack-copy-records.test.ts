import { describe, expect, it } from 'vitest';
import { type SlackCopy, slackCopies } from '../../adapters/chat/slack/copies.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { manualClock } from '../support/manual-clock.js';

const copy: SlackCopy = {
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

describe('Slack message records', () => {
  it('keeps a copy as an array of its fields, and reads every field back', async () => {
    const { state, copies } = setup();
    await copies.save('D0BOB', '1700000000.000100', copy);
    expect((await state.get('copy:D0BOB:1700000000.000100'))?.value).toBe(
      JSON.stringify(['acme', 'T0ACME', copy.sendId, 'bób@acme.test', 'U0BOB', 0]),
    );
    expect(await copies.get('D0BOB', '1700000000.000100')).toEqual(copy);
    expect(await copies.claim('D0BOB', '1700000000.000100', 2)).toEqual({ ...copy, lastVersion: 2 });
    expect(await copies.claim('D0BOB', '1700000000.000100', 1)).toBeNull();
    expect(await copies.get('D0BOB', '1700000000.000100')).toEqual({ ...copy, lastVersion: 2 });
  });

  it('reads a record in the object form of earlier releases, and rewrites it as an array', async () => {
    const { state, copies } = setup();
    await state.set('copy:D0BOB:1.2', JSON.stringify(copy));
    expect(await copies.get('D0BOB', '1.2')).toEqual(copy);
    expect(await copies.claim('D0BOB', '1.2', 3)).toEqual({ ...copy, lastVersion: 3 });
    expect(JSON.parse((await state.get('copy:D0BOB:1.2'))?.value ?? 'null')).toEqual([
      'acme',
      'T0ACME',
      copy.sendId,
      'bób@acme.test',
      'U0BOB',
      3,
    ]);
  });

  it('treats a record in neither form as absent, as an earlier release would leave one it misread', async () => {
    const { state, copies } = setup();
    // An earlier release spreads the array it read into an object and writes that back.
    await state.set('copy:D0BOB:1.4', JSON.stringify({ ...['acme', 'T0ACME', copy.sendId], lastVersion: 2 }));
    expect(await copies.get('D0BOB', '1.4')).toBeNull();
    await expect(copies.claim('D0BOB', '1.4', 3)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps a record for the retention after its last write, plus a day', async () => {
    const hour = 60 * 60_000;
    const { clock, copies } = setup(hour);
    await copies.save('D0BOB', '1.3', copy);
    clock.advance(24 * hour);
    await copies.claim('D0BOB', '1.3', 1);
    clock.advance(25 * hour - 1);
    expect(await copies.get('D0BOB', '1.3')).toEqual({ ...copy, lastVersion: 1 });
    clock.advance(1);
    expect(await copies.get('D0BOB', '1.3')).toBeNull();
  });
});
