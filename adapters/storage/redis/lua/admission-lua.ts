import { luaScript } from '../lua-script.js';
import { findPrincipalLua } from './directory-lua.js';
import { takeTokensLua } from './rate-limit-lua.js';
import { serverNowLua } from './shared-lua.js';

/**
 * KEYS: those of `find_principal` (digests, api-keys, last-used, revoked, users, organizations), then
 * the failed-authentication bucket. ARGV: digest ('' when no key was presented); capacity and rate
 * of the failed-authentication bucket; base, capacity and rate of the key's bucket; base, capacity
 * and rate of the organization's bucket (the script appends the key's and the organization's ids to
 * the bases). `AdmissionStore.admit` in one script, on the server's clock: {'blocked'} or
 * {'rejected'} for a key that is not valid (only then is the failed-authentication bucket read), or
 * {'admitted' | 'limited-key' | 'limited-organization', ...the principal's tuple}.
 */
export const admitScript = luaScript(`${serverNowLua}${takeTokensLua}${findPrincipalLua}
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
return principal
`);
