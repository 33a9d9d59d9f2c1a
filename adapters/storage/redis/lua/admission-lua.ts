import { luaScript } from '../lua-script.js';
import { findPrincipalLua, findUsersLua, jsonStringLua } from './directory-lua.js';
import { acquireLua } from './idempotency-lua.js';
import { takeTokensLua } from './rate-limit-lua.js';
import { serverNowLua } from './shared-lua.js';

/**
 * KEYS: those of `find_principal` (digests, api-keys, last-used, revoked, users, organizations), then
 * the failed-authentication bucket, then users-by-email. ARGV: digest ('' when no key was presented);
 * capacity and rate of the failed-authentication bucket; base, capacity and rate of the key's bucket;
 * base, capacity and rate of the organization's bucket (the script appends the key's and the
 * organization's ids to the bases); '1' when recipients are looked up ('' otherwise); '1' when an
 * idempotency key is acquired ('' otherwise), then the base of idempotency records, the key as
 * JSON, the fingerprint, the caller's now, the lease end, the ttl in ms and the proposed send id
 * (all '' when none is); then each recipient's normalized email as JSON.
 * `AdmissionStore.admit` in one script, on the server's clock: {'blocked'} or {'rejected'} for a key
 * that is not valid (only then is the failed-authentication bucket read), or {'admitted' |
 * 'limited-key' | 'limited-organization', ...the principal's tuple}. When admitted, the tuple is
 * followed by what `acquire` answered for the idempotency record of the key's organization (`<base>
 * ["<organization id>","<key>"]`), an empty list when none was asked, then by `find_users` of the
 * recipients' email fields in the key's organization (`["<organization id>","<email>"]`); both keys
 * built as TypeScript builds them.
 */
export const admitScript =
  luaScript(`${serverNowLua}${takeTokensLua}${findPrincipalLua}${findUsersLua}${jsonStringLua}${acquireLua}
local now = server_now()
local principal, key = nil, nil
if ARGV[1] ~= '' then principal, key = find_principal(ARGV[1]) end
if not principal or principal[3] then
  local failed = { { key = KEYS[7], capacity = tonumber(ARGV[2]), rate = tonumber(ARGV[3]) } }
  if take_tokens(now, failed, 1) then return { 'blocked' } end
  return { 'rejected' }
end

local short = take_tokens(now, {
  { key = ARGV[4] .. key.id, capacity = tonumber(ARGV[5]), rate = tonumber(ARGV[6]) },
  { key = ARGV[7] .. key.organizationId, capacity = tonumber(ARGV[8]), rate = tonumber(ARGV[9]) },
}, 1)
local outcome = 'admitted'
if short == 0 then outcome = 'limited-key' elseif short == 1 then outcome = 'limited-organization' end
table.insert(principal, 1, outcome)
if outcome ~= 'admitted' then return principal end
local organization = '[' .. json_string(key.organizationId) .. ','
local acquisition = {}
if ARGV[11] == '1' then
  acquisition = acquire(ARGV[12] .. organization .. ARGV[13] .. ']', ARGV[14], ARGV[15], ARGV[16], ARGV[17],
    ARGV[18], now)
end
table.insert(principal, acquisition)
if ARGV[10] == '1' then
  local fields = {}
  for i = 19, #ARGV do table.insert(fields, organization .. ARGV[i] .. ']') end
  for _, value in ipairs(find_users(KEYS[8], KEYS[5], fields)) do table.insert(principal, value) end
end
return principal
`);
