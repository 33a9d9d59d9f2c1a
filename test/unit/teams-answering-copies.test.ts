import { describe, expect, it } from 'vitest';
import { AnsweringCopies } from '../../adapters/chat/teams/clicks.js';

const key = AnsweringCopies.key('a:conversation', '1');

describe('Teams: copies whose click is being answered', () => {
  it('leaves every update of a copy to an answer in progress, and tells the answer', async () => {
    const answering = new AnsweringCopies();
    let leftDuring = false;
    const { updateLeft } = await answering.during(key, async () => {
      leftDuring = answering.leaveUpdate(key, 9);
    });
    expect(leftDuring).toBe(true);
    expect(updateLeft).toBe(true);
    expect(answering.leaveUpdate(key, 9)).toBe(false);
  });

  it('leaves to an answer that carried a view the updates to that view or an older one, until it was checked', () => {
    const answering = new AnsweringCopies();
    answering.carries(key, 4);
    expect(answering.leaveUpdate(key, 3)).toBe(true);
    expect(answering.leaveUpdate(key, 4)).toBe(true);
    expect(answering.leaveUpdate(key, 5)).toBe(false);
    expect(answering.leaveUpdate(AnsweringCopies.key('a:conversation', '2'), 4)).toBe(false);
    answering.checked(key);
    expect(answering.leaveUpdate(key, 4)).toBe(false);
  });

  it('keeps the newest view of two answers of one copy until both were checked', () => {
    const answering = new AnsweringCopies();
    answering.carries(key, 6);
    answering.carries(key, 5);
    answering.checked(key);
    expect(answering.leaveUpdate(key, 6)).toBe(true);
    answering.checked(key);
    expect(answering.leaveUpdate(key, 6)).toBe(false);
    answering.checked(key);
    expect(answering.leaveUpdate(key, 6)).toBe(false);
  });
});
