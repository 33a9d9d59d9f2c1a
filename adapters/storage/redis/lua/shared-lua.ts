/**
 * Lua fragments that several scripts include. Scripts never re-encode JSON (cjson would round numbers
 * to 14 digits and turn `[]` into `{}`): they store what TypeScript encoded, and only decode to read
 * string fields of it.
 */

/**
 * `member(sequence_key, id)`: a sorted-set member that, among equal scores, sorts after every member
 * made before it (the memory adapter's insertion order): a 16-digit zero-padded sequence number,
 * `:`, then the id, which `member_id(m)` gives back.
 */
export const memberLua = `
local function member(sequence_key, id)
  local seq = tostring(redis.call('INCR', sequence_key))
  return string.rep('0', 16 - #seq) .. seq .. ':' .. id
end
local function member_id(m)
  return string.sub(m, 18)
end
`;

/**
 * Records stored as one string `<version>:<value>` (transport-state records, requests), where earlier
 * releases kept a hash `{version, <value field>}`, which is still read and is replaced by the string
 * on the record's next write. A hash whose value outgrows 64 bytes becomes a hash table, about a
 * third more memory than the string.
 *
 * `read_versioned(key, value_field)`: the value and version of the record at `key` (`value_field`
 * names the value in the hash of an earlier release), or false and false when there is none (false,
 * as Redis's own nil, so that a table of them stays an array).
 *
 * `read_version(key)`: the version alone, or false when there is none, without copying the value out
 * of the record (a write needs only the version) and without asking for the key's type first: a
 * plain GET, and the hash of an earlier release only when GET finds the key of another type.
 */
export const versionedLua = `
local function read_versioned(key, value_field)
  local kind = redis.call('TYPE', key).ok
  if kind == 'string' then
    local stored = redis.call('GET', key)
    local colon = string.find(stored, ':', 1, true)
    return string.sub(stored, colon + 1), string.sub(stored, 1, colon - 1)
  elseif kind == 'hash' then
    local r = redis.call('HMGET', key, value_field, 'version')
    return r[1], r[2]
  end
  return false, false
end
local function read_version(key)
  local stored = redis.pcall('GET', key)
  if type(stored) == 'string' then
    return string.sub(stored, 1, string.find(stored, ':', 1, true) - 1)
  elseif type(stored) == 'table' and stored.err then
    return redis.call('HGET', key, 'version')
  end
  return false
end
`;

/**
 * Due items: a sorted set of members scored by when each item becomes claimable, and a record per
 * item. An item's member is `<sequence>:<id>` with a fresh sequence on every (re)scheduling, so
 * items due at the same time come out in the order they were scheduled, as the memory adapter's
 * heap does; the member also serves as the lease token of a claim, unique for ever.
 *
 * A record is a hash `{kind, requestId, runAt, attempt, member, lease}`, except for the item that
 * most pending requests hold, a first attempt not yet claimed whose id is `<kind>:<requestId>` with
 * neither a `:` in the kind nor the look of a member (a request's timeout, a first callback or
 * refresh): that item is compact, its member its id alone and no record at all, since the id and
 * the score say all the hash would (about 200 bytes of Redis memory less each). Compact items due at
 * the same time come out after the others, in the order of their ids. A claim gives it the hash.
 * The release before kept a compact item as a string record, its member `<sequence>:<id>`: that
 * form is still claimed and cancelled.
 *
 * `due_id(m)` is the id of the item of member `m`. `schedule_due(due_key, item_key, id, sequence_key,
 * at)` gives the item of a hash a new member at `at`; `drop_due(due_key, item_base, id)` removes an
 * item, whatever its form; `apply_due(due_key, item_base, sequence_key, argv, start)` applies encoded
 * due-work changes (see `encodeDueChanges`) read from `argv` at `start`: cancels first, then
 * enqueues, so an id in both ends up enqueued; an enqueued item replaces any item of its id and frees
 * its lease.
 */
export const dueLua = `${memberLua}
local function due_id(m)
  if string.find(m, '^${'%d'.repeat(16)}:') then return member_id(m) end
  return m
end
local function schedule_due(due_key, item_key, id, sequence_key, at)
  local old = redis.call('HGET', item_key, 'member')
  if old then redis.call('ZREM', due_key, old) end
  local m = member(sequence_key, id)
  redis.call('HSET', item_key, 'member', m)
  redis.call('ZADD', due_key, at, m)
  return m
end
local function drop_due(due_key, item_base, id)
  local item_key = item_base .. id
  -- HGET first: a timeout is cancelled as it expires, claimed (a hash) by then.
  local old = redis.pcall('HGET', item_key, 'member')
  if type(old) == 'table' then old = redis.call('GET', item_key) end
  if old then
    redis.call('ZREM', due_key, old)
    redis.call('DEL', item_key)
  else
    redis.call('ZREM', due_key, id)
  end
end
local function apply_due(due_key, item_base, sequence_key, argv, start)
  local i = start
  local cancels = tonumber(argv[i])
  i = i + 1
  for _ = 1, cancels do
    drop_due(due_key, item_base, argv[i])
    i = i + 1
  end
  local enqueues = tonumber(argv[i])
  i = i + 1
  for _ = 1, enqueues do
    local id, kind, request_id, run_at, attempt = argv[i], argv[i + 1], argv[i + 2], argv[i + 3], argv[i + 4]
    drop_due(due_key, item_base, id)
    if attempt == '0' and id == kind .. ':' .. request_id and not string.find(kind, ':', 1, true)
      and due_id(id) == id then
      redis.call('ZADD', due_key, run_at, id)
    else
      local item_key = item_base .. id
      redis.call('HSET', item_key, 'kind', kind, 'requestId', request_id, 'runAt', run_at, 'attempt', attempt)
      schedule_due(due_key, item_key, id, sequence_key, run_at)
    end
    i = i + 5
  end
end
`;

/** `server_now()`: the Redis server's clock in whole epoch milliseconds, as `Date.now()` would read it. */
export const serverNowLua = `
local function server_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;
