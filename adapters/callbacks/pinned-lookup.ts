import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';

/**
 * A `lookup` for `net.connect` that answers only addresses already checked, so the connection goes
 * to exactly what was validated and a second DNS answer (rebinding) is never consulted.
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  return (_hostname, options, callback) => {
    const entries = addresses.map((address) => ({ address, family: isIP(address) }));
    const wanted =
      options.family === 4 || options.family === 6
        ? entries.filter((e) => e.family === options.family)
        : entries;
    const [first] = wanted;
    if (!first) {
      callback(
        Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' }),
        '',
        0,
      );
      return;
    }
    if (options.all) callback(null, wanted);
    else callback(null, first.address, first.family);
  };
}
