import { luaScript } from '../lua-script.js';
import { serverNowLua } from './shared-lua.js';

/**
 * `live_state(key, server_time)`: the record's state, or nil when there is none or it has expired
 * at `server_time`, the server's clock in epoch ms (dropped then). Redis expires the key itself; the
 * stored deadline is checked too so that a record is never used past its 24 hours, whatever the
 * timing of Redis's own expiry.
 */
const liveStateLua = `
local function live_state(key, server_time)
  local r = redis.call('HMGET', key, 'state', 'expiresAt')
  if not r[1] then return nil end
  if tonumber(r[2]) <= server_time then
    redis.call('DEL', key)
    return nil
  end
  return r[1]
end
`;

/**
 * `acquire(key, fingerprint, now, lease_until, ttl, send_id)`: `IdempotencyStore.acquire` of the
 * record at `key`, answering {'acquired', sendId}, {'completed', status, body}, {'busy'} or
 * {'mismatch'}. A new record holds the proposed send id and expires `ttl` ms after creation on the
 * server's clock (`server_time`, epoch ms, read once by the script); a takeover keeps both. The
 * admission script acquires with it too.
 */
export const acquireLua = `${liveStateLua}
local function acquire(key, fingerprint, now, lease_until, ttl, send_id, server_time)
  local state = live_state(key, server_time)
  if not state then
    redis.call('HSET', key, 'fingerprint', fingerprint, 'state', 'running', 'leaseUntil', lease_until,
      'sendId', send_id, 'holder', send_id, 'expiresAt', string.format('%.0f', server_time + tonumber(ttl)))
    redis.call('PEXPIRE', key, ttl)
    return { 'acquired', send_id }
  end
  local r = redis.call('HMGET', key, 'fingerprint', 'leaseUntil', 'sendId', 'status', 'body')
  if r[1] ~= fingerprint then return { 'mismatch' } end
  if state == 'completed' then return { 'completed', r[4], r[5] } end
  if state == 'running' and tonumber(r[2]) > tonumber(now) then return { 'busy' } end
  -- Records written before send ids were proposed here may hold none: the takeover adopts the proposal.
  local held = r[3] or send_id
  redis.call('HSET', key, 'state', 'running', 'leaseUntil', lease_until, 'sendId', held, 'holder', send_id)
  return { 'acquired', held }
end
`;

/** KEYS: record. ARGV: fingerprint, caller's now, lease end, ttl ms, proposed send id. `acquire` of it. */
export const acquireScript = luaScript(`${serverNowLua}${acquireLua}
return acquire(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], server_now())
`);

/**
 * `held(key, holder, server_time)`: whether the record is live, running, and held by `holder`, the
 * send id its latest acquisition proposed.
 */
const heldLua = `${liveStateLua}
local function held(key, holder, server_time)
  if live_state(key, server_time) ~= 'running' then return false end
  return redis.call('HGET', key, 'holder') == holder
end
`;

/** KEYS: record. ARGV: holder, status, body. Stores the answer of the running record the holder holds. */
export const completeIdempotencyScript = luaScript(`${serverNowLua}${heldLua}
if not held(KEYS[1], ARGV[1], server_now()) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'status', ARGV[2], 'body', ARGV[3])
redis.call('HDEL', KEYS[1], 'leaseUntil')
return 1
`);

/** KEYS: record. ARGV: holder, lease end. Extends the lease the holder holds, never shortening it: `renew`. */
export const renewIdempotencyScript = luaScript(`${serverNowLua}${heldLua}
if not held(KEYS[1], ARGV[1], server_now()) then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'leaseUntil') or '0') >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'leaseUntil', ARGV[2])
return 1
`);

/** KEYS: record. ARGV: holder. Marks the running record the holder holds failed, for the next repeat to resume. */
export const failIdempotencyScript = luaScript(`${serverNowLua}${heldLua}
if not held(KEYS[1], ARGV[1], server_now()) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'failed')
redis.call('HDEL', KEYS[1], 'leaseUntil')
return 1
`);

/** KEYS: record. ARGV: holder. Deletes the running record the holder holds: `release`. */
export const releaseIdempotencyScript = luaScript(`${serverNowLua}${heldLua}
if not held(KEYS[1], ARGV[1], server_now()) then return 0 end
return redis.call('DEL', KEYS[1])
`);
