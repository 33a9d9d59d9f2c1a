import { describe, expect, it } from 'vitest';
import { readCommandLine } from '../../examples/standalone/command-line.js';

describe('--wait-for-storage, as NOTIFY_WAIT_FOR_STORAGE', () => {
  it('refuses digits too many to represent, which read as Infinity, naming the flag', () => {
    expect(() => readCommandLine(['--wait-for-storage', '9'.repeat(400)])).toThrow(
      /--wait-for-storage takes a number of seconds small enough to represent/,
    );
    expect(readCommandLine(['--wait-for-storage', '9'.repeat(300)]).waitForStorage).toBe(
      Number('9'.repeat(300)),
    );
  });
});
