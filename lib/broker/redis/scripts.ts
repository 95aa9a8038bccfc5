/**
 * The Lua scripts of the Redis transport: each is one atomic step, so no message is ever in two places or in
 * none (a pop and its `unacked` entry, a restore, a move into or out of the delayed set). Queue lists are
 * named inside the scripts from the key prefix, as kombu names them (`<prefix><queue>[\x06\x16<step>]`).
 */
import { LuaScript } from './script.js';

/**
 * Walks JSON text by jumping from one structural character to the next, so a string (a 20 MB base64 body)
 * costs one search, not a step per character; cjson would lose the text's exact form if it re-encoded it.
 */
const JSON_TEXT = `
local function string_end(s, i)
  local j = i + 1
  while true do
    -- A plain search runs at memory speed; a quote after an odd run of backslashes is escaped.
    local k = string.find(s, '"', j, true)
    if not k then return nil end
    local b = k - 1
    while string.byte(s, b) == 92 do b = b - 1 end
    if (k - 1 - b) % 2 == 0 then return k end
    j = k + 1
  end
end
-- The members of the object opening at i (key -> {first, last} of its value, untrimmed) and the index of
-- its closing brace.
local function members(s, i)
  local out, depth, j, key, from, pending = {}, 0, i, nil, nil, nil
  while true do
    local k = string.find(s, '[{}%[%]":,]', j)
    if not k then return nil end
    local c = string.byte(s, k)
    if c == 34 then
      local e = string_end(s, k)
      if not e then return nil end
      if depth == 1 and not key then pending = string.sub(s, k + 1, e - 1) end
      j = e + 1
    else
      if c == 123 or c == 91 then
        depth = depth + 1
      elseif c == 125 or c == 93 then
        depth = depth - 1
        if depth == 0 then
          if key then out[key] = { from, k - 1 } end
          return out, k
        end
      elseif depth == 1 and c == 58 then
        key, from = pending, k + 1
      elseif depth == 1 and c == 44 then
        if key then out[key] = { from, k - 1 } end
        key, pending = nil, nil
      end
      j = k + 1
    end
  end
end
-- A member's value without the blanks around it: its first and last index.
local function trimmed(s, r)
  local a = string.find(s, '%S', r[1])
  local b = r[2]
  while b > a and string.find(string.sub(s, b, b), '%s') do b = b - 1 end
  return a, b
end
`;

