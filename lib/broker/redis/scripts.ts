/**
 * The Lua scripts of the Redis transport: each is one atomic step, so no message is ever in two places or in
 * none (a pop and its `unacked` entry, a restore, a move into or out of the delayed set). Queue lists are
 * named inside the scripts from the key prefix, as kombu names them (`<prefix><queue>[\x06\x16<step>]`).
 */
import { LuaScript } from './script.js';

/** Shared Lua: kombu's priority step, its binding lookup for a direct exchange, and the redelivered mark. */
export const COMMON = `
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
-- The text of the first element of a JSON array, and where to mark it redelivered ('headers' and
-- 'properties.delivery_info'), found by walking the text: cjson would rewrite [] as {} if we re-encoded it.
local function first_element(s, mark)
  local stack, i, n, last = {}, 1, #s, nil
  local first, finish, opens, seen = nil, nil, {}, {}
  while i <= n do
    local c = string.sub(s, i, i)
    if c == '"' then
      local j = i + 1
      while j <= n do
        local d = string.sub(s, j, j)
        if d == '\\\\' then j = j + 2 elseif d == '"' then break else j = j + 1 end
      end
      last = string.sub(s, i + 1, j - 1)
      i = j
    elseif c == ':' then
      local top = stack[#stack]
      if top then
        top.key = last
        if last == 'redelivered' then seen[top.path] = true end
      end
    elseif c == '{' or c == '[' then
      local top = stack[#stack]
      local path = '#'
      if top and top.kind == '{' then path = top.path .. '/' .. (top.key or '') end
      if #stack == 1 and first == nil then first = i end
      table.insert(stack, { kind = c, path = path })
      if c == '{' then opens[path] = i end
    elseif c == '}' or c == ']' then
      table.remove(stack)
      if #stack == 1 and first and not finish then finish = i end
    end
    i = i + 1
  end
  if not first or not finish then return nil end
  local m = string.sub(s, first, finish)
  local marks = {}
  if not mark then return m end
  for _, p in ipairs({ '#/headers', '#/properties/delivery_info' }) do
    if opens[p] and not seen[p] then table.insert(marks, opens[p] - first + 1) end
  end
  table.sort(marks, function(a, b) return a > b end)
  for _, at in ipairs(marks) do
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

/** Envelope delivery keys, read without re-encoding the envelope. */
const ENTRY_OF = `
local function entry_of(item, fallback)
  local tag, ex, rk = fallback, '', ''
  local ok, v = pcall(cjson.decode, item)
  if ok and type(v) == 'table' and type(v.properties) == 'table' then
    local p = v.properties
    if type(p.delivery_tag) == 'string' and p.delivery_tag ~= '' then tag = p.delivery_tag end
    if type(p.delivery_info) == 'table' then
      if type(p.delivery_info.exchange) == 'string' then ex = p.delivery_info.exchange end
      if type(p.delivery_info.routing_key) == 'string' then rk = p.delivery_info.routing_key end
    end
  end
  return tag, '[' .. item .. ', ' .. cjson.encode(ex) .. ', ' .. cjson.encode(rk) .. ']'
end
`;

/**
 * Pops up to `max` messages of the given lists (in order: each list is emptied before the next) and records
 * each unacked, as kombu's QoS.append does (`unacked` hash: tag → [message, exchange, routing_key];
 * `unacked_index`: tag → delivery time in s). Returns {list, message, tag, list, message, tag, ...}.
 *
 * A pop is a request that can be sent again: what it took is kept under its request key until the next pop
 * of the same loop forgets it, and a request sent again (its reply was lost to a cut connection or a Redis
 * restart, and ioredis or the loop resends it) gets the same messages back instead of taking more. Without
 * this, the messages of a pop whose reply was lost waited in `unacked` for the visibility timeout.
 * The pop also stops before the message that would take what it returns past `budget` bytes (of envelope
 * text), so one pop never holds many heavy messages; with `alone` 1 its first message is taken whatever it
 * weighs (the caller holds nothing else). A pop stopped by the budget ends its reply with 'full'.
 * KEYS: unacked, unacked_index, request, request to forget, list... ARGV: now (s), fallback tag prefix,
 * noAck (1 = do not record), max, request ttl (s), budget (bytes), alone (1/0).
 */
export const POP = (lists: number) =>
  new LuaScript(
    `${ENTRY_OF}
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
if done then return cjson.decode(done) end
local out, n, max = {}, 0, tonumber(ARGV[4])
local budget, bytes, full = tonumber(ARGV[6]), 0, false
for i = 5, #KEYS do
  while n < max do
    local item = redis.call('RPOP', KEYS[i])
    if not item then break end
    -- Over the byte budget: back where it was, unless it is the first of a pop that may take one alone.
    if bytes + #item > budget and not (n == 0 and ARGV[7] == '1') then
      redis.call('RPUSH', KEYS[i], item)
      full = true
      break
    end
    bytes = bytes + #item
    n = n + 1
    local tag, entry = entry_of(item, ARGV[2] .. n)
    if ARGV[3] ~= '1' then
      redis.call('ZADD', KEYS[2], ARGV[1], tag)
      redis.call('HSET', KEYS[1], tag, entry)
    end
    table.insert(out, KEYS[i])
    table.insert(out, item)
    table.insert(out, tag)
  end
  if n >= max or full then break end
end
if full then table.insert(out, 'full') end
if n > 0 then redis.call('SET', KEYS[3], cjson.encode(out), 'EX', tonumber(ARGV[5])) end
return out`,
    4 + lists,
  );

/** kombu QoS.ack: the tag leaves both indices. KEYS: unacked, unacked_index. ARGV: tag. */
export const ACK = new LuaScript(
  `redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])`,
  2,
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
