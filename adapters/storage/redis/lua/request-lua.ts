import { luaScript } from '../lua-script.js';
import { dueLua } from './shared-lua.js';

/**
 * A request is the string `<version>:<JSON>`, then a line `\n<copy>` for each copy of it delivered
 * (`DeliveryStore.addDelivery`); an earlier release kept a hash `{version, json}` and its copies in a
 * hash of their own, both still read.
 *
 * `read_request(key)`: the version of the request at `key` (false when there is none) and its copies'
 * lines (from their first `\n`; '' when none), for a write that keeps them. `write_request(key,
 * stored, ttl)`: writes the string `stored` at `key`, expiring `ttl` ms from now, or, with `ttl` '',
 * keeping the expiry the key has.
 */
export const requestRecordLua = `
local function read_request(key)
  local stored = redis.pcall('GET', key)
  if type(stored) == 'string' then
    local colon = string.find(stored, ':', 1, true)
    local copies = string.find(stored, '\\n', colon, true)
    return string.sub(stored, 1, colon - 1), copies and string.sub(stored, copies) or ''
  elseif type(stored) == 'table' and stored.err then
    return redis.call('HGET', key, 'version'), ''
  end
  return false, ''
end
local function write_request(key, stored, ttl)
  if ttl == '' then
    -- PTTL and PEXPIRE where Redis 6 would say KEEPTTL: the adapter runs on Redis 5 too.
    local kept = redis.call('PTTL', key)
    redis.call('SET', key, stored)
    -- 0 is a key in its last millisecond: PEXPIRE 0 lets it go as it would have.
    if kept >= 0 then redis.call('PEXPIRE', key, kept) end
  else
    redis.call('SET', key, stored, 'PX', ttl)
  end
end
`;

/**
 * KEYS: request, due set, sequence. ARGV: item base, JSON, version, then encoded due changes. Inserts the
 * request (the string `<version>:<JSON>`) and applies its due changes together; answers 0, changing
 * nothing, when the id exists.
 */
export const createRequestScript = luaScript(`${dueLua}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[3] .. ':' .. ARGV[2])
apply_due(KEYS[2], ARGV[1], KEYS[3], ARGV, 4)
return 1
`);

/**
 * KEYS: request, due set, sequence, deliveries hash, delivery order. ARGV: item base, JSON, new
 * version, expected version, ttl ms ('' for none), then encoded due changes. Compare-and-set: writes,
 * keeping the lines of the copies, and applies the due changes only while the stored version is the
 * expected one; with a ttl, the request and the deliveries an earlier release kept apart expire that
 * long from now (a finished request), without, the request keeps the expiry it has. Answers 1 when
 * it wrote, 0 otherwise (also for an unknown request).
 */
export const updateRequestScript = luaScript(`${dueLua}${requestRecordLua}
local version, copies = read_request(KEYS[1])
if version ~= ARGV[4] then return 0 end
write_request(KEYS[1], ARGV[3] .. ':' .. ARGV[2] .. copies, ARGV[5])
if ARGV[5] ~= '' then
  redis.call('PEXPIRE', KEYS[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[5], ARGV[5])
end
apply_due(KEYS[2], ARGV[1], KEYS[3], ARGV, 6)
return 1
`);
