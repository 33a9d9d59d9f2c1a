import { luaScript } from '../lua-script.js';
import { serverNowLua } from './shared-lua.js';

/**
 * `live_state(key)`: the record's state, or nil when there is none or it has expired by the server's
 * clock (dropped then). Redis expires the key itself; the stored deadline is checked too so that a
 * record is never used past its 24 hours, whatever the timing of Redis's own expiry.
 */
const liveStateLua = `${serverNowLua}
local function live_state(key)
  local r = redis.call('HMGET', key, 'state', 'expiresAt')
  if not r[1] then return nil end
  if tonumber(r[2]) <= server_now() then
    redis.call('DEL', key)
    return nil
  end
  return r[1]
end
`;

/**
 * KEYS: record. ARGV: fingerprint, caller's now, lease end, ttl ms, proposed send id. The outcomes of
 * `IdempotencyStore.acquire`: {'acquired', sendId}, {'completed', status, body}, {'busy'} or
 * {'mismatch'}. A new record holds the proposed send id and expires ttl ms after creation on the
 * server's clock; a takeover keeps both.
 */
export const acquireScript = luaScript(`${liveStateLua}
local state = live_state(KEYS[1])
if not state then
  local ttl = tonumber(ARGV[4])
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'state', 'running', 'leaseUntil', ARGV[3],
    'sendId', ARGV[5], 'expiresAt', string.format('%.0f', server_now() + ttl))
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { 'acquired', ARGV[5] }
end
local r = redis.call('HMGET', KEYS[1], 'fingerprint', 'leaseUntil', 'sendId', 'status', 'body')
if r[1] ~= ARGV[1] then return { 'mismatch' } end
if state == 'completed' then return { 'completed', r[4], r[5] } end
if state == 'running' and tonumber(r[2]) > tonumber(ARGV[2]) then return { 'busy' } end
-- Records written before send ids were proposed here may hold none: the takeover adopts the proposal.
local send_id = r[3] or ARGV[5]
redis.call('HSET', KEYS[1], 'state', 'running', 'leaseUntil', ARGV[3], 'sendId', send_id)
return { 'acquired', send_id }
`);

/**
 * KEYS: record. ARGV: status, body. Stores the answer of a live record; the first completion stands.
 */
export const completeIdempotencyScript = luaScript(`${liveStateLua}
local state = live_state(KEYS[1])
if not state or state == 'completed' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'status', ARGV[1], 'body', ARGV[2])
redis.call('HDEL', KEYS[1], 'leaseUntil')
return 1
`);

/** KEYS: record. Marks a running record failed, so that the next repeat resumes it. */
export const failIdempotencyScript = luaScript(`${liveStateLua}
if live_state(KEYS[1]) ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'failed')
redis.call('HDEL', KEYS[1], 'leaseUntil')
return 1
`);
