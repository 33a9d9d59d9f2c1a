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

  it.each([
    [0],
    [-1],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [{ days: 36_501 }],
    [{ days: 1e14 }],
    [1e22],
  ])(
    'a retention that is not positive or longer than 100 years, which Redis could not store: %j',
    (retention) => {
      expect(() => create({ retention })).toThrow(
        /^retention must be a positive duration of at most 100 years \(36500 days\), got /,
      );
    },
  );

  it('takes a retention of up to 100 years', () => {
    expect(() => create({ retention: { days: 36_500 } })).not.toThrow();
    expect(() => create({ retention: 1 })).not.toThrow();
  });

  it('takes a rate limit with a fractional burst or rate', () => {
    expect(() => create({ rateLimits: { perOrganization: { burst: 1.5, perSecond: 0.1 } } })).not.toThrow();
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, 1e12])('a duePollMs of %s', (duePollMs) => {
    expect(() => create({ duePollMs })).toThrow(RangeError);
  });

  it('a rate limit given as undefined keeps its default; a limit of no known name is refused', async () => {
    const notifier = create({
      rateLimits: { perKey: undefined, perOrganization: { burst: 1, perSecond: 1 } },
    });
    await notifier.seed(testSeed);
    expect(() =>
      create({
        rateLimits: { perkey: { burst: 1, perSecond: 1 } } as unknown as NotifierOptions['rateLimits'],
      }),
    ).toThrow(
      'rateLimits.perkey is no limit; the limits are perKey, perOrganization, failedAuthentication, keyCreation',
    );
  });

  it.each([
    ['clock', 'an empty object', {}, 'clock must have now() answering milliseconds since the epoch'],
    ['clock', 'Date.now', Date.now, 'clock must have now()'],
    ['ids', 'an empty object', {}, 'ids must have notificationId, requestId and internalId'],
    ['scheduler', 'a number', 5, "scheduler must have now and schedule, as RxJS's schedulers"],
  ])('a %s that is not one: %s', (name, _what, given, message) => {
    expect(() => create({ [name]: given } as Partial<NotifierOptions>)).toThrow(message);
  });

  it('takes callbacks: null as no callback transport', () => {
    expect(() => create({ callbacks: null as unknown as undefined })).not.toThrow();
  });

  it('refuses a trustProxy list entry that is no string, and leaves the transports free for the next try', () => {
    const inbox = inboxTransport();
    expect(() => create({ transports: [inbox], trustProxy: [1] as unknown as string[] })).toThrow(
      'trustProxy: 1 is neither a hop count (a whole number >= 0) nor a list of IP addresses and CIDR ranges',
    );
    expect(() => create({ transports: [inbox], trustProxy: ['10.0.0.0/8'] })).not.toThrow();
  });

  it('the factory of the callback transport instead of the transport it makes', () => {
    expect(() => create({ callbacks: httpCallbacks as unknown as CallbackTransport })).toThrow(
      'callbacks must be a callback transport with send and resolver (call httpCallbacks(), do not pass it)',
    );
    expect(() => create({ callbacks: httpCallbacks() })).not.toThrow();
  });

  it.each([
    ['no options at all', undefined, 'createNotifier needs its options: { storage, transports }'],
    [
      'no storage',
      { transports: [] },
      "storage must be a storage adapter's ports, as memoryStorage(), redisStorage(...) or mongoStorage(...) answer; missing: directory, requests",
    ],
    [
      'the storage factory, uncalled',
      { storage: memoryStorage, transports: [] },
      'storage must be a storage: call its factory (memoryStorage()), do not pass it',
    ],
    [
      'a storage without one of its ports',
      { storage: { ...memoryStorage(), dueWork: undefined }, transports: [] },
      'missing: dueWork',
    ],
    [
      'no transports',
      { storage: memoryStorage() },
      'transports must be an array of chat transports, such as [inboxTransport()]',
    ],
    [
      'a transport factory, uncalled',
      { storage: memoryStorage(), transports: [inboxTransport] },
      'transports[0] must be a chat transport: call its factory (inboxTransport()), do not pass it',
    ],
    [
      'something else among the transports',
      { storage: memoryStorage(), transports: [{ platform: 'x' }] },
      'transports[0] must be a chat transport with platform, routes, address, deliver, update and connect',
    ],
    [
      'rate limits that are no object',
      { storage: memoryStorage(), transports: [], rateLimits: 'x' },
      'rateLimits must be an object of limits ({ perKey, perOrganization, keyCreation }), got string',
    ],
    [
      'a logger without its methods',
      { storage: memoryStorage(), transports: [], logger: { info() {} } },
      'logger must have debug, info, warn and error methods (console has them)',
    ],
  ])('%s, naming the mistake rather than failing on first use', (_what, options, message) => {
    expect(() => createNotifier(options as unknown as NotifierOptions)).toThrow(TypeError);
    expect(() => createNotifier(options as unknown as NotifierOptions)).toThrow(message);
  });

  it('takes null for a logger or rate limits, as their defaults, as plain JavaScript may pass', () => {
    const options = { storage: memoryStorage(), transports: [], logger: null, rateLimits: null };
    expect(() => createNotifier(options as unknown as NotifierOptions)).not.toThrow();
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
