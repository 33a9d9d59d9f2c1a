import { describe, expect, it } from 'vitest';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { type CallbackTransport, createNotifier, type NotifierOptions } from '../../core/index.js';
import { testSeed } from '../support/test-seed.js';

const create = (options: Partial<NotifierOptions>) =>
  createNotifier({ storage: memoryStorage(), transports: [], ...options });

describe('createNotifier refuses options it could not run with, at creation', () => {
  it.each([
    [{ burst: Number.POSITIVE_INFINITY, perSecond: Number.POSITIVE_INFINITY }],
    [{ burst: Number.NaN, perSecond: 2 }],
    [{ burst: 10 }],
    [{ burst: 0, perSecond: 5 }],
    [{ burst: 10, perSecond: 0 }],
    [{ burst: 0.5, perSecond: 1 }],
    [null],
  ])('a rate limit that lets nothing through or is no number: %j', (perKey) => {
    expect(() => create({ rateLimits: { perKey } as unknown as NotifierOptions['rateLimits'] })).toThrow(
      /^rateLimits\.perKey must be \{ burst, perSecond \}/,
    );
  });

  it('takes a rate limit with a fractional burst or rate', () => {
    expect(() => create({ rateLimits: { perOrganization: { burst: 1.5, perSecond: 0.1 } } })).not.toThrow();
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, 1e12])('a duePollMs of %s', (duePollMs) => {
    expect(() => create({ duePollMs })).toThrow(RangeError);
  });

  it('the factory of the callback transport instead of the transport it makes', () => {
    expect(() => create({ callbacks: httpCallbacks as unknown as CallbackTransport })).toThrow(
      'callbacks must be a callback transport with send and resolver (call httpCallbacks(), do not pass it)',
    );
    expect(() => create({ callbacks: httpCallbacks() })).not.toThrow();
  });

  it('a transport another notifier is connected to', () => {
    const inbox = inboxTransport();
    create({ transports: [inbox] });
    expect(() => create({ transports: [inbox] })).toThrow(
      'The inbox transport is connected to another notifier already; create one per notifier',
    );
  });
});

describe('notifier.findUser', () => {
  it("finds a user of an organization by address, as sends match recipients, and nobody of another organization's", async () => {
    const notifier = create({});
    await notifier.seed(testSeed);
    const bob = await notifier.findUser('acme', '  Bob@ACME.test ');
    expect(bob).toMatchObject({ organizationId: 'acme', email: 'bob@acme.test' });
    expect(bob?.id).toMatch(/^usr_/);
    expect(await notifier.findUser('globex', 'bob@acme.test')).toBeNull();
    expect(await notifier.findUser('acme', 'nobody@acme.test')).toBeNull();
  });
});
