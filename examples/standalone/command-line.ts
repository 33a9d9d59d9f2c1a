import { parseArgs } from 'node:util';
import type { StandaloneConfig } from './config.js';
import type { StorageBudget } from './storage-wait.js';

/** What the command line asks for. */
export interface CommandLine {
  help: boolean;
  /** `--wait-for-storage <seconds>`. */
  waitForStorage?: number;
}

/** The text of `chat-notify --help`. */
export const usage = `Usage: chat-notify [--wait-for-storage <seconds>]

Starts the chat-notify standalone service. Settings come from the environment (PORT, HOST,
NOTIFY_STORAGE, NOTIFY_SEED, ...; see the README).

  --wait-for-storage <seconds>  how long to wait for the storage at start-up before exiting with
                                code 1 (also NOTIFY_WAIT_FOR_STORAGE); without it, wait as long
                                as it takes
  --help                        show this text
`;

/** Reads the arguments after the script name; throws with a message naming what is wrong. */
export function readCommandLine(args: readonly string[]): CommandLine {
  const { values } = parseArgs({
    args: [...args],
    options: { 'wait-for-storage': { type: 'string' }, help: { type: 'boolean', default: false } },
    strict: true,
    allowPositionals: false,
  });
  const seconds = values['wait-for-storage'];
  if (seconds === undefined) return { help: values.help };
  const waitForStorage = Number(seconds);
  // Decimal digits, as NOTIFY_WAIT_FOR_STORAGE: `0x1E` or `3e1` would be a time the operator did not write.
  if (!/^\d+(\.\d+)?$/.test(seconds.trim()))
    throw new Error(
      `--wait-for-storage takes a number of seconds (0 or more); got ${JSON.stringify(seconds)}`,
    );
  // Digits past about 1.8e308 read as Infinity, a wait the operator did not write either.
  if (!Number.isFinite(waitForStorage))
    throw new Error(
      '--wait-for-storage takes a number of seconds small enough to represent (below about 1.8e308)',
    );
  return { help: values.help, waitForStorage };
}

/** The start-up budget for storage: the flag, else the environment, else none (wait as long as it takes). */
export function storageBudget(commandLine: CommandLine, config: StandaloneConfig): StorageBudget | undefined {
  if (commandLine.waitForStorage !== undefined)
    return { seconds: commandLine.waitForStorage, setting: '--wait-for-storage' };
  if (config.NOTIFY_WAIT_FOR_STORAGE !== undefined)
    return { seconds: config.NOTIFY_WAIT_FOR_STORAGE, setting: 'NOTIFY_WAIT_FOR_STORAGE' };
  return undefined;
}