/** Shared Lua: kombu's priority step, its binding lookup for a direct exchange, and the redelivered mark. */
export const COMMON = `${JSON_TEXT}
local SEP = '\\6\\22'
local function step(p)
  p = tonumber(p) or 0
  p = math.floor(p)
  if p < 0 then p = 0 elseif p > 9 then p = 9 end
  if p >= 9 then return 9 elseif p >= 6 then return 6 elseif p >= 3 then return 3 end
  return 0
end
local function qkey(prefix, queue, pri)
  local s = step(pri)
  if s == 0 then return prefix .. queue end
  return prefix .. queue .. SEP .. s
end
-- kombu _lookup: the anonymous exchange routes to the queue named by the routing key; any other exchange
-- through its binding set, matched as a direct exchange (kombu's default type for an undeclared exchange).
local function lookup(prefix, exchange, rk)
  if exchange == '' then return { rk } end
  local out = {}
  for _, m in ipairs(redis.call('SMEMBERS', prefix .. '_kombu.binding.' .. exchange)) do
    local a = string.find(m, SEP, 1, true)
    if a then
      local b = string.find(m, SEP, a + 2, true)
      if b and string.sub(m, 1, a - 1) == rk then table.insert(out, string.sub(m, b + 2)) end
    end
  end
  return out
end
local function meta(entry)
  local ok, v = pcall(cjson.decode, entry)
  if not ok or type(v) ~= 'table' then return nil end
  return v
end
-- The text of the first element of a JSON array (the envelope of an unacked entry), marked redelivered in
-- 'headers' and 'properties.delivery_info' unless already: found in the text, because cjson would rewrite
-- [] as {} if it re-encoded it.
local function first_element(s, mark)
  local a = string.find(s, '[{%[]', 2)
  if not a or string.byte(s, a) ~= 123 then return nil end
  local env, last = members(s, a)
  if not env then return nil end
  local m = string.sub(s, a, last)
  if not mark then return m end
  local function object_of(r)
    if not r then return nil end
    local at = trimmed(s, r)
    if string.byte(s, at) ~= 123 then return nil end
    return at, members(s, at)
  end
  local opens = {}
  local h, hm = object_of(env.headers)
  if h and not hm.redelivered then table.insert(opens, h) end
  local _, pm = object_of(env.properties)
  if pm then
    local d, dm = object_of(pm.delivery_info)
    if d and not dm.redelivered then table.insert(opens, d) end
  end
  table.sort(opens, function(x, y) return x > y end)
  for _, open in ipairs(opens) do
    local at = open - a + 1
    local rest = string.sub(m, at + 1)
    local sep = string.match(rest, '^%s*}') and '' or ', '
    m = string.sub(m, 1, at) .. '"redelivered": true' .. sep .. rest
  end
  return m
end
-- Puts an unacked entry ([message, exchange, routing_key]) back on its queue(s); kombu _do_restore_message.
-- An entry that cannot be read or routed is kept whole on the unroutable list instead of being dropped.
local function restore_entry(prefix, entry, leftmost, mark, unroutable)
  local v = meta(entry)
  local m = v and first_element(entry, mark) or nil
  if not m then
    redis.call('LPUSH', unroutable, entry)
    return 0
  end
  local pri = 0
  if type(v[1]) == 'table' and type(v[1].properties) == 'table' then pri = v[1].properties.priority end
  local n = 0
  for _, q in ipairs(lookup(prefix, tostring(v[2] or ''), tostring(v[3] or ''))) do
    if leftmost then redis.call('LPUSH', qkey(prefix, q, pri), m) else redis.call('RPUSH', qkey(prefix, q, pri), m) end
    n = n + 1
  end
  if n == 0 then redis.call('LPUSH', unroutable, entry) end
  return n
end
`;

/** Envelope delivery keys, read without re-encoding the envelope; `v` is the envelope decoded (or nil). */
const ENTRY_OF = `
-- An envelope as kombu writes it ends with its properties: they alone are decoded (what entry_of reads), at
-- a third of the cost of the whole. Taken only when the last '"properties": {' opens an object that closes
-- just before the envelope's last brace, so that it is a member of the outermost object: one nested deeper
-- leaves its parent's brace over, and cjson refuses the trailing text. Anything else (another layout, other
-- separators, a key with an escaped quote) returns nil, and the envelope is decoded whole.
local function props_of(item)
  local at, from = nil, 1
  while true do
    local k = string.find(item, '"properties": {', from, true)
    if not k then break end
    at, from = k, k + 1
  end
  if not at or string.byte(item, at - 1) == 92 then return nil end
  local last = #item
  while last > at and string.find(string.sub(item, last, last), '%s') do last = last - 1 end
  if string.byte(item, last) ~= 125 then return nil end
  local ok, p = pcall(cjson.decode, string.sub(item, at + 14, last - 1))
  if ok and type(p) == 'table' then return { properties = p } end
  return nil
end
local function entry_of(item, v, fallback)
  local tag, ex, rk = fallback, '', ''
  if type(v) == 'table' and type(v.properties) == 'table' then
    local p = v.properties
    if type(p.delivery_tag) == 'string' and p.delivery_tag ~= '' then tag = p.delivery_tag end
    if type(p.delivery_info) == 'table' then
      if type(p.delivery_info.exchange) == 'string' then ex = p.delivery_info.exchange end
      if type(p.delivery_info.routing_key) == 'string' then rk = p.delivery_info.routing_key end
    end
  end
  return tag, '[' .. item .. ', ' .. cjson.encode(ex) .. ', ' .. cjson.encode(rk) .. ']'
end
-- A message heavier than the limit, read from its text (cjson would decode megabytes to read a few keys):
-- what entry_of needs of it, and when its body is over the limit (its decoded size, as the decoder measures
-- it) the envelope with an empty body and the body's size. The whole message stays in unacked, for the
-- dead-letter copy. nil: not an envelope this can read; it is decoded whole.
local function big_item(item, limit)
  local a = string.find(item, '%S')
  if not a or string.byte(item, a) ~= 123 then return nil end
  local env = members(item, a)
  if not env or not env.body then return nil end
  local bx, by = trimmed(item, env.body)
  if string.byte(item, bx) ~= 34 or string.byte(item, by) ~= 34 then return nil end
  local props = nil
  if env.properties then
    local ok, pv = pcall(cjson.decode, string.sub(item, trimmed(item, env.properties)))
    if ok and type(pv) == 'table' then props = pv end
  end
  local v = { properties = props }
  local len = by - bx - 1
  local escaped = string.find(item, '\\\\', bx + 1, true)
  escaped = escaped and escaped < by
  local size
  if props and props.body_encoding == 'base64' then
    -- Escapes or line breaks would make the size a guess: such a body is sent whole, and the decoder measures it.
    local nl = string.find(item, '\\n', bx + 1, true)
    if escaped or (nl and nl < by) then return v end
    local pad = 0
    if string.sub(item, by - 2, by - 1) == '==' then pad = 2 elseif string.sub(item, by - 1, by - 1) == '=' then pad = 1 end
    size = math.floor(len / 4) * 3 - pad
  elseif escaped then
    local ok, str = pcall(cjson.decode, '[' .. string.sub(item, bx, by) .. ']')
    if not ok or type(str) ~= 'table' or type(str[1]) ~= 'string' then return v end
    size = #str[1]
  else
    size = len
  end
  if size <= limit then return v end
  return v, string.sub(item, 1, bx) .. string.sub(item, by), size
end
`;

