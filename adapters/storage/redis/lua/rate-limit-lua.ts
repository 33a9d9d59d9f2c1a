import { luaScript } from '../lua-script.js';
import { serverNowLua } from './shared-lua.js';

/**
 * `take_tokens(now, buckets, cost)`: `takeTokens` of core/rate-limit/token-bucket.ts, line for line,
 * over `buckets`, a list of `{ key, capacity, rate }` (a key may repeat), at `now` (epoch ms): all
 * buckets or none; answers the 0-based index of the first short bucket, or nil when the tokens were
 * taken. Each written bucket expires when it would be full again (an absent bucket reads as full), so
 * buckets of one-off keys do not accumulate.
 */
export const takeTokensLua = `
local function take_tokens(now, buckets, cost)
  local needed = cost
  if cost == 0 then needed = 1 end

  local function refill(state, capacity, rate)
    if state == nil then return { tokens = capacity, updated_at = now } end
    local elapsed = math.max(0, now - state.updated_at)
    return {
      tokens = math.min(capacity, state.tokens + (elapsed * rate) / 1000),
      updated_at = math.max(now, state.updated_at),
    }
  end

  local function lookup(key)
    local stored = redis.call('HMGET', key, 'tokens', 'updatedAt')
    if not stored[1] then return nil end
    return { tokens = tonumber(stored[1]), updated_at = tonumber(stored[2]) }
  end

  local updates = {}
  local shapes = {}
  local order = {}
  for i, bucket in ipairs(buckets) do
    local key = bucket.key
    local state = updates[key]
    if state == nil then state = lookup(key) end
    local current = refill(state, bucket.capacity, bucket.rate)
    if current.tokens < needed then return i - 1 end
    if updates[key] == nil then table.insert(order, key) end
    updates[key] = { tokens = current.tokens - cost, updated_at = current.updated_at }
    shapes[key] = bucket
  end

  -- 1000 years: beyond this a bucket is as good as never full again, and PEXPIREAT could overflow.
  local forever = 31536000000000
  for _, key in ipairs(order) do
    local state = updates[key]
    local shape = shapes[key]
    local missing = shape.capacity - state.tokens
    if missing <= 0 then
      redis.call('DEL', key)
    else
      -- %.17g keeps every bit of the fraction, so a refill reads back exactly what was computed.
      redis.call('HSET', key, 'tokens', string.format('%.17g', state.tokens),
        'updatedAt', string.format('%.17g', state.updated_at))
      local wait = forever
      if shape.rate > 0 then wait = math.ceil((missing * 1000) / shape.rate) end
      if wait >= forever then
        redis.call('PERSIST', key)
      else
        redis.call('PEXPIREAT', key, string.format('%.0f', state.updated_at + wait))
      end
    end
  end
  return nil
end
`;

/**
 * KEYS: one bucket hash per bucket, in order (a key may repeat). ARGV: cost, then capacity and
 * refill per second of each bucket. `take_tokens` on the Redis server's clock.
 */
export const takeTokensScript = luaScript(`${serverNowLua}${takeTokensLua}
local buckets = {}
for i, key in ipairs(KEYS) do
  table.insert(buckets, { key = key, capacity = tonumber(ARGV[2 * i]), rate = tonumber(ARGV[2 * i + 1]) })
end
return take_tokens(server_now(), buckets, tonumber(ARGV[1]))
`);
