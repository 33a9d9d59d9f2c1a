import { luaScript } from '../lua-script.js';
import { requestRecordLua } from './request-lua.js';
import { versionedLua } from './shared-lua.js';

/**
 * `copy_line(stored, recipient, recipient_json, platform_json, ref_json, delivered)`: the line of a
 * copy for the request string `stored`, and the recipient's index among the request's (nil when the
 * request does not name it). Where the request is of this release's form and names the recipient,
 * the line is `[<index>,<platform>,<ref>,<offset>]`, the offset being the delivery time in whole
 * milliseconds after the request's creation: 3 copies of a request to 3 people take about 80 bytes
 * fewer than in the form of earlier releases, `[<recipient>,<platform>,<ref>,<deliveredAt>]`, which
 * any other copy keeps. Finding the index decodes the request's JSON: about 3 microseconds of
 * Redis's time per copy of a request to 3 people.
 */
const copyLineLua = `
local function recipient_index(stored, recipient)
  local colon = string.find(stored, ':', 1, true)
  local ends = string.find(stored, '\\n', colon, true)
  local ok, request = pcall(cjson.decode, string.sub(stored, colon + 1, ends and ends - 1 or -1))
  -- This release's form has numbers where earlier ones have the id (3) or the status's name (4).
  if not ok or type(request) ~= 'table' or type(request[3]) ~= 'number' or type(request[4]) ~= 'number' then
    return nil
  end
  if type(request[11]) ~= 'table' then return nil end
  for i, entry in ipairs(request[11]) do
    local key = entry
    if type(entry) == 'table' then key = entry[2] == 0 and entry[1] or entry[2] end
    if key == recipient then return i - 1, request[9] end
  end
  return nil
end
local function copy_line(stored, recipient, recipient_json, platform_json, ref_json, delivered)
  local index, created = recipient_index(stored, recipient)
  local at = tonumber(delivered)
  if index and at and type(created) == 'number' then
    local offset = at - created
    if offset == math.floor(offset) and math.abs(offset) < 2147483648 then
      return '\\n[' .. index .. ',' .. platform_json .. ',' .. ref_json .. ',' .. offset .. ']', index
    end
  end
  return '\\n[' .. recipient_json .. ',' .. platform_json .. ',' .. ref_json .. ',' .. delivered .. ']', index
end
`;

/**
 * KEYS: deliveries hash, order list (both kept only by the sends of earlier releases), request of the
 * send. ARGV: the recipient's JSON, the platform's JSON, the ref's JSON, the delivery time (epoch
 * ms), ttl ms ('' for none), the recipient.
 *
 * A send whose request is a string (`request-lua.ts`) and whose copies an earlier release did not
 * put in a hash keeps each copy as a line of the request (see {@link copyLineLua}): a new
 * (recipient, platform) is appended, a known one is replaced where it is. Any other send (a plain
 * one, a request gone or of an earlier release) keeps a hash by the field `[<recipient>,<platform>]`,
 * each copy `[<place>,<ref>,<deliveredAt>]`: a new field takes the next place (copies are never
 * removed one by one, so that is the hash's length), a known one keeps its place and is replaced; a
 * send that has an order list goes on keeping it. With a ttl, what holds the copies expires that
 * long from now; without, it keeps the expiry it has. Answers the version of the send's request,
 * false (nil) when there is none.
 */
export const addDeliveryScript = luaScript(`${versionedLua}${requestRecordLua}${copyLineLua}
local field = '[' .. ARGV[1] .. ',' .. ARGV[2] .. ']'
local stored = redis.pcall('GET', KEYS[3])
if type(stored) == 'string' and redis.call('EXISTS', KEYS[1]) == 0 then
  local line, index = copy_line(stored, ARGV[6], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
  local at = string.find(stored, '\\n' .. string.sub(field, 1, -2) .. ',', 1, true)
  if not at and index then at = string.find(stored, '\\n[' .. index .. ',' .. ARGV[2] .. ',', 1, true) end
  local rewritten
  if at then
    local after = string.find(stored, '\\n', at + 1, true)
    rewritten = string.sub(stored, 1, at - 1) .. line .. (after and string.sub(stored, after) or '')
  else
    -- Not APPEND: Redis would leave the string room to grow, as much again as it holds.
    rewritten = stored .. line
  end
  write_request(KEYS[3], rewritten, ARGV[5])
  return string.sub(stored, 1, string.find(stored, ':', 1, true) - 1)
end
local existing = redis.call('HGET', KEYS[1], field)
local place = existing and string.match(existing, '^%[(%d+),')
if not place then place = redis.call('HLEN', KEYS[1]) + (existing and 0 or 1) end
redis.call('HSET', KEYS[1], field, '[' .. place .. ',' .. ARGV[3] .. ',' .. ARGV[4] .. ']')
if not existing and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RPUSH', KEYS[2], field) end
if ARGV[5] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
return read_version(KEYS[3])
`);

/**
 * KEYS: deliveries hash, order list, request of the send. Answers 'listed' when the send has an order
 * list (sends of earlier releases), else 'placed'; then the lines of the copies the request holds
 * (after its first `\n`, '' when none); then the request's JSON when it has lines ('' otherwise),
 * which the lines of the index form need; then the field and the JSON of every copy of the hash, in
 * turn, in the order of the list when there is one, else as the hash holds them, each copy's JSON
 * starting with its place.
 */
export const listDeliveriesScript = luaScript(`
local stored = redis.pcall('GET', KEYS[3])
local lines, request = '', ''
if type(stored) == 'string' then
  local first = string.find(stored, '\\n', 1, true)
  if first then
    lines = string.sub(stored, first + 1)
    request = string.sub(stored, string.find(stored, ':', 1, true) + 1, first - 1)
  end
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local out = redis.call('HGETALL', KEYS[1])
  table.insert(out, 1, request)
  table.insert(out, 1, lines)
  table.insert(out, 1, 'placed')
  return out
end
local out = { 'listed', lines, request }
for _, field in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local json = redis.call('HGET', KEYS[1], field)
  if json then
    table.insert(out, field)
    table.insert(out, json)
  end
end
return out
`);
