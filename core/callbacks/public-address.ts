import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Block = [IPv6, number];

const block = (cidr: string): Block => ipaddr.IPv6.parseCIDR(cidr);

/** IPv6 blocks whose addresses carry IPv4 addresses, and where in the 16 bytes they sit. */
const carriers: { block: Block; carried: (bytes: number[]) => number[][] }[] = [
  // IPv4-mapped (RFC 4291), IPv4-translated (RFC 6145), NAT64 well-known prefix (RFC 6052).
  { block: block('::ffff:0:0/96'), carried: (bytes) => [bytes.slice(12)] },
  { block: block('::ffff:0:0:0/96'), carried: (bytes) => [bytes.slice(12)] },
  { block: block('64:ff9b::/96'), carried: (bytes) => [bytes.slice(12)] },
  // 6to4 (RFC 3056): the site's IPv4 follows the 2002 prefix.
  { block: block('2002::/16'), carried: (bytes) => [bytes.slice(2, 6)] },
  // Teredo (RFC 4380): the server's IPv4, then the client's, stored inverted.
  {
    block: block('2001::/32'),
    carried: (bytes) => [bytes.slice(4, 8), bytes.slice(12).map((byte) => byte ^ 0xff)],
  },
];

/**
 * Everything else outside it (the IPv4-compatible `::/96`, NAT64 local-use `64:ff9b:1::/48`, discard,
 * unique local, link-local, site-local, multicast, segment routing, unassigned space) is never public.
 */
const globalUnicast = block('2000::/3');

/** An ISATAP interface identifier (RFC 5214) routes to the IPv4 address in its last 32 bits. */
const isIsatap = (bytes: number[]): boolean =>
  (bytes[8] === 0x00 || bytes[8] === 0x02) && bytes[9] === 0x00 && bytes[10] === 0x5e && bytes[11] === 0xfe;

/**
 * ipaddr.js names every IPv4 special-purpose block (RFC 6890 and later: "this network", private,
 * shared, loopback, link-local, protocol assignments, documentation, benchmarking, AS112, AMT,
 * multicast, reserved, broadcast); whatever it does not name is public. AS112 and AMT are refused
 * too although globally reachable: no webhook receiver lives there.
 */
const isPublicIPv4 = (address: IPv4): boolean => address.range() === 'unicast';

const carriesOnlyPublicIPv4 = (carried: number[][]): boolean =>
  carried.every((octets) => isPublicIPv4(new ipaddr.IPv4(octets)));

function isPublicIPv6(address: IPv6): boolean {
  const bytes = address.toByteArray();
  const carrier = carriers.find((entry) => address.match(entry.block));
  if (carrier) return carriesOnlyPublicIPv4(carrier.carried(bytes));
  return (
    address.match(globalUnicast) &&
    // Inside 2000::/3, ipaddr.js names the blocks that are not public: documentation, benchmarking,
    // ORCHID, AS112, AMT, drone remote ID, the rest of the IETF protocol assignments.
    address.range() === 'unicast' &&
    (!isIsatap(bytes) || carriesOnlyPublicIPv4([bytes.slice(12)]))
  );
}

/**
 * An IPv6 address whose last 32 bits are written as an IPv4 address, written in hexadecimal instead
 * (by the WHATWG URL parser); any other address as it is, and null for one the URL parser refuses.
 * ipaddr.js reads the IPv4-compatible `::8.8.8.8`, as Node's resolver writes `::808:808`, as the
 * IPv4-mapped `::ffff:8.8.8.8`, which is public where the address is not.
 */
function inHexadecimal(address: string): string | null {
  if (!address.includes(':') || !address.includes('.')) return address;
  try {
    return unbracket(new URL(`http://[${address}]`).hostname);
  } catch {
    return null;
  }
}

/**
 * Whether a callback may be delivered to this address: public unicast, in IPv4 or IPv6. An IPv6
 * address that carries an IPv4 address (mapped, translated, NAT64, 6to4, Teredo, ISATAP) is public
 * only when every IPv4 address it carries is, since a gateway on the way may deliver it there.
 * Anything that is not an address is not public. This is the one policy of submission and delivery.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const written = inHexadecimal(address);
  if (written === null) return false;
  const parsed = ipaddr.parse(written);
  return parsed.kind() === 'ipv4' ? isPublicIPv4(parsed as IPv4) : isPublicIPv6(parsed as IPv6);
}

/** The address inside brackets of an IPv6 URL host, or the host itself. */
export const unbracket = (hostname: string): string =>
  hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
