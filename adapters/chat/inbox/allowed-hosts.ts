import ipaddr from 'ipaddr.js';

/**
 * Which `Host` names the inbox answers besides `localhost` and IP addresses: a list of names, or
 * `true` for any.
 */
export type InboxAllowedHosts = readonly string[] | true;

/** A DNS name as a `Host` header carries it: labels of letters, digits, `-` and `_`. */
const hostName =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** A name lower-case and without the trailing dot of a fully qualified one (`Inbox.Example.` → `inbox.example`). */
const canonical = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** Checks the `allowedHosts` option of the inbox and answers its names in the form they are compared in. */
export function allowedHostNames(allowed: unknown): ReadonlySet<string> | true {
  if (allowed === undefined) return new Set();
  if (allowed === true) return true;
  if (!Array.isArray(allowed)) {
    throw new TypeError(
      `inboxTransport: allowedHosts must be a list of host names or true (any host), got ${typeof allowed}`,
    );
  }
  const names = new Set<string>();
  for (const entry of allowed as unknown[]) {
    const name = typeof entry === 'string' ? canonical(entry.trim()) : '';
    if (!hostName.test(name)) {
      throw new RangeError(
        `inboxTransport: allowedHosts holds ${JSON.stringify(entry)}, which is no host name (a name such as "inbox.example.com", without scheme, port or path)`,
      );
    }
    names.add(name);
  }
  return names;
}

/** The host of a `Host` header (`name:port`, `[v6]:port`), lower-case, without port or trailing dot. */
function hostOf(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  const colon = value.lastIndexOf(':');
  return canonical(colon === -1 ? value : value.slice(0, colon));
}

const isIpLiteral = (host: string): boolean =>
  host.startsWith('[') && host.endsWith(']')
    ? ipaddr.IPv6.isValid(host.slice(1, -1))
    : ipaddr.IPv4.isValidFourPartDecimal(host);

/**
 * Whether the inbox answers a request carrying this `Host` header. A page of another site that
 * makes its own name resolve to this machine (DNS rebinding) is same-origin with the inbox and
 * could read every message and click for anyone; its requests carry that name, never `localhost`
 * nor an IP address. A request without the header comes from no browser, which always sends it.
 */
export function isAllowedHost(header: string | undefined, allowed: ReadonlySet<string> | true): boolean {
  if (allowed === true || header === undefined) return true;
  const host = hostOf(header);
  return host === 'localhost' || host.endsWith('.localhost') || isIpLiteral(host) || allowed.has(host);
}
