/** The kinds of durable, scheduled work. */
export type DueWorkKind = 'timeout' | 'callback';

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
