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
 * member, which is its lease token (a compact item gets a hash); answers id, kind, requestId, runAt,
 * attempt and token of each. The range is read once, before any score moves, so an item leased until
 * `now` (lease 0) cannot come out twice in one claim. A member that is not its item's current one
 * (left behind) is removed, and so is the second member of an item that an instance of this release
 * and one of the release before both scheduled.
 */
export const claimScript = luaScript(`${dueLua}
local range = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, ARGV[3])
local out = {}
-- Ids leased by this claim: an item scheduled by this release and the one before has two members.
local leased = {}
for i = 1, #range, 2 do
  local m = range[i]
  local id = due_id(m)
  local item_key = ARGV[1] .. id
  local f = false
  -- A compact item: its member is its id, or (earlier releases) a string record is its member.
  local compact = m == id
  if not compact then
    local stored = redis.pcall('GET', item_key)
    if stored == m then
      compact = true
      redis.call('DEL', item_key)
      redis.call('ZREM', KEYS[1], id)
    elseif type(stored) == 'table' and stored.err then
      f = redis.call('HMGET', item_key, 'kind', 'requestId', 'runAt', 'attempt', 'member')
      if not f[1] or f[5] ~= m then f = false end
    end
  end
  if compact then
    -- Its id is <kind>:<requestId>, its score its runAt, its attempt the first.
    local colon = string.find(id, ':', 1, true)
    f = { string.sub(id, 1, colon - 1), string.sub(id, colon + 1), range[i + 1], '0' }
  end
  redis.call('ZREM', KEYS[1], m)
  if f and not leased[id] then
    leased[id] = true
    local token = member(KEYS[2], id)
    redis.call('HSET', item_key, 'kind', f[1], 'requestId', f[2], 'runAt', f[3], 'attempt', f[4],
      'member', token, 'lease', token)
    redis.call('ZADD', KEYS[1], ARGV[4], token)
    table.insert(out, id)
    table.insert(out, f[1])
    table.insert(out, f[2])
    table.insert(out, f[3])
    table.insert(out, f[4])
    table.insert(out, token)
  end
end
return out
`);

/**
 * KEYS: due set. ARGV: item base, then an id and a lease token per item. Removes each item whose
 * token still holds its lease (a compact item, never claimed, holds none). A leased item's member
 * is its lease token: a claim gives it both, and whatever changes the member frees the lease.
 */
export const completeScript = luaScript(`
for i = 2, #ARGV, 2 do
  local item_key = ARGV[1] .. ARGV[i]
  if redis.pcall('HGET', item_key, 'lease') == ARGV[i + 1] then
    redis.call('ZREM', KEYS[1], ARGV[i + 1])
    redis.call('DEL', item_key)
  end
end
return 1
`);

/**
 * KEYS: due set, sequence. ARGV: item base, id, lease token, runAt, 1 to count the attempt (0: the
 * item was put off). If the token still holds the lease: moves the item to runAt, adds that to its
 * attempt and frees the lease.
 */
export const rescheduleScript = luaScript(`${dueLua}
local item_key = ARGV[1] .. ARGV[2]
if redis.pcall('HGET', item_key, 'lease') ~= ARGV[3] then return 0 end
redis.call('HSET', item_key, 'runAt', ARGV[4])
redis.call('HINCRBY', item_key, 'attempt', tonumber(ARGV[5]))
redis.call('HDEL', item_key, 'lease')
schedule_due(KEYS[1], item_key, ARGV[2], KEYS[2], ARGV[4])
return 1
`);

/** KEYS: due set. The lowest score (as Redis prints it, exact), or nil when nothing is due ever. */
export const nextRunAtScript = luaScript(`
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return first[2]
`);
