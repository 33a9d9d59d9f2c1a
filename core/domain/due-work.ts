/** The kinds of durable, scheduled work. */
/**
 * `timeout`: a request's expiry; `callback`: an attempt at its completion callback; `refresh`: a
 * retry of the message updates that failed on a chat platform, or that a write pledged and no one
 * made.
 */
export type DueWorkKind = 'timeout' | 'callback' | 'refresh';

/** A piece of work to run at or after `runAt`, stored durably and claimed by exactly one worker. */
export interface DueItem {
  /** Unique; enqueueing an existing id replaces the item. */
  id: string;
  kind: DueWorkKind;
  requestId: string;
  /** Epoch milliseconds. */
  runAt: number;
  /** 0 for the first attempt; incremented on each reschedule. */
  attempt: number;
}

/** A due item held by one worker until its lease ends. */
export interface ClaimedDueItem extends DueItem {
  /** Proves ownership: completing or rescheduling with a stale token does nothing. */
  leaseToken: string;
}

/** Id of the timeout item of a request. */
export const timeoutItemId = (requestId: string): string => `timeout:${requestId}`;
/** Id of the completion-callback item of a request. */
export const callbackItemId = (requestId: string): string => `callback:${requestId}`;
/** Id of the pending message refresh of a request. */
export const refreshItemId = (requestId: string): string => `refresh:${requestId}`;
/**
 * Id of the refresh a write of version `version` of a request schedules with itself, in case its
 * copies are never updated (its process dies first, or the answer of the write is lost), and
 * cancels once they are: one per version, so that a later write's never meets an earlier one's.
 */
export const pledgedRefreshItemId = (requestId: string, version: number): string =>
  `refresh:${requestId}:${version}`;
