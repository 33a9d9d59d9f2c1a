import { describe, expect, it } from 'vitest';
import { readConfig } from '../../examples/standalone/config.js';

describe('NOTIFY_RETENTION_DAYS', () => {
  it('keeps finished sends 30 days when unset or empty', () => {
    expect(readConfig({}).NOTIFY_RETENTION_DAYS).toBe(30);
    expect(readConfig({ NOTIFY_RETENTION_DAYS: '' }).NOTIFY_RETENTION_DAYS).toBe(30);
  });

  it('accepts whole and fractional days', () => {
    expect(readConfig({ NOTIFY_RETENTION_DAYS: '7' }).NOTIFY_RETENTION_DAYS).toBe(7);
    expect(readConfig({ NOTIFY_RETENTION_DAYS: '0.0001' }).NOTIFY_RETENTION_DAYS).toBe(0.0001);
  });

  it.each(['0', '-1', 'soon', '100000'])('refuses %s, naming the setting', (value) => {
    expect(() => readConfig({ NOTIFY_RETENTION_DAYS: value })).toThrow(/NOTIFY_RETENTION_DAYS/);
  });
});
