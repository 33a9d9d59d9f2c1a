import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../core/callbacks/public-address.js';

/** Every IPv4 block that is not public unicast, with an address inside it. */
const nonPublicIPv4: [block: string, address: string][] = [
  ['0.0.0.0/8 "this network"', '0.0.0.0'],
  ['0.0.0.0/8 "this network"', '0.1.2.3'],
  ['10.0.0.0/8 private', '10.0.0.1'],
  ['10.0.0.0/8 private', '10.255.255.255'],
  ['100.64.0.0/10 shared (carrier-grade NAT)', '100.64.0.1'],
  ['100.64.0.0/10 shared (carrier-grade NAT)', '100.127.255.254'],
  ['127.0.0.0/8 loopback', '127.0.0.1'],
  ['127.0.0.0/8 loopback', '127.255.255.254'],
  ['169.254.0.0/16 link-local (cloud metadata)', '169.254.169.254'],
  ['172.16.0.0/12 private', '172.16.0.1'],
  ['172.16.0.0/12 private', '172.31.255.255'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.1'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.170'],
  ['192.0.2.0/24 documentation', '192.0.2.1'],
  ['192.31.196.0/24 AS112', '192.31.196.1'],
  ['192.52.193.0/24 AMT', '192.52.193.1'],
  ['192.88.99.0/24 6to4 relay anycast', '192.88.99.1'],
  ['192.168.0.0/16 private', '192.168.1.1'],
  ['192.175.48.0/24 AS112', '192.175.48.1'],
  ['198.18.0.0/15 benchmarking', '198.18.0.1'],
  ['198.18.0.0/15 benchmarking', '198.19.255.255'],
  ['198.51.100.0/24 documentation', '198.51.100.1'],
  ['203.0.113.0/24 documentation', '203.0.113.1'],
  ['224.0.0.0/4 multicast', '224.0.0.1'],
  ['224.0.0.0/4 multicast', '239.255.255.250'],
  ['240.0.0.0/4 reserved', '240.0.0.1'],
  ['240.0.0.0/4 reserved', '255.255.255.254'],
  ['255.255.255.255 broadcast', '255.255.255.255'],
];

/** Public IPv4 addresses, many just outside the blocks above. */
const publicIPv4 = [
  '1.1.1.1',
  '8.8.8.8',
  '11.0.0.1',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.1',
  '169.253.255.255',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1',
  '192.167.255.255',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
];

/** Teredo: the server's IPv4 in bits 32-63, the client's in the last 32 bits, inverted. */
const teredo = (server: string, client: string): string =>
  ipaddr
    .fromByteArray([
      ...[0x20, 0x01, 0, 0],
      ...ipaddr.IPv4.parse(server).octets,
      ...[0, 0, 0, 0],
      ...ipaddr.IPv4.parse(client).octets.map((octet) => octet ^ 0xff),
    ])
    .toString();