/**
 * Pops up to `max` messages of the given lists (in order: each list is emptied before the next) and records
 * each unacked, as kombu's QoS.append does (`unacked` hash: tag → [message, exchange, routing_key];
 * `unacked_index`: tag → delivery time in s).
 *
 * A pop is a request that can be sent again: what it took is kept under its request key until the next pop
 * of the same loop forgets it, and a request sent again (its reply was lost to a cut connection or a Redis
 * restart, and ioredis or the loop resends it) gets the same messages back instead of taking more. Without
 * this, the messages of a pop whose reply was lost waited in `unacked` for the visibility timeout. The record
 * names the messages by their `unacked` entries instead of copying them, so a message no longer unacked
 * (restored meanwhile) is not sent again. A pop without acks keeps no entries, so its record holds the messages.
 * The pop also stops before the message that would take what it returns past `budget` bytes (of envelope
 * text), so one pop never holds many heavy messages; with `alone` 1 its first message is taken whatever it
 * weighs (the caller holds nothing else). A pop stopped by the budget ends its reply with 'full'.
 * A message whose body is over `withhold` bytes (0: no limit; never with noAck, which keeps no copy) is
 * sent as its envelope with an empty body and the body's size: the worker refuses it without holding it, and
 * DEAD_LETTER_WITHHELD copies it from `unacked`. Returns {list, message, tag, withheld size or '', ...}.
 * KEYS: unacked, unacked_index, request, request to forget, list... ARGV: now (s), fallback tag prefix,
 * noAck (1 = do not record), max, request ttl (s), budget (bytes), alone (1/0), withhold (bytes).
 */
