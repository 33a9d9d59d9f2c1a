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
 * `write_record(key, value, ttl)`: stores the value of a record hash `{value, version}` under the
 * next version, and answers it. HINCRBY starts an absent (or expired) record at 1.
 */
const writeLua = `${expireLua}
local function write_record(key, value, ttl)
  local version = redis.call('HINCRBY', key, 'version', 1)
  redis.call('HSET', key, 'value', value)
  expire(key, ttl)
  return version
end
`;

/** KEYS: record. ARGV: value, ttl ms or ''. A blind write; answers the new version. */
export const setRecordScript = luaScript(`${writeLua}
return write_record(KEYS[1], ARGV[1], ARGV[2])
`);

/**
 * KEYS: record. ARGV: value, expected version or '' for "only if absent", ttl ms or ''. Answers the
 * new version, or 0 (never a version) when the record's version is not the expected one.
 */
export const compareAndSetRecordScript = luaScript(`${writeLua}
local current = redis.call('HGET', KEYS[1], 'version')
if ARGV[2] == '' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
return write_record(KEYS[1], ARGV[1], ARGV[3])
`);

/** KEYS: records. Answers, for each key in order, its value and version (nil and nil when absent). */
export const getRecordsScript = luaScript(`
local out = {}
for i, key in ipairs(KEYS) do
  local r = redis.call('HMGET', key, 'value', 'version')
  out[2 * i - 1] = r[1]
  out[2 * i] = r[2]
end
return out
`);

/** KEYS: list. ARGV: entry, ttl ms or ''. Appends the entry and sets the list's expiry. */
export const appendEntryScript = luaScript(`${expireLua}
redis.call('RPUSH', KEYS[1], ARGV[1])
expire(KEYS[1], ARGV[2])
return 1
`);