/** IPv6 addresses that are not public, each with the reason. */
const nonPublicIPv6: [reason: string, address: string][] = [
  [':: unspecified', '::'],
  ['::1 loopback', '::1'],
  ['::/96 IPv4-compatible (deprecated), loopback inside', '::7f00:1'],
  ['::/96 IPv4-compatible (deprecated), private inside', '::a00:1'],
  ['::/96 IPv4-compatible (deprecated), public inside', '::808:808'],
  ['::ffff:0:0/96 IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['::ffff:0:0/96 IPv4-mapped private', '::ffff:10.1.2.3'],
  ['::ffff:0:0/96 IPv4-mapped link-local', '::ffff:169.254.169.254'],
  ['::ffff:0:0/96 IPv4-mapped unspecified', '::ffff:0.0.0.0'],
  ['::ffff:0:0:0/96 IPv4-translated loopback', '::ffff:0:127.0.0.1'],
  ['::/96 IPv4-compatible, public inside, as resolvers write it', '::8.8.8.8'],
  ['::/96 IPv4-compatible, public inside, written out', '0:0:0:0:0:0:8.8.8.8'],
  ['::/96 IPv4-compatible, public inside, in hexadecimal', '::808:808'],
  ['64:ff9b::/96 NAT64 of loopback', '64:ff9b::127.0.0.1'],
  ['64:ff9b::/96 NAT64 of private', '64:ff9b::10.0.0.1'],
  ['64:ff9b::/96 NAT64 of link-local', '64:ff9b::169.254.169.254'],
  ['64:ff9b:1::/48 local-use NAT64, private inside', '64:ff9b:1::a00:1'],
  ['64:ff9b:1::/48 local-use NAT64, public inside', '64:ff9b:1::808:808'],
  ['100::/64 discard', '100::1'],
  ['100::/64 discard', '100::ffff:ffff:ffff:ffff'],
  ['2001::/32 Teredo, loopback client', teredo('8.8.8.8', '127.0.0.1')],
  ['2001::/32 Teredo, private client', teredo('8.8.8.8', '10.0.0.1')],
  ['2001::/32 Teredo, private server', teredo('10.0.0.1', '8.8.4.4')],
  ['2001::/23 IETF protocol assignments', '2001:100::1'],
  ['2001:2::/48 benchmarking', '2001:2::1'],
  ['2001:3::/32 AMT', '2001:3::1'],
  ['2001:4:112::/48 AS112', '2001:4:112::1'],
  ['2001:10::/28 ORCHID', '2001:10::1'],
  ['2001:20::/28 ORCHIDv2', '2001:20::1'],
  ['2001:30::/28 drone remote ID', '2001:30::1'],
  ['2001:db8::/32 documentation', '2001:db8::1'],
  ['2002::/16 6to4 of loopback', '2002:7f00:1::1'],
  ['2002::/16 6to4 of private', '2002:c0a8:101::1'],
  ['2002::/16 6to4 of unspecified', '2002::1'],
  ['2620:4f:8000::/48 AS112', '2620:4f:8000::1'],
  ['3fff::/20 documentation', '3fff::1'],
  ['4000::/3 not global unicast', '4000::1'],
  ['5f00::/16 segment routing', '5f00::1'],
  ['fc00::/7 unique local', 'fc00::1'],
  ['fc00::/7 unique local', 'fd12:3456::1'],
  ['fe80::/10 link-local', 'fe80::1'],
  ['fe80::/10 link-local with a zone', 'fe80::1%eth0'],
  ['fe80::/10 link-local', 'febf::1'],
  ['fec0::/10 site-local (deprecated)', 'fec0::1'],
  ['ff00::/8 multicast', 'ff02::1'],
  ['ff00::/8 multicast', 'ff0e::1'],
  ['ISATAP identifier of a loopback address', '2606:4700::5efe:7f00:1'],
  ['ISATAP identifier of a private address', '2606:4700::200:5efe:a00:1'],
];

const publicIPv6 = [
  '2606:2800:220:1:248:1893:25c8:1946',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '::ffff:0:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
  teredo('8.8.8.8', '93.184.216.34'),
  '2606:4700::200:5efe:808:808',
];

describe('public address policy', () => {
  it.each(nonPublicIPv4)('refuses %s: %s', (_block, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(publicIPv4)('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(nonPublicIPv6)('refuses %s: %s', (_reason, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(publicIPv6)('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(['not-an-ip', '', 'example.com', '1.2.3.4.5', '::g'])('refuses %j, which is no address', (text) => {
    expect(isPublicAddress(text)).toBe(false);
  });

  it('refuses the first and last address of every block the table names', () => {
    for (const [block] of [...nonPublicIPv4, ...nonPublicIPv6]) {
      const cidr = /^([0-9a-f:.]+\/\d+) /.exec(block)?.[1];
      // Blocks that carry an IPv4 address are public at their ends when the carried address is.
      if (!cidr || carriesIPv4.test(block)) continue;
      for (const address of ends(cidr)) expect([block, isPublicAddress(address)]).toEqual([block, false]);
    }
  });

  it('refuses the first and last address of every special range ipaddr.js knows, except those that carry IPv4', () => {
    const carriers = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);
    for (const kind of [ipaddr.IPv4, ipaddr.IPv6]) {
      const { SpecialRanges } = kind.prototype as unknown as {
        SpecialRanges: Record<string, Subnet | Subnet[]>;
      };
      for (const [name, subnets] of Object.entries(SpecialRanges)) {
        const list = isSubnet(subnets) ? [subnets] : subnets;
        for (const [network, length] of list) {
          const cidr = `${network.toString()}/${length}`;
          const local = name === 'rfc6052' && length === 48;
          if (carriers.has(name) && !local) continue;
          for (const address of ends(cidr))
            expect([name, address, isPublicAddress(address)]).toEqual([name, address, false]);
        }
      }
    }
  });
});

type Subnet = [ipaddr.IPv4 | ipaddr.IPv6, number];
const isSubnet = (value: Subnet | Subnet[]): value is Subnet => typeof value[1] === 'number';

const carriesIPv4 = /6to4 of|Teredo|NAT64 of|IPv4-mapped|IPv4-translated/;

/** The first and the last address of a block. */
function ends(cidr: string): [string, string] {
  const family = ipaddr.IPv4.isValidCIDR(cidr) ? ipaddr.IPv4 : ipaddr.IPv6;
  return [family.networkAddressFromCIDR(cidr).toString(), family.broadcastAddressFromCIDR(cidr).toString()];
}
