import { lookup } from 'node:dns/promises';
import type { HostResolver } from '../../core/adapter-kit.js';

const notFound = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

/** The system resolver: every A and AAAA address of a host, as the operating system resolves it. */
export const dnsResolver: HostResolver = {
  async resolve(hostname) {
    try {
      const addresses = await lookup(hostname, { all: true, verbatim: true });
      return addresses.map((entry) => entry.address);
    } catch (error) {
      if (notFound.has((error as NodeJS.ErrnoException).code ?? '')) return [];
      throw error;
    }
  },
};
