import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Which proxies in front of the service may report the client's address in `X-Forwarded-For`
 * (`NotifierOptions.trustProxy`):
 *
 * - `0` (the default): none; the client is the peer of the connection (the socket's address).
 * - a number `n`: exactly `n` proxies; the client is the address `n` entries from the right of
 *   `X-Forwarded-For` (each proxy appends the address it saw), or the socket's address when the
 *   header holds fewer entries.
 * - a list of addresses and CIDR ranges, IPv4 or IPv6 (`['10.0.0.0/8', '::1']`): the trusted
 *   proxies. Starting from the socket's address, every trusted address gives way to the entry of
 *   `X-Forwarded-For` to its left; the client is the first address that is not a trusted proxy.
 *
 * Anything a client writes itself in `X-Forwarded-For` is to the left of what the trusted proxies
 * appended, so it is never read. Trust only proxies that append to the header.
 */
export type TrustProxy = number | readonly string[];

/** Answers the address of the client of a request from the socket's address and `X-Forwarded-For`. */
export type ClientAddressResolver = (socketAddress: string, forwardedFor: string | undefined) => string;

/** Parses one address as written, strictly: dotted-quad IPv4, or IPv6. */
function parseLiteral(text: string): Address | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

/** Parses one address; an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address it carries. */
function parseAddress(text: string): Address | null {
  const address = parseLiteral(text);
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}

/** One spelling per address, so that a client cannot spread its attempts over several spellings. */
const spell = (address: Address): string =>
  address instanceof ipaddr.IPv6 ? address.toRFC5952String() : address.toString();

/**
 * Spellings of the socket addresses seen lately. A service hears the same few peers (its proxies,
 * its callers) over and over, and parsing an address cost more than routing a request. Bounded, so
 * that a flood of distinct peers cannot grow it: it starts over when full.
 */
const normalized = new Map<string, string>();
const maxNormalized = 4096;

const normalize = (text: string): string => {
  const known = normalized.get(text);
  if (known !== undefined) return known;
  const address = parseAddress(text);
  const spelling = address === null ? text : spell(address);
  if (normalized.size >= maxNormalized) normalized.clear();
  normalized.set(text, spelling);
  return spelling;
};

/** Bits of an IPv6 client address that name its network: a /64 is what one subscriber is given. */
const subscriberPrefixBits = 64;

/** The networks of the IPv6 client addresses seen lately, bounded as {@link normalized} is. */
const networks = new Map<string, string>();

/**
 * The network a client's failed attempts (API keys, passwords) count against: an IPv4 address
 * itself, and an IPv6 address's /64 (`2001:db8:1:2::/64`), since whoever holds one address of a /64
 * usually holds all of them and could spread guesses over as many addresses as it likes. Anything
 * that is no address (the library's own callers) as it is.
 */
export function attemptNetwork(clientAddress: string): string {
  // Every admission names its bucket: IPv4 callers, the most, pay nothing more.
  if (!clientAddress.includes(':')) return clientAddress;
  const known = networks.get(clientAddress);
  if (known !== undefined) return known;
  const address = parseAddress(clientAddress);
  const network =
    address instanceof ipaddr.IPv6
      ? `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${subscriberPrefixBits}`).toRFC5952String()}/${subscriberPrefixBits}`
      : clientAddress;
  if (networks.size >= maxNormalized) networks.clear();
  networks.set(clientAddress, network);
  return network;
}

const invalid = (entry: unknown): RangeError =>
  new RangeError(
    `trustProxy: ${JSON.stringify(entry)} is neither a hop count (a whole number >= 0) nor a list of IP addresses and CIDR ranges`,
  );

/** An address (a range of one) or a CIDR range, as the network address and its prefix length. */
function parseRange(entry: string): [Address, number] {
  if (typeof entry !== 'string') throw invalid(entry);
  const slash = entry.indexOf('/');
  const address = parseLiteral(slash === -1 ? entry : entry.slice(0, slash));
  if (address === null) throw invalid(entry);
  const maxBits = address instanceof ipaddr.IPv6 ? 128 : 32;
  const bitsText = slash === -1 ? String(maxBits) : entry.slice(slash + 1);
  const bits = Number(bitsText);
  if (!/^\d{1,3}$/.test(bitsText) || bits > maxBits) throw invalid(entry);
  // Addresses are compared unmapped, so a range inside ::ffff:0:0/96 is compared as IPv4.
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && bits >= 96) {
    return [address.toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

/** The entries of `X-Forwarded-For`, left to right. */
const forwardedEntries = (header: string | undefined): string[] =>
  header === undefined ? [] : header.split(',').map((entry) => entry.trim());

function hopsResolver(hops: number): ClientAddressResolver {
  return (socketAddress, forwardedFor) => {
    const entries = forwardedEntries(forwardedFor);
    const reported =
      hops === 0 || hops > entries.length ? null : parseAddress(entries[entries.length - hops] ?? '');
    return reported === null ? normalize(socketAddress) : spell(reported);
  };
}

/** Whether an address is one of the trusted proxies of a list. */
function trustedIn(trusted: readonly string[]): (address: Address) => boolean {
  const ranges = trusted.map(parseRange);
  return (address) =>
    ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

function listResolver(trusted: readonly string[]): ClientAddressResolver {
  const isTrusted = trustedIn(trusted);
  return (socketAddress, forwardedFor) => {
    let client = parseAddress(socketAddress);
    if (client === null) return socketAddress;
    const entries = forwardedEntries(forwardedFor);
    while (isTrusted(client) && entries.length > 0) {
      const reported = parseAddress(entries.pop() ?? '');
      // A trusted proxy that reports something else than an address: it stays the client.
      if (reported === null) break;
      client = reported;
    }
    return spell(client);
  };
}

/**
 * The resolver for a `trustProxy` setting.
 * @throws RangeError when the setting is not a whole number >= 0 or a list of addresses and ranges.
 */
export function clientAddressResolver(trustProxy: TrustProxy = 0): ClientAddressResolver {
  const trust = checkedTrust(trustProxy);
  return typeof trust === 'number' ? hopsResolver(trust) : listResolver(trust);
}

/**
 * Reads the protocol the client used from `X-Forwarded-Proto`, the socket's address and
 * `X-Forwarded-For`: undefined unless the peer of the connection is a trusted proxy.
 */
export type ForwardedProtoReader = (
  socketAddress: string,
  forwardedFor: string | undefined,
  forwardedProto: string,
) => string | undefined;

/**
 * The entry of `X-Forwarded-Proto` the outermost of `hops` trusted proxies wrote, each appending
 * one as they do to `X-Forwarded-For`: `hops` from the right, so that what a client wrote itself,
 * to the left, is never read. Fewer entries than proxies: those that set the header rather than
 * append to it, and the left-most is the outermost one's. Lower-case; undefined when empty.
 */
function protoOf(forwardedProto: string, hops: number): string | undefined {
  const entries = forwardedProto.split(',');
  const entry = entries[Math.max(0, entries.length - hops)]?.trim().toLowerCase();
  return entry === '' ? undefined : entry;
}

/**
 * The reader of `X-Forwarded-Proto` for a `trustProxy` setting, whose proxies it believes as
 * {@link clientAddressResolver} does theirs `X-Forwarded-For`.
 * @throws RangeError as {@link clientAddressResolver} does.
 */
export function forwardedProtoReader(trustProxy: TrustProxy = 0): ForwardedProtoReader {
  const trust = checkedTrust(trustProxy);
  if (typeof trust === 'number') {
    return (_socketAddress, _forwardedFor, forwardedProto) =>
      trust === 0 ? undefined : protoOf(forwardedProto, trust);
  }
  const isTrusted = trustedIn(trust);
  return (socketAddress, forwardedFor, forwardedProto) => {
    const peer = parseAddress(socketAddress);
    if (peer === null || !isTrusted(peer)) return undefined;
    // The trusted proxies between the client and this service: the peer, and each trusted one it reports.
    let hops = 1;
    const entries = forwardedEntries(forwardedFor);
    for (let reported = parseAddress(entries.pop() ?? ''); reported !== null && isTrusted(reported); ) {
      hops += 1;
      reported = parseAddress(entries.pop() ?? '');
    }
    return protoOf(forwardedProto, hops);
  };
}

function checkedTrust(trustProxy: TrustProxy): TrustProxy {
  if (typeof trustProxy === 'number') {
    if (!Number.isSafeInteger(trustProxy) || trustProxy < 0) throw invalid(trustProxy);
    return trustProxy;
  }
  // Callers in JavaScript may pass anything, a comma-separated string for one.
  if (!Array.isArray(trustProxy)) throw invalid(trustProxy);
  return trustProxy;
}
