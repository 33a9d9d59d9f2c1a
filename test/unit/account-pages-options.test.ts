import { describe, expect, it } from 'vitest';
import { accountPages } from '../../account/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';

const pagesWith = (extra: Record<string, unknown>) => {
  const storage = memoryStorage();
  return accountPages({
    notifier: createNotifier({ storage, transports: [] }),
    state: scopedTransportState(storage.transportState, 'account'),
    csrfSecret: 'a-secret-of-at-least-thirty-two-characters',
    resolveUser: async () => null,
    ...extra,
  });
};

describe('accountPages refuses numeric options it could not run with, at creation', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('auditRetentionMs %s', (auditRetentionMs) => {
    expect(() => pagesWith({ auditRetentionMs })).toThrow(
      new RangeError(
        `accountPages: auditRetentionMs must be a number of milliseconds, more than 0, got ${auditRetentionMs}`,
      ),
    );
  });

  it.each([0, 1.5, -3, Number.NaN])('auditLimit %s', (auditLimit) => {
    expect(() => pagesWith({ auditLimit })).toThrow(
      new RangeError(`accountPages: auditLimit must be a whole number, 1 or more, got ${auditLimit}`),
    );
  });

  it('takes positive ones', () => {
    expect(() => pagesWith({ auditRetentionMs: 3_600_000, auditLimit: 10 })).not.toThrow();
  });
});
