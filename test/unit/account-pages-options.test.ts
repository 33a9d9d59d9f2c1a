import { describe, expect, it } from 'vitest';
import { accountPages } from '../../account/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { accountMount, appUserCookie, startAccountApp } from '../support/account-app.js';

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

describe('accountPages refuses what its pages could not run with, at creation', () => {
  const storage = memoryStorage();
  const notifier = createNotifier({ storage, transports: [] });
  const state = scopedTransportState(storage.transportState, 'account');
  const resolveUser = async () => null;

  it.each([
    [
      'no state',
      { notifier, resolveUser },
      "accountPages needs state: scopedTransportState(storage.transportState, 'account')",
    ],
    [
      'the storage in place of its state',
      { notifier, resolveUser, state: storage },
      'accountPages needs state',
    ],
    [
      'no notifier',
      { state, resolveUser },
      'accountPages needs notifier: the notifier whose keys the pages manage',
    ],
  ])('%s', (_what, options, message) => {
    expect(() => accountPages(options as unknown as Parameters<typeof accountPages>[0])).toThrow(TypeError);
    expect(() => accountPages(options as unknown as Parameters<typeof accountPages>[0])).toThrow(message);
  });

  it('a basePath that does not start with a slash', () => {
    expect(() => pagesWith({ basePath: 'settings' })).toThrow(
      new RangeError('accountPages: basePath must start with "/", got "settings"'),
    );
    expect(() => pagesWith({ basePath: '/settings/' })).not.toThrow();
    expect(() => pagesWith({ basePath: '' })).not.toThrow();
  });

  it.each([
    ['resolveUser', 'x', 'accountPages: resolveUser must be a function answering who is signed in'],
    ['logger', {}, 'accountPages: logger must have debug, info, warn and error methods'],
    ['clock', {}, 'accountPages: clock must have now() answering milliseconds since the epoch'],
  ])('a %s that is none (%j), which failed every page at its first use', (name, given, message) => {
    expect(() => pagesWith({ [name]: given })).toThrow(new TypeError(message).message);
  });

  it('takes a logger that is a function carrying the methods (anylogger, roarr)', () => {
    const logger = Object.assign(() => undefined, { debug() {}, info() {}, warn() {}, error() {} });
    expect(() => pagesWith({ logger })).not.toThrow();
  });

  it('an invalid trustProxy, without a basePath too', () => {
    expect(() => pagesWith({ trustProxy: 'not an address' })).toThrow(RangeError);
  });
});

describe.each(['express', 'koa'] as const)('account pages without a basePath, on %s', (kind) => {
  it('link, post and redirect under the path the host mounted them at', async () => {
    const app = await startAccountApp(kind, { mountFromHost: true, signInPath: '/login' });
    try {
      const page = await fetch(`${app.pagesUrl}/account`, {
        headers: { cookie: `${appUserCookie}=${encodeURIComponent('alice@acme.test')}` },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`action="${accountMount}/account/keys"`);
      expect(html).toContain(`href="${accountMount}/admin/keys"`);
      const signedOut = await fetch(`${app.pagesUrl}/account`, { redirect: 'manual' });
      expect(signedOut.headers.get('location')).toBe(
        `/login?next=${encodeURIComponent(`${accountMount}/account`)}`,
      );
    } finally {
      await app.close();
    }
  });
});
