import { describe, expect, it } from 'vitest';
import { clientAddressResolver, forwardedProtoReader } from '../../core/http/client-address.js';

describe('the client address of a request (trustProxy)', () => {
  describe('trusting no proxy (the default, or 0)', () => {
    it.each([undefined, 0])('answers the socket address and ignores X-Forwarded-For (%s)', (trust) => {
      const resolve = clientAddressResolver(trust);
      expect(resolve('192.0.2.10', '203.0.113.1')).toBe('192.0.2.10');
      expect(resolve('192.0.2.10', undefined)).toBe('192.0.2.10');
    });

    it('writes an address one way only, so that one client has one budget', () => {
      const resolve = clientAddressResolver();
      expect(resolve('::ffff:192.0.2.10', undefined)).toBe('192.0.2.10');
      expect(resolve('2001:DB8:0:0:0:0:0:1', undefined)).toBe('2001:db8::1');
      expect(resolve('2001:db8::1', undefined)).toBe('2001:db8::1');
    });

    it('keeps a socket address it cannot parse as it is', () => {
      expect(clientAddressResolver()('', undefined)).toBe('');
    });
  });

  describe('trusting a number of hops', () => {
    it('takes the address that many entries from the right of X-Forwarded-For', () => {
      const forwarded = '198.51.100.1, 203.0.113.1,10.0.0.1';
      expect(clientAddressResolver(1)('192.0.2.10', forwarded)).toBe('10.0.0.1');
      expect(clientAddressResolver(2)('192.0.2.10', forwarded)).toBe('203.0.113.1');
      expect(clientAddressResolver(3)('192.0.2.10', forwarded)).toBe('198.51.100.1');
    });

    it('falls back to the socket address without enough entries, or with an entry that is no address', () => {
      expect(clientAddressResolver(1)('192.0.2.10', undefined)).toBe('192.0.2.10');
      expect(clientAddressResolver(1)('192.0.2.10', '')).toBe('192.0.2.10');
      expect(clientAddressResolver(3)('192.0.2.10', '203.0.113.1, 10.0.0.1')).toBe('192.0.2.10');
      expect(clientAddressResolver(1)('192.0.2.10', '203.0.113.1, unknown')).toBe('192.0.2.10');
      expect(clientAddressResolver(1)('192.0.2.10', '203.0.113.1, ')).toBe('192.0.2.10');
    });

    it('normalizes the address it takes', () => {
      expect(clientAddressResolver(1)('192.0.2.10', '::FFFF:203.0.113.1')).toBe('203.0.113.1');
      expect(clientAddressResolver(1)('192.0.2.10', '2001:DB8::0:1')).toBe('2001:db8::1');
    });
  });

  describe('trusting a list of proxies', () => {
    const resolve = clientAddressResolver(['192.0.2.10', '10.0.0.0/8', '2001:db8:ffff::/48']);

    it('answers the socket address when it is not a trusted proxy', () => {
      expect(resolve('198.51.100.7', '203.0.113.1')).toBe('198.51.100.7');
    });

    it('walks from the right past trusted proxies to the first address that is not one', () => {
      expect(resolve('192.0.2.10', '203.0.113.1')).toBe('203.0.113.1');
      expect(resolve('192.0.2.10', '198.51.100.1, 203.0.113.1, 10.1.2.3')).toBe('203.0.113.1');
      expect(resolve('10.0.0.1', '2001:db8::5, 2001:db8:ffff::1')).toBe('2001:db8::5');
    });

    it('answers the leftmost address when every hop is a trusted proxy', () => {
      expect(resolve('192.0.2.10', '10.0.0.2, 10.0.0.1')).toBe('10.0.0.2');
      expect(resolve('192.0.2.10', undefined)).toBe('192.0.2.10');
    });

    it('stops at the last trusted hop when a proxy reports something that is no address', () => {
      expect(resolve('192.0.2.10', '203.0.113.1, garbage, 10.0.0.1')).toBe('10.0.0.1');
    });

    it('matches IPv4-mapped IPv6 addresses against IPv4 entries', () => {
      expect(resolve('::ffff:192.0.2.10', '203.0.113.1')).toBe('203.0.113.1');
      expect(resolve('::ffff:10.20.30.40', '::ffff:203.0.113.1')).toBe('203.0.113.1');
    });

    it('matches IPv4-mapped entries of the list against IPv4 addresses', () => {
      const mapped = clientAddressResolver(['::ffff:192.0.2.10', '::ffff:10.0.0.0/104']);
      expect(mapped('192.0.2.10', '203.0.113.1')).toBe('203.0.113.1');
      expect(mapped('::ffff:10.1.2.3', '203.0.113.2')).toBe('203.0.113.2');
      expect(mapped('11.0.0.1', '203.0.113.3')).toBe('11.0.0.1');
    });

    it('matches IPv6 ranges and addresses written in any form', () => {
      const v6 = clientAddressResolver(['::1', '2001:DB8::/32']);
      expect(v6('0:0:0:0:0:0:0:1', '203.0.113.1')).toBe('203.0.113.1');
      expect(v6('2001:db8:1::9', '2001:db8::1, 203.0.113.2')).toBe('203.0.113.2');
    });
  });

  it.each([
    ['a negative hop count', -1],
    ['a fractional hop count', 1.5],
    ['NaN', Number.NaN],
    ['a name instead of an address', ['proxy.internal']],
    ['a prefix too long for IPv4', ['10.0.0.0/33']],
    ['a prefix too long for IPv6', ['::/129']],
    ['an empty entry', ['']],
    ['a comma-separated string', '10.0.0.1, 10.0.0.2'],
  ])('refuses %s when the notifier is created', (_name, trust) => {
    expect(() => clientAddressResolver(trust as number | readonly string[])).toThrow(/trustProxy/);
  });
});

