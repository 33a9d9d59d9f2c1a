import { luaScript } from '../lua-script.js';
import { requestRecordLua } from './request-lua.js';
import { versionedLua } from './shared-lua.js';

/**
 * KEYS: deliveries hash, order list (both kept only by the sends of earlier releases), request of the
 * send. ARGV: field (the JSON `["<recipient>","<platform>"]`), the stored JSON of the copy after its
 * recipient and platform (`<ref>,<deliveredAt>]`), ttl ms ('' for none).
 *
 * A send whose request is a string (`request-lua.ts`) and whose copies an earlier release did not
 * put in a hash keeps each copy as a line of the request, `\n["<recipient>","<platform>",<ref>,
 * <deliveredAt>]`: a new (recipient, platform) is appended, a known one is replaced where it is. Any
 * other send (a plain one, a request gone or of an earlier release) keeps a hash by field, each copy
 * `[<place>,<ref>,<deliveredAt>]`: a new field takes the next place (copies are never removed one by
 * one, so that is the hash's length), a known one keeps its place and is replaced; a send that has
 * an order list goes on keeping it. With a ttl, what holds the copies expires that long from now;
 * without, it keeps the expiry it has. Answers the version of the send's request, false (nil) when
 * there is none.
 */
export const addDeliveryScript = luaScript(`${versionedLua}${requestRecordLua}
local stored = redis.pcall('GET', KEYS[3])
if type(stored) == 'string' and redis.call('EXISTS', KEYS[1]) == 0 then
  local start = '\\n' .. string.sub(ARGV[1], 1, -2) .. ','
  local at = string.find(stored, start, 1, true)
  local rewritten
  if at then
    local after = string.find(stored, '\\n', at + 1, true)
    rewritten = string.sub(stored, 1, at - 1) .. start .. ARGV[2] .. (after and string.sub(stored, after) or '')
  else
    -- Not APPEND: Redis would leave the string room to grow, as much again as it holds.
    rewritten = stored .. start .. ARGV[2]
  end
  write_request(KEYS[3], rewritten, ARGV[3])
  return string.sub(stored, 1, string.find(stored, ':', 1, true) - 1)
end
local existing = redis.call('HGET', KEYS[1], ARGV[1])
local place = existing and string.match(existing, '^%[(%d+),')
if not place then place = redis.call('HLEN', KEYS[1]) + (existing and 0 or 1) end
redis.call('HSET', KEYS[1], ARGV[1], '[' .. place .. ',' .. ARGV[2])
if not existing and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RPUSH', KEYS[2], ARGV[1]) end
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return read_version(KEYS[3])
`);

/**
 * KEYS: deliveries hash, order list, request of the send. Answers 'listed' when the send has an order
 * list (sends of earlier releases), else 'placed'; then the lines of the copies the request holds
 * (after its first `\n`, '' when none); then the field and the JSON of every copy of the hash, in
 * turn, in the order of the list when there is one, else as the hash holds them, each copy's JSON
 * starting with its place.
 */
export const listDeliveriesScript = luaScript(`
local stored = redis.pcall('GET', KEYS[3])
local lines = ''
if type(stored) == 'string' then
  local first = string.find(stored, '\\n', 1, true)
  if first then lines = string.sub(stored, first + 1) end
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local out = redis.call('HGETALL', KEYS[1])
  table.insert(out, 1, lines)
  table.insert(out, 1, 'placed')
  return out
end
local out = { 'listed', lines }
for _, field in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local json = redis.call('HGET', KEYS[1], field)
  if json then
    table.insert(out, field)
    table.insert(out, json)
  end
end
return out
`);
