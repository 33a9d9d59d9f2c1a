import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nonPublicReason } from '../../core/callbacks/public-address.js';
import { type CallbackReceiver, startReceiver } from '../support/callback-receiver.js';
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
};

let setup: CallbackSetup;
const resolver = tableResolver(dns);

beforeEach(async () => {
  setup = await callbackSetup({ resolver });
});
afterEach(async () => {
  await setup.notifier.stop();
});

describe('callback_url at submission', () => {
  it.each([
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://172.16.0.1/hook', 'private'],
    ['https://192.168.1.1/hook', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['https://100.64.0.1/hook', 'carrierGradeNat'],
    ['https://0.0.0.0/hook', 'unspecified'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[fd00::1]/hook', 'uniqueLocal'],
    ['https://localhost.example/hook', 'loopback'],
    ['https://mixed.example/hook', 'private'],
    ['https://metadata.example/hook', 'linkLocal'],
    ['https://mapped.example/hook', 'private'],
  ])('refuses %s with 422 naming the %s address', async (url, range) => {
    const sent = await setup.send(interactive(url));
    expect(sent.status).toBe(422);
    expect(sent.body.status).toBe('error');
    expect(String(sent.body.details)).toMatch(/^response_request\.callback_url: must be publicly reachable/);
    expect(String(sent.body.details)).toContain(range);
  });

  it('refuses a host that does not resolve with 422', async () => {
    const sent = await setup.send(interactive('https://nowhere.example/hook'));
    expect(sent).toEqual({
      status: 422,
      body: {
        status: 'error',
        details: 'response_request.callback_url: the host nowhere.example does not resolve',
      },
    });
  });

  it('refuses a resolver that does not answer in time with 422', async () => {
    const slow = await callbackSetup({
      resolver: { resolve: () => new Promise(() => undefined) },
      lookupTimeoutMs: 50,
    });
    const started = Date.now();
    const sent = await slow.send(interactive('https://slow.example/hook'));
    expect(sent.status).toBe(422);
    expect(String(sent.body.details)).toMatch(/could not be resolved/);
    expect(Date.now() - started).toBeLessThan(6_000);
    await slow.notifier.stop();
  });

  it.each([
    ['http://public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['/relative/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['ftp://public.example/hook', 'response_request.callback_url: must be an absolute https: URL'],
    ['https://user:pw@public.example/hook', 'response_request.callback_url: must not contain user info'],
    ['https://user@public.example/hook', 'response_request.callback_url: must not contain user info'],
  ])('refuses %s with 400', async (url, details) => {
    expect(await setup.send(interactive(url))).toEqual({ status: 400, body: { status: 'error', details } });
  });

  it('accepts a public https target and stores nothing for refused ones', async () => {
    const sent = await setup.send(interactive('https://public.example/hook'));
    expect(sent.status).toBe(200);
    expect(sent.body.callback_secret).toMatch(/^whsec_/);
    expect(await setup.storage.inbox.listMessages('bob@acme.test')).toHaveLength(1);
    await setup.send(interactive('https://10.0.0.1/hook'));
    expect(await setup.storage.inbox.listMessages('bob@acme.test')).toHaveLength(1);
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

describe('public unicast', () => {
  it.each([
    [publicV4, null],
    [publicV6, null],
    ['8.8.8.8', null],
    ['127.0.0.1', 'loopback address 127.0.0.1'],
    ['::ffff:192.168.0.1', 'private address 192.168.0.1'],
    ['fe80::1', 'linkLocal address fe80::1'],
    ['224.0.0.1', 'multicast address 224.0.0.1'],
    ['255.255.255.255', 'broadcast address 255.255.255.255'],
    ['not-an-ip', 'not an IP address'],
  ])('%s → %s', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });
});
