import type { InboxMessage, InboxStore } from '../../../core/ports/inbox-store.js';
import { listMessagesScript, saveMessageScript } from './lua/inbox-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalString, parseJson } from './replies.js';

/**
 * Inbox messages in a hash, indexed per recipient by a sorted set scored by `deliveredAt` whose
 * members carry the sequence of the first save, which breaks ties as the memory adapter does.
 */
export function redisInboxStore(redis: RedisRunner, keys: RedisKeys): InboxStore {
  return {
    async saveMessage(message) {
      await redis.evalScript(
        saveMessageScript,
        [keys.inboxMessages, keys.inboxMember, keys.sequence, keys.inbox(message.recipient)],
        [keys.inboxBase, message.id, JSON.stringify(message), message.recipient, String(message.deliveredAt)],
      );
    },
    async getMessage(id) {
      const json = asOptionalString(await redis.command(['HGET', keys.inboxMessages, id]));
      return json === null ? null : (JSON.parse(json) as InboxMessage);
    },
    async listMessages(recipient) {
      const reply = await redis.evalScript(
        listMessagesScript,
        [keys.inbox(recipient), keys.inboxMessages],
        [],
      );
      return asArray(reply).map((json) => parseJson<InboxMessage>(json));
    },
  } satisfies InboxStore;
}
