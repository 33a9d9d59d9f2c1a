import { luaScript } from '../lua-script.js';
import { versionedLua } from './shared-lua.js';

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
 * `write_record(key, value, ttl, current)`: stores the value under the version after `current`, the
 * version the caller read (1 when it read none: an absent or expired record), with the ttl (none
 * when ''), and answers the version.
 */
const writeLua = `${versionedLua}
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
export const getRecordsScript = luaScript(`${versionedLua}
local out = {}
for i, key in ipairs(KEYS) do
  local value, version = read_versioned(key, 'value')
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
