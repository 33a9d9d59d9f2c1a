/** Structured fields of a log line. Never put secrets, keys or message bodies here. */
export type LogFields = Record<string, unknown>;

/** Where the library reports what it does. Each method must not throw. */
export interface Logger {
  debug: (message: string, fields?: LogFields) => void;
  info: (message: string, fields?: LogFields) => void;
  warn: (message: string, fields?: LogFields) => void;
  error: (message: string, fields?: LogFields) => void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
