import ipaddr from 'ipaddr.js';

/**
 * Why an address may not receive callbacks, or null when it is public unicast. IPv4-mapped IPv6
 * addresses are judged as the IPv4 address they carry, so `::ffff:127.0.0.1` is loopback.
 */
export function nonPublicReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  const effective =
    parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? (parsed as ipaddr.IPv6).toIPv4Address()
      : parsed;
  const range = effective.range();
  return range === 'unicast' ? null : `${range} address ${effective.toString()}`;
}

/** The address inside brackets of an IPv6 URL host, or the host itself. */
export const unbracket = (hostname: string): string =>
  hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
