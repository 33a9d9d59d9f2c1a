import { luaScript } from '../lua-script.js';

/**
 * KEYS: failures, order, sequence. ARGV: request id, JSON. Records a failure, replacing an earlier
 * one of the request, which moves to the end (it is the newest failure now).
 */
export const addFailureScript = luaScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
return 1
`);

/** KEYS: failures, order. Answers the JSON of every failure, oldest first. */
export const listFailuresScript = luaScript(`
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local json = redis.call('HGET', KEYS[1], id)
  if json then table.insert(out, json) end
end
return out
`);

/** KEYS: failures, order. ARGV: request id. Removes and answers the failure, so exactly one taker gets it. */
export const takeFailureScript = luaScript(`
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return nil end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return json
`);
