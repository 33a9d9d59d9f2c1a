import { luaScript } from '../lua-script.js';
import { findPrincipalLua, findUsersLua, jsonStringLua } from './directory-lua.js';
import { takeTokensLua } from './rate-limit-lua.js';
import { serverNowLua } from './shared-lua.js';

/**
 * KEYS: those of `find_principal` (digests, api-keys, last-used, revoked, users, organizations), then
 * the failed-authentication bucket, then users-by-email. ARGV: digest ('' when no key was presented);
 * capacity and rate of the failed-authentication bucket; base, capacity and rate of the key's bucket;
 * base, capacity and rate of the organization's bucket (the script appends the key's and the
 * organization's ids to the bases); '1' when recipients are looked up ('' otherwise), then each
 * recipient's normalized email as JSON. `AdmissionStore.admit` in one script, on the server's clock:
 * {'blocked'} or {'rejected'} for a key that is not valid (only then is the failed-authentication
 * bucket read), or {'admitted' | 'limited-key' | 'limited-organization', ...the principal's tuple},
 * followed, when admitted with recipients, by `find_users` of their email fields in the key's
 * organization (`["<organization id>","<email>"]`, built as TypeScript builds them).
 */
export const admitScript =
  luaScript(`${serverNowLua}${takeTokensLua}${findPrincipalLua}${findUsersLua}${jsonStringLua}
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
if outcome == 'admitted' and ARGV[10] == '1' then
  local organization = '[' .. json_string(key.organizationId) .. ','
  local fields = {}
  for i = 11, #ARGV do table.insert(fields, organization .. ARGV[i] .. ']') end
  for _, value in ipairs(find_users(KEYS[8], KEYS[5], fields)) do table.insert(principal, value) end
end
return principal
`);
