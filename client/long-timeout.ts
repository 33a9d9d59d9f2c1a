/** The longest delay `setTimeout` keeps: Node fires a longer one after 1 ms, with a warning. */
const longestTimerMs = 2 ** 31 - 1;

/**
 * Calls `callback` once `ms` milliseconds have passed, however long that is (`Infinity`: never),
 * by re-arming a timer in steps `setTimeout` can take. Answers what cancels it.
 */
export function setLongTimeout(callback: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number): void => {
    if (left === Number.POSITIVE_INFINITY) return;
    const step = Math.min(left, longestTimerMs);
    timer = setTimeout(() => (left > step ? arm(left - step) : callback()), step);
  };
  arm(ms);
  return () => clearTimeout(timer);
}
