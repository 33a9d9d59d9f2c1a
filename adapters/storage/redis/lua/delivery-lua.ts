import { luaScript } from '../lua-script.js';

/**
 * KEYS: deliveries hash, order list, request hash of the send. ARGV: field, JSON, ttl ms ('' for
 * none). Records a copy; a new (recipient, platform) joins the end of the order, a known one is
 * replaced in place. With a ttl, both keys expire that long from now; without, they keep the expiry
 * they have. Answers the version of the send's request, false (nil) when there is none.
 */
export const addDeliveryScript = luaScript(`
if redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) == 1 then redis.call('RPUSH', KEYS[2], ARGV[1]) end
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return redis.call('HGET', KEYS[3], 'version')
`);

/**
 * KEYS: deliveries hash, order list. Answers the field and the JSON of every copy, in turn, in
 * recording order.
 */
export const listDeliveriesScript = luaScript(`
local out = {}
for _, field in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local json = redis.call('HGET', KEYS[1], field)
  if json then
    table.insert(out, field)
    table.insert(out, json)
  end
end
return out
`);
