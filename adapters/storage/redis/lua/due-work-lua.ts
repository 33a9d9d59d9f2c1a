import { luaScript } from '../lua-script.js';
import { dueLua } from './shared-lua.js';

/** KEYS: due set, sequence. ARGV: item base, then encoded changes. Enqueues (and cancels) due items. */
export const applyDueScript = luaScript(`${dueLua}
apply_due(KEYS[1], ARGV[1], KEYS[2], ARGV, 2)
return 1
`);

/**
 * KEYS: due set, sequence. ARGV: item base, now, limit, lease end. Leases up to `limit` items whose
 * score (runAt, or the end of a lease) is at most now, moving each to the lease end under a new
 * member, which is its lease token; answers id, kind, requestId, runAt, attempt and token of each.
 * The range is read once, before any score moves, so an item leased until `now` (lease 0) cannot
 * come out twice in one claim.
 */
export const claimScript = luaScript(`${dueLua}
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])
local out = {}
for _, m in ipairs(members) do
  local id = member_id(m)
  local item_key = ARGV[1] .. id
  local f = redis.call('HMGET', item_key, 'kind', 'requestId', 'runAt', 'attempt', 'member')
  if f[1] and f[5] == m then
    local token = schedule_due(KEYS[1], item_key, id, KEYS[2], ARGV[4])
    redis.call('HSET', item_key, 'lease', token)
    table.insert(out, id)
    table.insert(out, f[1])
    table.insert(out, f[2])
    table.insert(out, f[3])
    table.insert(out, f[4])
    table.insert(out, token)
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
`);

/** KEYS: due set. ARGV: item base, id, lease token. Removes the item if the token still holds its lease. */
export const completeScript = luaScript(`${dueLua}
local item_key = ARGV[1] .. ARGV[2]
if redis.call('HGET', item_key, 'lease') ~= ARGV[3] then return 0 end
drop_due(KEYS[1], item_key)
return 1
`);

/**
 * KEYS: due set, sequence. ARGV: item base, id, lease token, runAt. If the token still holds the
 * lease: moves the item to runAt, counts the attempt and frees the lease.
 */
export const rescheduleScript = luaScript(`${dueLua}
local item_key = ARGV[1] .. ARGV[2]
if redis.call('HGET', item_key, 'lease') ~= ARGV[3] then return 0 end
redis.call('HSET', item_key, 'runAt', ARGV[4])
redis.call('HINCRBY', item_key, 'attempt', 1)
redis.call('HDEL', item_key, 'lease')
schedule_due(KEYS[1], item_key, ARGV[2], KEYS[2], ARGV[4])
return 1
`);

/** KEYS: due set. The lowest score (as Redis prints it, exact), or nil when nothing is due ever. */
export const nextRunAtScript = luaScript(`
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return first[2]
`);
