import { luaScript } from '../lua-script.js';
import { memberLua } from './shared-lua.js';

/**
 * KEYS: users, user-organization, user-email-field, users-by-email, organization-users of the user's
 * organization, user-order, sequence. ARGV: organization-users base, candidate id, organization id,
 * email field, JSON without id. Upserts by (organization, normalized email): keeps the id already
 * filed under that email, unfiles the user's previous email and organization, keeps the place of the
 * user's first save in listings, and answers the id stored.
 */
export const saveUserScript = luaScript(`
local id = redis.call('HGET', KEYS[4], ARGV[4])
if not id then id = ARGV[2] end
local previous_field = redis.call('HGET', KEYS[3], id)
if previous_field and previous_field ~= ARGV[4] then redis.call('HDEL', KEYS[4], previous_field) end
local previous_org = redis.call('HGET', KEYS[2], id)
if previous_org and previous_org ~= ARGV[3] then redis.call('ZREM', ARGV[1] .. previous_org, id) end
local seq = redis.call('ZSCORE', KEYS[6], id)
if not seq then
  seq = redis.call('INCR', KEYS[7])
  redis.call('ZADD', KEYS[6], seq, id)
end
redis.call('HSET', KEYS[1], id, ARGV[5])
redis.call('HSET', KEYS[2], id, ARGV[3])
redis.call('HSET', KEYS[3], id, ARGV[4])
redis.call('HSET', KEYS[4], ARGV[4], id)
redis.call('ZADD', KEYS[5], seq, id)
return id
`);

/**
 * `find_users(by_email_key, users_key, fields)`: id, JSON of each user filed under one of the email
 * fields (see `emailField`), once each, in the order of the first field that matched.
 */
export const findUsersLua = `
local function find_users(by_email_key, users_key, fields)
  local out = {}
  local seen = {}
  for _, field in ipairs(fields) do
    local id = redis.call('HGET', by_email_key, field)
    if id and not seen[id] then
      seen[id] = true
      local json = redis.call('HGET', users_key, id)
      if json then
        table.insert(out, id)
        table.insert(out, json)
      end
    end
  end
  return out
end
`;

/**
 * `json_string(s)`: `s` as TypeScript's `JSON.stringify` writes a string (quotes, backslashes and
 * control characters escaped, the short forms where JSON has them), so that a script can build the
 * JSON keys TypeScript files records under.
 */
export const jsonStringLua = String.raw`
local json_escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function json_string(s)
  return '"' .. (string.gsub(s, '[%z\1-\31"\\]', function(c)
    return json_escapes[c] or string.format('\\u%04x', string.byte(c))
  end)) .. '"'
end
`;

/** KEYS: users-by-email, users. ARGV: email fields. `find_users` of the fields. */
export const findUsersByEmailScript = luaScript(`${findUsersLua}
return find_users(KEYS[1], KEYS[2], ARGV)
`);

/**
 * KEYS: a sorted set of user ids (user-order, or one organization's), users. Answers id, JSON of each
 * user in it, in the order of their first save.
 */
export const listUsersScript = luaScript(`
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local json = redis.call('HGET', KEYS[2], id)
  if json then
    table.insert(out, id)
    table.insert(out, json)
  end
end
return out
`);

/**
 * KEYS: api-keys, digests, last-used, revoked, member, sequence, organization-keys, user-keys.
 * ARGV: prefix, id, digest, JSON, createdAt, lastUsedAt or '', revokedAt or ''. Stores a key unless
 * its digest is already stored (answers 0). A key saved again under its id replaces the old record
 * and digest and keeps its place among keys of the same createdAt.
 */
export const saveApiKeyScript = luaScript(`${memberLua}
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then return 0 end
local m = redis.call('HGET', KEYS[5], ARGV[2])
local previous = redis.call('HGET', KEYS[1], ARGV[2])
if previous then
  local p = cjson.decode(previous)
  redis.call('HDEL', KEYS[2], p.digest)
  if m then
    redis.call('ZREM', ARGV[1] .. 'organization-keys:' .. p.organizationId, m)
    redis.call('ZREM', ARGV[1] .. 'user-keys:' .. p.userId, m)
  end
end
if not m then
  m = member(KEYS[6], ARGV[2])
  redis.call('HSET', KEYS[5], ARGV[2], m)
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
if ARGV[6] == '' then redis.call('HDEL', KEYS[3], ARGV[2]) else redis.call('HSET', KEYS[3], ARGV[2], ARGV[6]) end
if ARGV[7] == '' then redis.call('HDEL', KEYS[4], ARGV[2]) else redis.call('HSET', KEYS[4], ARGV[2], ARGV[7]) end
redis.call('ZADD', KEYS[7], ARGV[5], m)
redis.call('ZADD', KEYS[8], ARGV[5], m)
return 1
`);

/**
 * `find_principal(digest)`, with KEYS 1 to 6: digests, api-keys, last-used, revoked, users,
 * organizations. The principal of a digest as the tuple key JSON, lastUsedAt, revokedAt (false when
 * unset), owner JSON, organization JSON, and the decoded key; nil when the digest is unknown or the
 * key's owner or organization is gone.
 */
export const findPrincipalLua = `
local function find_principal(digest)
  local id = redis.call('HGET', KEYS[1], digest)
  if not id then return nil end
  local record = redis.call('HGET', KEYS[2], id)
  if not record then return nil end
  local key = cjson.decode(record)
  local user = redis.call('HGET', KEYS[5], key.userId)
  local organization = redis.call('HGET', KEYS[6], key.organizationId)
  if not user or not organization then return nil end
  return { record, redis.call('HGET', KEYS[3], id), redis.call('HGET', KEYS[4], id), user, organization }, key
end
`;

/** KEYS: those of `find_principal`. ARGV: digest. The principal's tuple in one round trip, or nil. */
export const findPrincipalScript = luaScript(`${findPrincipalLua}
return (find_principal(ARGV[1]))
`);

/** KEYS: api-keys, last-used. ARGV: id, at. Sets lastUsedAt of an existing key. */
export const touchApiKeyScript = luaScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`);

/** KEYS: api-keys, revoked. ARGV: id, at. Revokes an existing key once (the first time stands); 0 when unknown. */
export const revokeApiKeyScript = luaScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
`);

/**
 * KEYS: listing sorted set, api-keys, last-used, revoked. Answers JSON, lastUsedAt, revokedAt of each
 * key, newest createdAt first and, among equal ones, the later saved first.
 */
export const listApiKeysScript = luaScript(`${memberLua}
local out = {}
for _, m in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, -1)) do
  local id = member_id(m)
  local record = redis.call('HGET', KEYS[2], id)
  if record then
    table.insert(out, record)
    table.insert(out, redis.call('HGET', KEYS[3], id))
    table.insert(out, redis.call('HGET', KEYS[4], id))
  end
end
return out
`);
