import { createClient, TimeoutError } from 'redis';
import { describe, expect, it } from 'vitest';
import { redisStorage } from '../../adapters/storage/redis/index.js';
import { replyWatchdog } from '../../adapters/storage/redis/reply-watchdog.js';

/** A command whose reply comes only when the test says: a server that stopped answering. */
function heldReply() {
  let answer: (reply: string) => void = () => {};
  const reply = new Promise<string>((resolve) => {
    answer = resolve;
  });
  return { reply, answer };
}

describe('the reply watchdog of a Redis connection', () => {
  it('fails a command the connection gives no reply to within the stall time, then fails the next at once without sending it', async () => {
    const watchdog = replyWatchdog(50);
    const held = heldReply();
    const started = Date.now();
    await expect(watchdog.watch(() => held.reply)).rejects.toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(Date.now() - started).toBeLessThan(1_000);
    let sent = false;
    await expect(
      watchdog.watch(async () => {
        sent = true;
        return 'never';
      }),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(sent).toBe(false);
  });

  it('lets commands through again once the connection answers', async () => {
    const watchdog = replyWatchdog(50);
    const held = heldReply();
    await expect(watchdog.watch(() => held.reply)).rejects.toBeInstanceOf(TimeoutError);
    held.answer('late');
    await held.reply;
    await new Promise((resolve) => setImmediate(resolve));
    expect(await watchdog.watch(async () => 'PONG')).toBe('PONG');
  });

  it('counts a command that throws at once as answered, so that the connection is never taken for stalled', async () => {
    const watchdog = replyWatchdog(50);
    await expect(
      watchdog.watch(() => {
        throw new Error('refused before sending');
      }),
    ).rejects.toThrow('refused before sending');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await watchdog.watch(async () => 'PONG')).toBe('PONG');
  });

  it('never fails a slow command while other replies keep coming', async () => {
    const watchdog = replyWatchdog(50);
    const slow = heldReply();
    const waiting = watchdog.watch(() => slow.reply);
    for (let i = 0; i < 8; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await watchdog.watch(async () => i)).toBe(i);
    }
    slow.answer('done');
    expect(await waiting).toBe('done');
  });
});

describe('redisStorage stallMs', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])(
    'refuses %s with a RangeError',
    (stallMs) => {
      expect(() => redisStorage({ client: createClient(), stallMs })).toThrow(RangeError);
    },
  );
});
