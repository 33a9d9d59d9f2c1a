import { Resolver } from 'node:dns/promises';
import type { HostResolver } from '../../core/adapter-kit.js';

/** Answers that mean the name has no address of that family. */
const noAddress = new Set(['ENOTFOUND', 'ENODATA']);

/** Names that are loopback by definition (RFC 6761), answered without DNS. */
const loopbackName = /^(?:.+\.)?localhost\.?$/i;

/**
 * How long the other family's query is waited for once one family answered addresses. A server (or
 * a middlebox) that drops AAAA queries would otherwise hold a host with a good A record for every
 * retry of its resolver, past the 5 s that the check of a callback URL gives DNS, and refuse it.
 */
const otherFamilyGraceMs = 500;

/**
 * The settled queries, in their order, once all have settled, or once one answered addresses and
 * the others had {@link otherFamilyGraceMs} more: then only those settled by then, one with addresses.
 */
function answers(queries: Promise<string[]>[]): Promise<PromiseSettledResult<string[]>[]> {
  return new Promise((resolve) => {
    const results: (PromiseSettledResult<string[]> | undefined)[] = queries.map(() => undefined);
    let grace: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(grace);
      resolve(results.filter((result) => result !== undefined));
    };
    queries.forEach((query, index) => {
      query
        .then(
          (value): PromiseSettledResult<string[]> => ({ status: 'fulfilled', value }),
          (reason: unknown): PromiseSettledResult<string[]> => ({ status: 'rejected', reason }),
        )
        .then((result) => {
          results[index] = result;
          if (results.every((settled) => settled !== undefined)) finish();
          else if (grace === undefined && result.status === 'fulfilled' && result.value.length > 0) {
            grace = setTimeout(finish, otherFamilyGraceMs);
          }
        });
    });
  });
}

/** Options of {@link createDnsResolver}. */
export interface DnsResolverOptions {
  /** DNS servers (`address` or `address:port`); the system's (from `/etc/resolv.conf`) by default. */
  servers?: string[];
  /** How long one query waits for a server's answer before it asks again (ms, default 2,000). */
  queryTimeoutMs?: number;
}

/**
 * Resolves callback hosts by asking DNS for their A and AAAA records through Node's asynchronous
 * resolver (c-ares), not the operating system's `getaddrinfo`: libuv runs at most two of those at
 * once for the whole process, so a caller whose callback host's DNS never answers would hold up
 * every other name lookup of the process (the chat platforms', the store's) for as long as the
 * system resolver waits. The hosts file is therefore not read: a receiver must be in DNS. `localhost`
 * and its subdomains are loopback, as RFC 6761 says, which only the development option admits.
 */
export function createDnsResolver(options: DnsResolverOptions = {}): HostResolver {
  const resolver = new Resolver({ timeout: options.queryTimeoutMs ?? 2_000, tries: 2 });
  if (options.servers !== undefined) resolver.setServers(options.servers);
  const family = async (query: Promise<string[]>): Promise<string[]> => {
    try {
      return await query;
    } catch (error) {
      if (noAddress.has((error as NodeJS.ErrnoException).code ?? '')) return [];
      throw error;
    }
  };
  return {
    async resolve(hostname) {
      if (loopbackName.test(hostname)) return ['127.0.0.1', '::1'];
      const results = await answers([
        family(resolver.resolve4(hostname)),
        family(resolver.resolve6(hostname)),
      ]);
      // A family that failed, or did not answer in its grace, while the other answered leaves those
      // addresses: only checked ones are ever connected to.
      const addresses = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
      if (addresses.length > 0) return addresses;
      const failed = results.find((result) => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return [];
    },
  };
}

/** {@link createDnsResolver} with the system's DNS servers: the callback transport's default. */
export const dnsResolver: HostResolver = createDnsResolver();
