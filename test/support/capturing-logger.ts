import type { LogFields, Logger } from '../../core/ports/logger.js';

/** One line a {@link capturingLogger} kept. */
export interface LogEntry {
  level: keyof Logger;
  message: string;
  fields: LogFields | undefined;
}

/** A logger that keeps every line. */
export function capturingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: keyof Logger) =>
    (message: string, fields?: LogFields): void => {
      entries.push({ level, message, fields });
    };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
