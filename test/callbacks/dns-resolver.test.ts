import { afterEach, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../adapters/callbacks/index.js';
import { fakeDns } from '../support/fake-dns.js';

let dns: Awaited<ReturnType<typeof fakeDns>> | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

describe('the callback transport’s DNS resolver', () => {
  it('answers the A and AAAA records of a host, and nothing for a name DNS does not know', async () => {
    dns = await fakeDns({
      'hooks.example': { a: ['93.184.216.34'], aaaa: ['2606:2800:220:1::248'] },
      'v4only.example': { a: ['93.184.216.35'] },
    });
    const resolver = createDnsResolver({ servers: [dns.server] });
    expect(await resolver.resolve('hooks.example')).toEqual(['93.184.216.34', '2606:2800:220:1::248']);
    expect(await resolver.resolve('v4only.example')).toEqual(['93.184.216.35']);
    expect(await resolver.resolve('nowhere.example')).toEqual([]);
  });

  it("is not held up by hosts whose DNS never answers: another host's lookup answers at once", async () => {
    const slow = ['a.slow.example', 'b.slow.example', 'c.slow.example', 'd.slow.example'];
    dns = await fakeDns({ 'hooks.example': { a: ['93.184.216.34'] } }, slow);
    const resolver = createDnsResolver({ servers: [dns.server], queryTimeoutMs: 1_500 });
    const waiting = slow.map((host) =>
      resolver.resolve(host).then(
        () => 'answered',
        (error: NodeJS.ErrnoException) => error.code,
      ),
    );
    const started = performance.now();
    expect(await resolver.resolve('hooks.example')).toEqual(['93.184.216.34']);
    // The system resolver (getaddrinfo) runs two lookups at once per process: it would answer only
    // once the slow ones gave up, seconds from now.
    expect(performance.now() - started).toBeLessThan(500);
    expect(await Promise.all(waiting)).toEqual(slow.map(() => 'ETIMEOUT'));
  });

  it('answers loopback for localhost and its subdomains without asking DNS', async () => {
    dns = await fakeDns({});
    const resolver = createDnsResolver({ servers: [dns.server] });
    expect(await resolver.resolve('localhost')).toEqual(['127.0.0.1', '::1']);
    expect(await resolver.resolve('api.localhost')).toEqual(['127.0.0.1', '::1']);
    expect(dns.queries).toEqual([]);
  });
});
