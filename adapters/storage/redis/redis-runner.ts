import type { LuaScript } from './lua-script.js';
import type { RedisStorageClient } from './redis-client.js';
import { replyWatchdog } from './reply-watchdog.js';
import { toRedisStorageError } from './storage-unavailable.js';

/**
 * The only way the stores reach Redis: every command and script goes through here, so every store
 * method turns a lost connection into `NotifyError('unavailable')` and lets other errors through.
 */
export interface RedisRunner {
  /** Runs a cached script: one round trip, or two the first time a server sees it (after a restart or SCRIPT FLUSH). */
  evalScript(script: LuaScript, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Runs one plain command. */
  command(args: readonly string[]): Promise<unknown>;
}

// A caller's client may map replies to Buffers or Maps; the stores parse the defaults (strings, arrays).
const commandOptions = { typeMapping: {} };

/**
 * How long a connection may give no reply while a command waits before its commands fail as
 * `unavailable` (see {@link replyWatchdog}), unless told otherwise.
 */
const defaultStallMs = 5_000;

/** Builds the runner over a connected client that the caller owns. */
export function createRedisRunner(client: RedisStorageClient, stallMs = defaultStallMs): RedisRunner {
  const watchdog = replyWatchdog(stallMs);
  const round = (args: readonly string[]): Promise<unknown> =>
    watchdog.watch(() => client.sendCommand<unknown>(args, commandOptions));
  const send = async (args: readonly string[]): Promise<unknown> => {
    try {
      return await round(args);
    } catch (error) {
      throw toRedisStorageError(error);
    }
  };

  return {
    async evalScript(script, keys, args) {
      const tail = [String(keys.length), ...keys, ...args];
      try {
        return await round(['EVALSHA', script.sha, ...tail]);
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT')))
          throw toRedisStorageError(error);
      }
      // EVAL also caches the script, so the next EVALSHA of it succeeds.
      return send(['EVAL', script.source, ...tail]);
    },
    command: send,
  };
}