export const POP = (lists: number) =>
  new LuaScript(
    `${JSON_TEXT}${ENTRY_OF}
-- Every check before the first write: Redis keeps the writes of a script that fails, so a pop failing on
-- its third list would leave what it took from the first two in unacked, delivered to nobody.
for i = 5, #KEYS do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'list' and t ~= 'none' then
    return redis.error_reply('queue key ' .. KEYS[i] .. ' holds a ' .. t .. ', not a list: nothing was taken')
  end
end
if KEYS[4] ~= KEYS[3] then redis.call('DEL', KEYS[4]) end
local done = redis.call('GET', KEYS[3])
if done then
  local rec = cjson.decode(done)
  if rec.sent then return rec.sent end
  -- list, tag, withheld size, the message's length in its entry ('[' .. message .. ', ' ...), the stub sent or ''.
  local again = {}
  for j = 1, #rec.taken, 5 do
    local entry = redis.call('HGET', KEYS[1], rec.taken[j + 1])
    if entry then
      local stub = rec.taken[j + 4]
      table.insert(again, rec.taken[j])
      table.insert(again, stub ~= '' and stub or string.sub(entry, 2, 1 + rec.taken[j + 3]))
      table.insert(again, rec.taken[j + 1])
      table.insert(again, rec.taken[j + 2])
    end
  end
  if rec.full then table.insert(again, 'full') end
  return again
end
-- A sorted set this small is a listpack, whose every ZADD and ZREM parses the score of each member before it:
-- with a window of tags in unacked_index, Redis spent about twice the CPU a task. A member longer than a
-- listpack holds turns it into a skiplist, which it stays once that member is gone (until the set empties).
local function index_as_skiplist(key)
  local enc = redis.call('OBJECT', 'ENCODING', key)
  if enc == 'listpack' or enc == 'ziplist' then
    local member = string.rep('~', 256)
    redis.call('ZADD', key, 0, member)
    redis.call('ZREM', key, member)
  end
end
local out, n, max = {}, 0, tonumber(ARGV[4])
local taken = {}
local budget, bytes, full = tonumber(ARGV[6]), 0, false
local limit = ARGV[3] ~= '1' and tonumber(ARGV[8]) or 0
for i = 5, #KEYS do
  while n < max do
    local item = redis.call('RPOP', KEYS[i])
    if not item then break end
    local v, sent, size = nil, item, ''
    if limit > 0 and #item > limit then
      local stub, body
      v, stub, body = big_item(item, limit)
      if stub then sent, size = stub, body end
    end
    if v == nil then v = props_of(item) end
    if v == nil then
      local ok, d = pcall(cjson.decode, item)
      if ok then v = d end
    end
    -- Over the byte budget: back where it was, unless it is the first of a pop that may take one alone.
    if bytes + #sent > budget and not (n == 0 and ARGV[7] == '1') then
      redis.call('RPUSH', KEYS[i], item)
      full = true
      break
    end
    bytes = bytes + #sent
    n = n + 1
    local tag, entry = entry_of(item, v, ARGV[2] .. n)
    if ARGV[3] ~= '1' then
      redis.call('ZADD', KEYS[2], ARGV[1], tag)
      redis.call('HSET', KEYS[1], tag, entry)
      if n == 1 then index_as_skiplist(KEYS[2]) end
    end
    table.insert(out, KEYS[i])
    table.insert(out, sent)
    table.insert(out, tag)
    table.insert(out, size)
    table.insert(taken, KEYS[i])
    table.insert(taken, tag)
    table.insert(taken, size)
    table.insert(taken, #item)
    table.insert(taken, sent ~= item and sent or '')
  end
  if n >= max or full then break end
end
if full then table.insert(out, 'full') end
if n > 0 then
  local rec = ARGV[3] == '1' and { sent = out } or { taken = taken, full = full }
  redis.call('SET', KEYS[3], cjson.encode(rec), 'EX', tonumber(ARGV[5]))
end
return out`,
    4 + lists,
  );

/**
 * kombu QoS.ack of every tag in ARGV (the acks of one tick in one step): each tag leaves both indices.
 * KEYS: unacked, unacked_index. Returns how many were still unacked.
 */
export const ACK_MANY = new LuaScript(
  `local n = 0
for i = 1, #ARGV do
  redis.call('ZREM', KEYS[2], ARGV[i])
  n = n + redis.call('HDEL', KEYS[1], ARGV[i])
end
return n`,
  2,
);

/**
 * The dead-letter copy of a message the worker was sent without its body: the unacked envelope's text with
 * the dead-letter headers added to its `headers` (last, so they replace older ones), a new delivery tag and
 * the dead-letter queue's delivery_info, pushed to the dead-letter queue at its priority. Left unacked (the
 * worker acks it next, as after any dead-letter copy). KEYS: unacked. ARGV: tag, the headers' members as JSON
 * text, the new tag as JSON text, the delivery_info as JSON text, prefix, dead-letter queue. 0: the tag was gone.
 */
