/** The minute last formatted and its text: timeouts falling due together share their minute. */
let lastMinute = Number.NaN;
let lastText = '';

/** `2026-11-22 05:00 UTC`: unambiguous for readers in every time zone. */
export function formatUtc(epochMs: number): string {
  const minute = Math.floor(epochMs / 60_000);
  if (minute !== lastMinute) {
    lastText = `${new Date(epochMs).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    lastMinute = minute;
  }
  return lastText;
}

const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;

/** `1 hour 30 minutes`; fractions of a minute show as seconds. */
export function formatDuration(ms: number): string {
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const parts = [
    hours > 0 ? plural(hours, 'hour') : '',
    minutes > 0 ? plural(minutes, 'minute') : '',
    seconds > 0 ? plural(seconds, 'second') : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : '0 seconds';
}
