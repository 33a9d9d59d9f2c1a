import { luaScript } from '../lua-script.js';

/**
 * `expire(key, ttl)`: sets a key's expiry as every transport-state write does, to `ttl` milliseconds
 * from now, or to never when `ttl` is ''.
 */
const expireLua = `
local function expire(key, ttl)
  if ttl == '' then redis.call('PERSIST', key) else redis.call('PEXPIRE', key, ttl) end
end
`;

/**
 * `read_record(key)`: the value and version of the record at `key`, or false and false when there
 * is none (false, as Redis's own nil, so that a table of them stays an array). A record is a string
 * `<version>:<value>`; the hashes `{value, version}` of earlier releases are still read (and
 * replaced by a string on their next write).
 */
const readLua = `
local function read_record(key)
  local kind = redis.call('TYPE', key).ok
  if kind == 'string' then
    local stored = redis.call('GET', key)
    local colon = string.find(stored, ':', 1, true)
    return string.sub(stored, colon + 1), string.sub(stored, 1, colon - 1)
  elseif kind == 'hash' then
    local r = redis.call('HMGET', key, 'value', 'version')
    return r[1], r[2]
  end
  return false, false
end
`;

/**
 * `read_version(key)`: the version of the record at `key`, or false when there is none, as
 * `read_record` reads it but without copying the value out of the record (a write needs only the
 * version) and without asking for the key's type first: a plain GET, and the hash of an earlier
 * release only when GET finds the key of another type.
 */
const readVersionLua = `
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
 * `write_record(key, value, ttl, current)`: stores the value under the version after `current`, the
 * version the caller read (1 when it read none: an absent or expired record), with the ttl (none
 * when ''), and answers the version.
 */
const writeLua = `${readVersionLua}
local function write_record(key, value, ttl, current)
  local version = (tonumber(current) or 0) + 1
  local stored = string.format('%d', version) .. ':' .. value
  if ttl == '' then redis.call('SET', key, stored) else redis.call('SET', key, stored, 'PX', ttl) end
  return version
end
`;

/** KEYS: record. ARGV: value, ttl ms or ''. A blind write; answers the new version. */
export const setRecordScript = luaScript(`${writeLua}
local current = read_version(KEYS[1])
return write_record(KEYS[1], ARGV[1], ARGV[2], current)
`);

/**
 * KEYS: record. ARGV: value, expected version or '' for "only if absent", ttl ms or ''. Answers the
 * new version, or 0 (never a version) when the record's version is not the expected one.
 */
export const compareAndSetRecordScript = luaScript(`${writeLua}
local current = read_version(KEYS[1])
if ARGV[2] == '' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
return write_record(KEYS[1], ARGV[1], ARGV[3], current)
`);

/** KEYS: records. Answers, for each key in order, its value and version (nil and nil when absent). */
export const getRecordsScript = luaScript(`${readLua}
local out = {}
for i, key in ipairs(KEYS) do
  local value, version = read_record(key)
  out[2 * i - 1] = value
  out[2 * i] = version
end
return out
`);

/** KEYS: list. ARGV: entry, ttl ms or ''. Appends the entry and sets the list's expiry. */
export const appendEntryScript = luaScript(`${expireLua}
redis.call('RPUSH', KEYS[1], ARGV[1])
expire(KEYS[1], ARGV[2])
return 1
`);