export const DEAD_LETTER_WITHHELD = new LuaScript(
  `${COMMON}
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then return 0 end
local a = string.find(entry, '{', 1, true)
local env, last = nil, nil
if a then env, last = members(entry, a) end
if not env then return redis.error_reply('the unacked entry of ' .. ARGV[1] .. ' is not an envelope') end
local edits, pri = {}, 0
if env.headers then
  local h = trimmed(entry, env.headers)
  if string.byte(entry, h) == 123 then
    local _, close = members(entry, h)
    local sep = string.find(entry, '%S', h + 1) == close and '' or ', '
    table.insert(edits, { close, close - 1, sep .. ARGV[2] })
  else
    local x, y = trimmed(entry, env.headers)
    table.insert(edits, { x, y, '{' .. ARGV[2] .. '}' })
  end
else
  table.insert(edits, { a + 1, a, '"headers": {' .. ARGV[2] .. '}, ' })
end
if env.properties then
  local p = trimmed(entry, env.properties)
  if string.byte(entry, p) == 123 then
    local props = members(entry, p)
    if props and props.delivery_tag then
      local x, y = trimmed(entry, props.delivery_tag)
      table.insert(edits, { x, y, ARGV[3] })
    end
    if props and props.delivery_info then
      local x, y = trimmed(entry, props.delivery_info)
      table.insert(edits, { x, y, ARGV[4] })
    end
    if props and props.priority then pri = tonumber(string.sub(entry, trimmed(entry, props.priority))) or 0 end
  end
end
table.sort(edits, function(l, r) return l[1] < r[1] end)
local parts, at = {}, a
for _, e in ipairs(edits) do
  table.insert(parts, string.sub(entry, at, e[1] - 1))
  table.insert(parts, e[3])
  at = e[2] + 1
end
table.insert(parts, string.sub(entry, at, last))
redis.call('LPUSH', qkey(ARGV[5], ARGV[6], pri), table.concat(parts))
return 1`,
  1,
);

/**
 * kombu restore_by_tag: removes the tag from both indices and pushes the message back, marked redelivered;
 * to the back of the queue when leftmost (a reject with requeue), to the front otherwise (restore).
 * KEYS: unacked, unacked_index, unroutable. ARGV: tag, leftmost (1/0), prefix. Returns the number of queues
 * restored to (-1: the tag was not unacked).
 */
export const RESTORE = new LuaScript(
  `${COMMON}
local entry = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
if not entry then return -1 end
return restore_entry(ARGV[3], entry, ARGV[2] == '1', true, KEYS[3])`,
  3,
);

/**
 * Moves an unacked message into the delayed set (score = due time, ms) and acks it, in one step: it is never
 * in both, never in neither. KEYS: unacked, unacked_index, delayed. ARGV: tag, due ms. 0 = the tag was gone.
 */
export const DEFER = new LuaScript(
  `local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then return 0 end
redis.call('ZADD', KEYS[3], ARGV[2], entry)
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
return 1`,
  3,
);

/**
 * Moves due messages of the delayed set back to the back of their queue (as a new publish). One script, so
 * each due message moves exactly once whichever worker runs it. KEYS: delayed, unroutable. ARGV: now ms, limit, prefix.
 */
export const MOVE_DUE = new LuaScript(
  `${COMMON}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local moved = 0
for _, entry in ipairs(due) do
  if redis.call('ZREM', KEYS[1], entry) == 1 then
    restore_entry(ARGV[3], entry, true, false, KEYS[2])
    moved = moved + 1
  end
end
return moved`,
  2,
);

/**
 * Publishes to a named exchange through its bindings, as kombu's direct exchange delivers: LPUSH to every
 * bound queue whose routing key matches. KEYS: none. ARGV: prefix, exchange, routing key, priority, message.
 */
export const PUBLISH_BOUND = new LuaScript(
  `${COMMON}
local n = 0
for _, q in ipairs(lookup(ARGV[1], ARGV[2], ARGV[3])) do
  redis.call('LPUSH', qkey(ARGV[1], q, ARGV[4]), ARGV[5])
  n = n + 1
end
return n`,
  0,
);

/** A lease: renewed only by its holder. KEYS: lock. ARGV: token, ttl ms. */
export const LEASE_RENEW = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`,
  1,
);

/** Releases a lock or mutex only if this holder still has it (kombu's Mutex does the same with WATCH). */
export const RELEASE_IF_HELD = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
  1,
);
