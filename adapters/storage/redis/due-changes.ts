import type { DueItem, DueWorkChanges } from '../../../core/adapter-kit.js';

/** Script arguments of one due item: id, kind, requestId, runAt, attempt (what `apply_due` reads). */
export const encodeDueItem = (item: DueItem): string[] => [
  item.id,
  item.kind,
  item.requestId,
  String(item.runAt),
  String(item.attempt),
];

/** Script arguments of due-work changes: the count and ids of cancels, then the count and fields of enqueues. */
export function encodeDueChanges(changes: DueWorkChanges): string[] {
  return [
    String(changes.cancel.length),
    ...changes.cancel,
    String(changes.enqueue.length),
    ...changes.enqueue.flatMap(encodeDueItem),
  ];
}