describe('forwardedProtoReader', () => {
  it('believes no one with a hop count of 0, and what the outermost of n proxies appended with n', () => {
    expect(forwardedProtoReader()('192.0.2.10', undefined, 'https')).toBeUndefined();
    expect(forwardedProtoReader(0)('192.0.2.10', undefined, 'https')).toBeUndefined();
    expect(forwardedProtoReader(1)('192.0.2.10', undefined, 'HTTPS')).toBe('https');
    // The client wrote `https` itself; the one proxy appended what it saw.
    expect(forwardedProtoReader(1)('192.0.2.10', '198.51.100.7', 'https, http')).toBe('http');
    expect(forwardedProtoReader(2)('192.0.2.10', undefined, 'http, https, http')).toBe('https');
    // Proxies that set the header rather than append: the one value there is.
    expect(forwardedProtoReader(2)('192.0.2.10', undefined, 'https')).toBe('https');
    expect(forwardedProtoReader(1)('192.0.2.10', undefined, '')).toBeUndefined();
    expect(forwardedProtoReader(1)('192.0.2.10', undefined, 'https, ')).toBeUndefined();
  });

  it('believes a listed peer, counting the trusted proxies it reports, and nothing else', () => {
    const read = forwardedProtoReader(['10.0.0.0/8', '::1']);
    expect(read('10.1.2.3', undefined, 'https')).toBe('https');
    expect(read('::ffff:10.1.2.3', '198.51.100.7', 'https')).toBe('https');
    expect(read('::1', '198.51.100.7', 'https, http')).toBe('http');
    // Two trusted proxies (10.0.0.2 reported by the peer): the outer one's entry.
    expect(read('10.0.0.1', '198.51.100.7, 10.0.0.2', 'http, https, http')).toBe('https');
    expect(read('192.0.2.10', undefined, 'https')).toBeUndefined();
    expect(read('not an address', undefined, 'https')).toBeUndefined();
  });

  it('refuses what clientAddressResolver refuses', () => {
    expect(() => forwardedProtoReader(-1)).toThrow(/trustProxy/);
    expect(() => forwardedProtoReader('10.0.0.1' as unknown as readonly string[])).toThrow(/trustProxy/);
  });
});
