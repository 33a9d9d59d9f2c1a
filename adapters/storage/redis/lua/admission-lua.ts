import { luaScript } from '../lua-script.js';
import { findPrincipalLua, findUsersLua, jsonStringLua } from './directory-lua.js';
import { acquireLua } from './idempotency-lua.js';
import { takeTokensLua } from './rate-limit-lua.js';
import { dueLua, serverNowLua } from './shared-lua.js';

/**
 * KEYS: those of `find_principal` (digests, api-keys, last-used, revoked, users, organizations), then
 * the failed-authentication bucket, then users-by-email. ARGV: digest ('' when no key was presented);
 * capacity and rate of the failed-authentication bucket; base, capacity and rate of the key's bucket;
 * base, capacity and rate of the organization's bucket (the script appends the key's and the
 * organization's ids to the bases); '1' when recipients are looked up ('' otherwise); '1' when an
 * idempotency key is acquired ('' otherwise), then the base of idempotency records, the key as
 * JSON, the fingerprint, the caller's now, the lease end, the ttl in ms and the proposed send id
 * (all '' when none is); '1' when a request is created ('' otherwise), then its key, its stored
 * JSON from after the sender (`encodeRequestAfterSender`), its version, the base of due items,
 * the due set and the sequence (all '' when none is); the number of recipients, then each one's
 * normalized email as JSON; then the request's encoded due changes.
 * `AdmissionStore.admit` in one script, on the server's clock: {'blocked'} or {'rejected'} for a key
 * that is not valid (only then is the failed-authentication bucket read), or {'admitted' |
 * 'limited-key' | 'limited-organization', ...the principal's tuple}. When admitted, the tuple is
 * followed by what `acquire` answered for the idempotency record of the key's organization (`<base>
 * ["<organization id>","<key>"]`), an empty list when none was asked, then by '1' when the request
 * was created ('' otherwise), then by `find_users` of the recipients' email fields in the key's
 * organization (`["<organization id>","<email>"]`); both keys built as TypeScript builds them. The
 * request is created as the request store's create script does, when every recipient was found and
 * the idempotency key, if any, was acquired under the proposed send id, with the organization and
 * sender of the key spliced in as JSON strings: nothing stored is re-encoded. An owner whose name
 * does not decode creates nothing; the caller then creates the request itself.
 */
export const admitScript =
  luaScript(`${serverNowLua}${takeTokensLua}${findPrincipalLua}${findUsersLua}${jsonStringLua}${acquireLua}${dueLua}
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
local emails = tonumber(ARGV[26])
local users, distinct = {}, 0
if ARGV[10] == '1' then
  local fields, seen = {}, {}
  for i = 27, 26 + emails do
    if not seen[ARGV[i]] then
      seen[ARGV[i]] = true
      distinct = distinct + 1
    end
    table.insert(fields, organization .. ARGV[i] .. ']')
  end
  users = find_users(KEYS[8], KEYS[5], fields)
end
local created = ''
if ARGV[19] == '1' and ARGV[10] == '1' and #users == 2 * distinct
    and (ARGV[11] ~= '1' or (acquisition[1] == 'acquired' and acquisition[2] == ARGV[18]))
    and redis.call('EXISTS', ARGV[20]) == 0 then
  local decoded, owner = pcall(cjson.decode, principal[5])
  if decoded and type(owner) == 'table' and type(owner.name) == 'string' then
    redis.call('SET', ARGV[20], ARGV[22] .. ':[' .. json_string(key.organizationId)
      .. ',[' .. json_string(key.userId) .. ',' .. json_string(owner.name) .. '],' .. ARGV[21])
    apply_due(ARGV[24], ARGV[23], ARGV[25], ARGV, 27 + emails)
    created = '1'
  end
end
table.insert(principal, created)
for _, value in ipairs(users) do table.insert(principal, value) end
return principal
`);
