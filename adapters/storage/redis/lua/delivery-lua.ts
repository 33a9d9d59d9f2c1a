import { luaScript } from '../lua-script.js';
import { versionedLua } from './shared-lua.js';

/**
 * KEYS: deliveries hash, order list (kept only by the sends of earlier releases), request of the
 * send. ARGV: field, the stored JSON of the copy after its place (`<ref>,<deliveredAt>]`), ttl ms ('' for
 * none). Records a copy as `[<place>,<ref>,<deliveredAt>]`: a new (recipient, platform) takes the next
 * place (copies are never removed one by one, so that is the hash's length), a known one keeps its
 * place and is replaced. A send that has an order list goes on keeping it. With a ttl, both keys
 * expire that long from now; without, they keep the expiry they have. Answers the version of the
 * send's request, false (nil) when there is none.
 */
export const addDeliveryScript = luaScript(`${versionedLua}
local existing = redis.call('HGET', KEYS[1], ARGV[1])
local place = existing and string.match(existing, '^%[(%d+),')
if not place then place = redis.call('HLEN', KEYS[1]) + (existing and 0 or 1) end
redis.call('HSET', KEYS[1], ARGV[1], '[' .. place .. ',' .. ARGV[2])
if not existing and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RPUSH', KEYS[2], ARGV[1]) end
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return read_version(KEYS[3])
`);

/**
 * KEYS: deliveries hash, order list. Answers 'listed' and the field and the JSON of every copy, in
 * turn, in the order of the list when the send has one (sends of earlier releases); else 'placed'
 * and the same pairs as the hash holds them, each copy's JSON starting with its place.
 */
export const listDeliveriesScript = luaScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then
  local out = redis.call('HGETALL', KEYS[1])
  table.insert(out, 1, 'placed')
  return out
end
local out = { 'listed' }
for _, field in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local json = redis.call('HGET', KEYS[1], field)
  if json then
    table.insert(out, field)
    table.insert(out, json)
  end
end
return out
`);
