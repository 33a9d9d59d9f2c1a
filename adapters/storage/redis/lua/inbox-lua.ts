import { luaScript } from '../lua-script.js';
import { memberLua } from './shared-lua.js';

/**
 * KEYS: messages, member, sequence, the recipient's sorted set. ARGV: inbox base, id, JSON,
 * recipient, deliveredAt. Saves a message; a message saved again keeps the place of its first save
 * among messages delivered at the same time, and leaves its previous recipient's list if that changed.
 */
export const saveMessageScript = luaScript(`${memberLua}
local m = redis.call('HGET', KEYS[2], ARGV[2])
local previous = redis.call('HGET', KEYS[1], ARGV[2])
if previous and m then
  local recipient = cjson.decode(previous).recipient
  if recipient ~= ARGV[4] then redis.call('ZREM', ARGV[1] .. recipient, m) end
end
if not m then
  m = member(KEYS[3], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[2], m)
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[5], m)
return 1
`);

/** KEYS: the recipient's sorted set, messages. Answers the JSON of each message in delivery order. */
export const listMessagesScript = luaScript(`${memberLua}
local out = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local json = redis.call('HGET', KEYS[2], member_id(m))
  if json then table.insert(out, json) end
end
return out
`);
