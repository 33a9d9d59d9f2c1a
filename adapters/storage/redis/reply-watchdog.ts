import { TimeoutError } from 'redis';

/**
 * Fails the commands of a connection that stopped answering: a server that is frozen, or a network
 * that drops packets without closing the connection, leaves node-redis waiting for replies for as
 * long as the kernel keeps the connection (many minutes), and its own command timeout stops
 * counting once a command is written.
 */
export interface ReplyWatchdog {
  /**
   * Runs `command` (one round trip) and answers its reply, or rejects with node-redis's
   * `TimeoutError` once the connection has given no reply at all for the stall time while a command
   * waited, and at once, without sending anything, while it stays so. One reply ends the stall.
   */
  watch<T>(command: () => Promise<T>): Promise<T>;
}

/** A watchdog over one connection that counts it stalled after `stallMs` without any reply. */
export function replyWatchdog(stallMs: number): ReplyWatchdog {
  /** Rejections of the callers waiting now. */
  const waiting = new Set<(error: unknown) => void>();
  /** Commands sent and not answered, those whose callers were already failed included. */
  let outstanding = 0;
  /** When the connection last showed it answers: its last reply, or when it last had nothing to answer. */
  let answeredAt = 0;
  let timer: ReturnType<typeof setInterval> | undefined;

  const stalled = (): boolean => outstanding > 0 && Date.now() - answeredAt >= stallMs;

  const check = (): void => {
    if (outstanding === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    if (!stalled()) return;
    for (const reject of waiting) reject(new TimeoutError());
    waiting.clear();
  };

  const answered = (): void => {
    outstanding -= 1;
    answeredAt = Date.now();
  };

  return {
    watch<T>(command: () => Promise<T>): Promise<T> {
      if (stalled()) return Promise.reject(new TimeoutError());
      if (outstanding === 0) answeredAt = Date.now();
      outstanding += 1;
      // Checked a few times per stall time while commands are out, never holding the process open.
      timer ??= setInterval(check, Math.max(10, Math.floor(stallMs / 4))).unref();
      return new Promise<T>((resolve, reject) => {
        waiting.add(reject);
        let sent: Promise<T>;
        try {
          sent = command();
        } catch (error) {
          // A command that throws rather than rejecting is answered all the same: counted out.
          sent = Promise.reject(error);
        }
        sent.then(
          (reply) => {
            answered();
            waiting.delete(reject);
            resolve(reply);
          },
          (error: unknown) => {
            answered();
            waiting.delete(reject);
            reject(error);
          },
        );
      });
    },
  };
}
