import { describe, expect, it } from 'vitest';
import { type AuditEntry, auditLog } from '../../account/audit-log.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { manualClock } from '../support/manual-clock.js';

const day = 24 * 3600_000;

const entry = (at: number, label: string): AuditEntry => ({
  at: new Date(at).toISOString(),
  action: 'create',
  actor: { userId: 'usr_alice', name: 'Alice Doe', email: 'alice@acme.test' },
  key: {
    id: `key_${label}`,
    prefix: 'cnk_abcdefgh',
    label,
    owner: { name: 'Alice Doe', email: 'alice@acme.test' },
  },
  clientAddress: '192.0.2.1',
});

describe('the audit record of key operations', () => {
  it('keeps the entries of the retention period across months, newest first, per organization', async () => {
    const clock = manualClock(Date.parse('2026-01-20T00:00:00.000Z'));
    const log = auditLog(memoryStorage({ clock }).transportState, clock, 90 * day);
    await log.record('acme', entry(clock.now(), 'january'));
    clock.set(Date.parse('2026-03-31T12:00:00.000Z'));
    await log.record('acme', entry(clock.now(), 'march'));
    await log.record('acme', entry(clock.now(), 'march, same millisecond'));
    await log.record('globex', entry(clock.now(), 'elsewhere'));
    clock.set(Date.parse('2026-04-05T00:00:00.000Z'));
    await log.record('acme', entry(clock.now(), 'april'));

    const labels = async (limit = 10) => (await log.recent('acme', limit)).map((each) => each.key.label);
    expect(await labels()).toEqual(['april', 'march, same millisecond', 'march', 'january']);
    expect(await labels(2)).toEqual(['april', 'march, same millisecond']);

    clock.set(Date.parse('2026-04-20T00:00:01.000Z'));
    expect(await labels()).toEqual(['april', 'march, same millisecond', 'march']);
    expect((await log.recent('globex', 10)).map((each) => each.key.label)).toEqual(['elsewhere']);
  });
});
