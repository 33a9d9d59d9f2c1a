import { describe, expect, it } from 'vitest';
import { adaptiveCard } from '../../adapters/chat/teams/card.js';
import { readTeamsRef, teamsCopies, teamsRef } from '../../adapters/chat/teams/copies.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { plainView } from '../../core/request/message-view.js';
import { manualClock } from '../support/manual-clock.js';

const tenantId = '33333333-3333-4333-8333-333333333333';
const message = { conversationId: 'a:1bob', activityId: '1:1' };
const ref = teamsRef(message, { version: 2, installationId: tenantId, userRef: '29:bob' });
const delivered = readTeamsRef(ref);
const cardOf = (version: number) => adaptiveCard(plainView('notif_1', `card ${version}`));
const shownKey = `shown:${JSON.stringify(['a:1bob', '1:1'])}`;
const copyKey = `copy:${JSON.stringify(['a:1bob', '1:2'])}`;

const setup = () => {
  const state = memoryStorage({ clock: manualClock() }).transportState;
  return { state, copies: teamsCopies(state, 60 * 60_000) };
};

describe('Teams message refs and records', () => {
  it('puts in the ref the message, the version it was delivered with, the tenant and the recipient', () => {
    expect(ref).toEqual({ conversationId: 'a:1bob', activityId: '1:1', v: '2', t: tenantId, u: '29:bob' });
    expect(delivered).toEqual({
      ...message,
      delivered: { version: 2, installationId: tenantId, userRef: '29:bob' },
    });
    expect(readTeamsRef(message).delivered).toBeNull();
    expect(readTeamsRef({ ...ref, v: 'two' }).delivered).toBeNull();
    expect(() => readTeamsRef({ conversationId: 'a:1bob' })).toThrow(/without conversationId and activityId/);
  });

  it('keeps nothing while a message shows the card it was delivered with; then the newest version shown', async () => {
    const { state, copies } = setup();
    expect(await copies.claim(delivered, 2, cardOf(2))).toBe(false);
    expect(await state.get(shownKey)).toBeNull();
    expect(await copies.claim(delivered, 4, cardOf(4))).toBe(true);
    expect((await state.get(shownKey))?.value).toBe('4');
    expect(await copies.claim(delivered, 4, cardOf(4))).toBe(true);
    expect(await copies.claim(delivered, 3, cardOf(3))).toBe(false);
    expect(await copies.superseded(delivered, 3)).toBe(true);
    expect(await copies.superseded(delivered, 4)).toBe(false);
  });

  it("claims a message of an earlier release by its record, keeping the card there for that release's instances", async () => {
    const { state, copies } = setup();
    const legacy = readTeamsRef({ conversationId: 'a:1bob', activityId: '1:2' });
    await expect(copies.claim(legacy, 1, cardOf(1))).rejects.toMatchObject({ code: 'not_found' });
    await state.set(copyKey, JSON.stringify({ sendId: 'req_1', lastVersion: 1, card: cardOf(1) }));
    expect(await copies.claim(legacy, 0, cardOf(0))).toBe(false);
    expect(await copies.claim(legacy, 1, cardOf(1))).toBe(true);
    expect(await copies.claim(legacy, 3, cardOf(3))).toBe(true);
    expect(JSON.parse((await state.get(copyKey))?.value ?? '{}')).toEqual({
      sendId: 'req_1',
      lastVersion: 3,
      card: cardOf(3),
    });
    expect((await copies.legacy('a:1bob', '1:2'))?.lastVersion).toBe(3);
    expect(await copies.superseded(legacy, 2)).toBe(true);
    expect(await copies.superseded(legacy, 3)).toBe(false);
    expect(await state.get(`shown:${JSON.stringify(['a:1bob', '1:2'])}`)).toBeNull();
  });
});
