import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retryDelaysMs } from '../../core/callbacks/retry-schedule.js';
import { type CallbackReceiver, startReceiver } from '../support/callback-receiver.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { type CallbackSetup, callbackSetup, interactive, tableResolver } from './callback-setup.js';

const publicV4 = '93.184.216.34';
const publicV6 = '2606:2800:220:1:248:1893:25c8:1946';

/** Stands in for DNS: the names of the table below and what they resolve to. */
const dns = {
  'public.example': [publicV4, publicV6],
  'localhost.example': ['127.0.0.1', '::1'],
  'mixed.example': [publicV4, '10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
  'mapped.example': ['::ffff:10.1.2.3'],
  'compatible.example': [publicV4, '::7f00:1'],
  'nat64.example': ['64:ff9b::7f00:1'],
};

let setup: CallbackSetup;
let resolver: ReturnType<typeof tableResolver>;

beforeEach(async () => {
  resolver = tableResolver(dns);
  setup = await callbackSetup({ resolver });
});
afterEach(async () => {
  await setup.notifier.stop();
});

describe('callback_url at submission', () => {
  const notPublic = 'response_request.callback_url: the host does not resolve to a public address';

  it.each([
    ['https://localhost.example/hook', '127.0.0.1'],
    ['https://mixed.example/hook', '10.0.0.5'],
    ['https://metadata.example/hook', '169.254.169.254'],
    ['https://mapped.example/hook', '10.1.2.3'],
    ['https://compatible.example/hook', '7f00:1'],
    ['https://nat64.example/hook', '7f00:1'],
  ])(
    'refuses %s with 422 that says it is not public, without naming what it resolves to (%s)',
    async (url, address) => {
      const sent = await setup.send(interactive(url));
      expect(sent).toEqual({ status: 422, body: { status: 'error', details: notPublic } });
      expect(String(sent.body.details)).not.toContain(address);
    },
  );

  it.each([
    ['https://127.0.0.1/hook', '127.0.0.1'],
    ['https://10.0.0.1/hook', '10.0.0.1'],
    ['https://172.16.0.1/hook', '172.16.0.1'],
    ['https://192.168.1.1/hook', '192.168.1.1'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['https://100.64.0.1/hook', '100.64.0.1'],
    ['https://0.0.0.0/hook', '0.0.0.0'],
    ['https://[::1]/hook', '[::1]'],
    ['https://[::]/hook', '[::]'],
    ['https://[::ffff:127.0.0.1]/hook', '[::ffff:7f00:1]'],
    ['https://[fd00::1]/hook', '[fd00::1]'],
    ['https://[fe80::1]/hook', '[fe80::1]'],
    ['https://[ff02::1]/hook', '[ff02::1]'],
    ['https://[2001:db8::1]/hook', '[2001:db8::1]'],
    // IPv4-compatible IPv6, which ipaddr.js calls unicast.
    ['https://[::127.0.0.1]/hook', '[::7f00:1]'],
    ['https://[::7f00:1]/hook', '[::7f00:1]'],
    ['https://[::a00:1]/hook', '[::a00:1]'],
    ['https://[64:ff9b::127.0.0.1]/hook', '[64:ff9b::7f00:1]'],
    ['https://[2002:7f00:1::1]/hook', '[2002:7f00:1::1]'],
    ['https://[2001:0:808:808::80ff:fffe]/hook', '[2001:0:808:808::80ff:fffe]'],
    // IPv4 forms that the URL parser turns into 127.0.0.1.
    ['https://0x7f.1/hook', '127.0.0.1'],
    ['https://2130706433/hook', '127.0.0.1'],
    ['https://0177.0.0.1/hook', '127.0.0.1'],
    ['https://127.1/hook', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/hook', '127.0.0.1'],
    ['https://127.0.0.1./hook', '127.0.0.1'],
  ])('refuses the literal %s with 422 that says %s is not public', async (url, host) => {
    expect(await setup.send(interactive(url))).toEqual({
      status: 422,
      body: { status: 'error', details: `response_request.callback_url: ${host} is not a public address` },
    });
    expect(resolver.lookups).toEqual([]);
  });

  it('refuses a host that does not resolve with the 422 of a private one: which internal names exist stays unsaid', async () => {
    const sent = await setup.send(interactive('https://nowhere.example/hook'));
    expect(sent).toEqual({ status: 422, body: { status: 'error', details: notPublic } });
  });

  it('refuses a resolver that does not answer in time with 422', async () => {
    const slow = await callbackSetup({
      resolver: { resolve: () => new Promise(() => undefined) },
      lookupTimeoutMs: 50,
    });
    const started = Date.now();
    const sent = await slow.send(interactive('https://slow.example/hook'));
    expect(sent).toEqual({ status: 422, body: { status: 'error', details: notPublic } });
    expect(Date.now() - started).toBeLessThan(6_000);
    await slow.notifier.stop();
  });

  it('refuses a host whose lookup fails with the 422 of a private one, and logs how it failed', async () => {
    const logger = capturingLogger();
    const failing = await callbackSetup({
      resolver: {
        resolve: (hostname) =>
          Promise.reject(Object.assign(new Error(`queryA ESERVFAIL ${hostname}`), { code: 'ESERVFAIL' })),
      },
      logger,
    });
    const sent = await failing.send(interactive('https://internal.example/hook'));
    expect(sent).toEqual({ status: 422, body: { status: 'error', details: notPublic } });
    expect(logger.entries).toContainEqual(
      expect.objectContaining({ fields: { error: 'Error: queryA ESERVFAIL internal.example' } }),
    );
    await failing.notifier.stop();
  });

  it.each([
    ['http://public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['/relative/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['ftp://public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    // What the URL parser would repair into a URL, but is none as written (RFC 3986).
    ['https:public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https:/public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https:\\\\public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://public.example\\hook', 'response_request.callback_url: must be an absolute https: URL'],
    [' https://public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://public.example/hook ', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://public.example/a hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://public.example/\thook', 'response_request.callback_url: must be an absolute https: URL'],
    // An empty authority, which the URL parser skips to make the path's first segment the host.
    ['https:///public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https:////public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://///93.184.216.34/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://user:pw@public.example/hook', 'response_request.callback_url: must not contain user info'],
    ['https://user@public.example/hook', 'response_request.callback_url: must not contain user info'],
    ['https://@public.example/hook', 'response_request.callback_url: must not contain user info'],
    ['https://:@public.example/hook', 'response_request.callback_url: must not contain user info'],
    ['https://public.example:0/hook', 'response_request.callback_url: must not use port 0'],
    ['https://[::1]:0/hook', 'response_request.callback_url: must not use port 0'],
  ])('refuses %s with 400', async (url, details) => {
    expect(await setup.send(interactive(url))).toEqual({ status: 400, body: { status: 'error', details } });
  });

  /** Bob's messages, as the inbox lists them. */
  const inboxOfBob = async (): Promise<unknown[]> => {
    const listed = await setup.notifier.handle({
      method: 'GET',
      url: '/inbox/api/messages?email=bob@acme.test',
      headers: {},
      body: null,
      clientAddress: '127.0.0.1',
    });
    return JSON.parse(String(listed?.body)) as unknown[];
  };

  it('accepts a public https target and stores nothing for refused ones', async () => {
    const sent = await setup.send(interactive('https://public.example/hook'));
    expect(sent.status).toBe(200);
    expect(sent.body.callback_secret).toMatch(/^whsec_/);
    expect(await inboxOfBob()).toHaveLength(1);
    await setup.send(interactive('https://10.0.0.1/hook'));
    expect(await inboxOfBob()).toHaveLength(1);
  });

  it('names a host that does not resolve under the development option, where nothing internal is hidden', async () => {
    const target = await callbackSetup({ resolver: tableResolver({}), allowInsecure: true });
    const sent = await target.send(interactive('http://nowhere.example/hook'));
    expect(sent).toEqual({
      status: 422,
      body: {
        status: 'error',
        details: 'response_request.callback_url: the host nowhere.example does not resolve',
      },
    });
    await target.notifier.stop();
  });
});

describe('callback_url at delivery', () => {
  let receiver: CallbackReceiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  async function finish(target: CallbackSetup, url: string) {
    const sent = await target.send(interactive(url));
    expect(sent.status).toBe(200);
    const requestId = String(sent.body.request_id);
    await target.click(requestId, 'bob@acme.test', 'approve');
    await target.click(requestId, 'dave@acme.test', 'approve');
    await target.notifier.runDueWork();
    return requestId;
  }

  it('re-resolves on every attempt and refuses a rebinding answer without connecting', async () => {
    // Public when validated at submission, then the loopback address where the receiver listens.
    const rebinding = tableResolver({ 'rebind.example': [[publicV4], ['127.0.0.1']] });
    const target = await callbackSetup({ resolver: rebinding, timeoutMs: 300 });
    await finish(target, `https://rebind.example:${receiver.port}/hook`);
    expect(rebinding.lookups).toEqual(['rebind.example', 'rebind.example']);
    expect(receiver.received).toHaveLength(0);
    target.clock.advance(6_000);
    await target.notifier.runDueWork();
    expect(rebinding.lookups).toHaveLength(3);
    expect(receiver.connections()).toBe(0);
    await target.notifier.stop();
  });

  it('refuses at delivery, by the same policy, a rebinding answer that hides loopback in IPv6', async () => {
    const rebinding = tableResolver({ 'rebind6.example': [[publicV4], ['::7f00:1']] });
    const target = await callbackSetup({ resolver: rebinding, timeoutMs: 300 });
    await finish(target, `https://rebind6.example:${receiver.port}/hook`);
    for (const delay of retryDelaysMs) {
      target.clock.advance(delay * 1.2);
      await target.notifier.runDueWork();
    }
    expect(rebinding.lookups).toHaveLength(1 + retryDelaysMs.length + 1);
    expect(await target.notifier.failedCallbacks.list()).toEqual([
      expect.objectContaining({
        attempts: retryDelaysMs.length + 1,
        lastStatus: null,
        lastError:
          'target refused: response_request.callback_url: the host does not resolve to a public address',
      }),
    ]);
    await target.notifier.stop();
  });

  it('keeps how its lookup failed from the failed callback, which the organization reads, and logs it', async () => {
    let lookups = 0;
    const logger = capturingLogger();
    const target = await callbackSetup({
      logger,
      resolver: {
        resolve: async (hostname) => {
          lookups += 1;
          if (lookups === 1) return [publicV4];
          throw Object.assign(new Error(`queryA ESERVFAIL ${hostname}`), { code: 'ESERVFAIL' });
        },
      },
      timeoutMs: 300,
    });
    await finish(target, `https://failing.example:${receiver.port}/hook`);
    for (const delay of retryDelaysMs) {
      target.clock.advance(delay * 1.2);
      await target.notifier.runDueWork();
    }
    expect(await target.notifier.failedCallbacks.list()).toEqual([
      expect.objectContaining({
        lastError:
          'target refused: response_request.callback_url: the host does not resolve to a public address',
      }),
    ]);
    expect(logger.entries.filter((entry) => entry.message.startsWith('callback'))).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({ cause: 'Error: queryA ESERVFAIL failing.example' }),
      }),
    );
    await target.notifier.stop();
  });

  it('connects to the address it checked, not to a second lookup', async () => {
    // No DNS server knows hooks.example: the request can only reach the receiver through the pinned answer.
    const pinned = tableResolver({ 'hooks.example': ['127.0.0.1'] });
    const target = await callbackSetup({ resolver: pinned, allowInsecure: true });
    await finish(target, `http://hooks.example:${receiver.port}/hook`);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.host).toBe(`hooks.example:${receiver.port}`);
    await target.notifier.stop();
  });

  it('ignores proxy settings of the environment', async () => {
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
    process.env.HTTP_PROXY = 'http://127.0.0.1:9';
    process.env.http_proxy = 'http://127.0.0.1:9';
    try {
      const target = await callbackSetup({ allowInsecure: true });
      await finish(target, receiver.url());
      expect(receiver.received).toHaveLength(1);
      await target.notifier.stop();
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
