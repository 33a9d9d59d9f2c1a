import { NotifyError, type RequestStore } from '../../../core/adapter-kit.js';
import { encodeDueChanges } from './due-changes.js';
import { createRequestScript, updateRequestScript } from './lua/request-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asNumber, asOptionalString } from './replies.js';
import { decodeRequest, encodeRequest } from './request-format.js';
import { encodeTtl } from './ttl-argument.js';

/**
 * Interactive requests as strings `<version>:<JSON>`, followed by a line for each copy delivered
 * (`lua/request-lua.ts`; the JSON in the form of `request-format.ts`; the hashes `{version, json}` of
 * earlier releases are still read and are replaced on the next write). Create and compare-and-set
 * update are single scripts that also change the due work, so a stored request always has its
 * timeout scheduled and only the writer that won a version changes due work. The write that
 * finishes a request sets its expiry, its copies' with it, in the same script (and that of the
 * copies an earlier release kept apart).
 */
export function redisRequestStore(redis: RedisRunner, keys: RedisKeys): RequestStore {
  return {
    async createRequest(request, due) {
      const created = await redis.evalScript(
        createRequestScript,
        [keys.request(request.id), keys.due, keys.sequence],
        [keys.dueItemBase, encodeRequest(request), String(request.version), ...encodeDueChanges(due)],
      );
      if (asNumber(created) !== 1) throw new NotifyError('internal', `Request ${request.id} already exists`);
    },
    async getRequest(id) {
      const key = keys.request(id);
      // A plain GET, not a script: every status read and every transition reads a request. The hash
      // of an earlier release answers WRONGTYPE, and is then read as a hash.
      const json = await redis.command(['GET', key]).then(
        (reply) => {
          const stored = asOptionalString(reply);
          if (stored === null) return null;
          const colon = stored.indexOf(':');
          // JSON has no raw line break: the first one starts the lines of the copies.
          const copies = stored.indexOf('\n', colon);
          return stored.slice(colon + 1, copies === -1 ? undefined : copies);
        },
        async (error: unknown) => {
          if (!(error instanceof Error && error.message.startsWith('WRONGTYPE'))) throw error;
          return asOptionalString(await redis.command(['HGET', key, 'json']));
        },
      );
      return json === null ? null : decodeRequest(json, id);
    },
    async updateRequest(next, expectedVersion, due, options) {
      const updated = await redis.evalScript(
        updateRequestScript,
        [
          keys.request(next.id),
          keys.due,
          keys.sequence,
          keys.deliveries(next.id),
          keys.deliveryOrder(next.id),
        ],
        [
          keys.dueItemBase,
          encodeRequest(next),
          String(next.version),
          String(expectedVersion),
          encodeTtl(options),
          ...encodeDueChanges(due),
        ],
      );
      return asNumber(updated) === 1;
    },
  } satisfies RequestStore;
}
