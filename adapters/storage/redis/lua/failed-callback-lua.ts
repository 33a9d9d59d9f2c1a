import { luaScript } from '../lua-script.js';
import { serverNowLua } from './shared-lua.js';

/**
 * `forget_expired(failures, order, expiry, now, limit)`: removes up to `limit` failures whose expiry
 * (a score of `expiry`, in server-clock milliseconds) has come, or every one when `limit` is nil.
 */
const forgetExpiredLua = `
local function forget_expired(failures, order, expiry, now, limit)
  local expired
  if limit then
    expired = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, limit)
  else
    expired = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
  end
  for _, id in ipairs(expired) do
    redis.call('HDEL', failures, id)
    redis.call('ZREM', order, id)
    redis.call('ZREM', expiry, id)
  end
end
`;

/**
 * KEYS: failures, order, sequence, expiry. ARGV: request id, JSON, ttl in ms ('' for none). Records
 * a failure, replacing an earlier one of the request, which moves to the end (it is the newest
 * failure now), with its expiry. Forgets up to 64 expired failures first, so that failures nobody
 * lists do not pile up: each failure expires once, and each write removes at least as many.
 */
export const addFailureScript = luaScript(`${serverNowLua}${forgetExpiredLua}
local now = server_now()
forget_expired(KEYS[1], KEYS[2], KEYS[4], now, 64)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[4], ARGV[1])
else
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[3]), ARGV[1])
end
return 1
`);

/** KEYS: failures, order, expiry. Forgets the expired failures, then answers the JSON of the others, oldest first. */
export const listFailuresScript = luaScript(`${serverNowLua}${forgetExpiredLua}
forget_expired(KEYS[1], KEYS[2], KEYS[3], server_now(), nil)
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local json = redis.call('HGET', KEYS[1], id)
  if json then table.insert(out, json) end
end
return out
`);

/** `live_failure(failures, expiry, id, now)`: the JSON of the failure, or nil when there is none or it expired. */
const liveFailureLua = `
local function live_failure(failures, expiry, id, now)
  local json = redis.call('HGET', failures, id)
  if not json then return nil end
  local expires = redis.call('ZSCORE', expiry, id)
  if expires and tonumber(expires) <= now then return nil end
  return json
end
`;

/** KEYS: failures, expiry. ARGV: request id. Answers the failure's JSON, or nil when there is none or it expired. */
export const getFailureScript = luaScript(`${serverNowLua}${liveFailureLua}
return live_failure(KEYS[1], KEYS[2], ARGV[1], server_now())
`);

/**
 * KEYS: failures, order, expiry. ARGV: request id. Removes the failure and answers it unless it
 * expired, so exactly one taker gets it.
 */
export const takeFailureScript = luaScript(`${serverNowLua}${liveFailureLua}
local json = live_failure(KEYS[1], KEYS[3], ARGV[1], server_now())
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return json
`);
