import type { LogFields, Logger } from '../../core/index.js';

type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger writing one JSON object per line to standard output. */
export function jsonLogger(
  minimum: Level = 'info',
  write: (line: string) => void = (line) => process.stdout.write(line),
): Logger {
  const log =
    (level: Level) =>
    (message: string, fields: LogFields = {}) => {
      if (order[level] < order[minimum]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
