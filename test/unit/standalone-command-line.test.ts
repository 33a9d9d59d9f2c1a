import { describe, expect, it } from 'vitest';
import { readCommandLine } from '../../examples/standalone/command-line.js';

describe('--wait-for-storage', () => {
  it('takes seconds in decimal digits, a fraction too', () => {
    expect(readCommandLine(['--wait-for-storage', '30']).waitForStorage).toBe(30);
    expect(readCommandLine(['--wait-for-storage', '2.5']).waitForStorage).toBe(2.5);
    expect(readCommandLine([]).waitForStorage).toBeUndefined();
  });

  it.each(['0x1E', '3e1', '', ' ', '-1', 'soon', 'Infinity'])('refuses %j, naming the flag', (value) => {
    expect(() => readCommandLine(['--wait-for-storage', value])).toThrow(/--wait-for-storage/);
  });
});
