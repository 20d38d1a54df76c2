-- One bounded step of a compaction pass over a partition of a compacted topic (docs/format.md,
-- "Compacted topics on Redis"). The partition's entries are looked at once each, in offset order,
-- from a cursor kept in the state hash: an entry whose key has an older entry removes that one
-- (XDEL: the offsets of the rest never change), and becomes its key's latest in the key index. Once
-- the cursor reaches the end, tombstones (a null value) seen at least ARGV[2] ms ago go too. Each
-- call is atomic and looks at most ARGV[1] entries; a pass is calls until one answers done. Calls of
-- two processes may interleave: they share the cursor, so each entry is looked at once.
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start
-- KEYS[4] key index (hash: 'k' .. key -> "<offset> <bytes> <1 if a tombstone else 0>"; the field ''
--         is a placeholder that keeps it existing)
-- KEYS[5] tombstones (sorted set: offset -> ms it was seen; the member '' at +inf is a placeholder)
-- KEYS[6] state (hash: cur = next offset to look at, n / b = the index's records and their bytes,
--         from = the start below which the index names nothing, cln / to = the cursor of a sweep of the
--         index under way and the start it sweeps below, rn / rb = records and bytes removed since the
--         last pass ended; at, bn, bb, an, ab = the last pass's end and its counts before and after)
-- A trim (retention, trim()) leaves index entries naming removed entries: a sweep removes them a
-- step at a time, alongside the looking at new entries, so trims that never stop do not stop passes.
-- ARGV[1] most entries to look at (and tombstones to remove; at most 2000)  ARGV[2] tombstone retention (ms)
-- Returns {0, n, b} while the pass goes on; at its end {1, n, b, at, before records, before bytes}.
-- Error NOTOPIC when the partition does not exist, or is not a compacted topic's (no state). An entry without a record (not twainmq's) stays.
local call, sub, fmt, match, u = redis.call, string.sub, string.format, string.match, struct.unpack
local kstream, kend, kstart, kidx, ktomb, kstate = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
-- At most 2000 entries a call: a step's commands take their arguments from one Lua unpack each.
local budget, keep = math.min(tonumber(ARGV[1]), 2000), tonumber(ARGV[2])
local e = call('GET', kend)
if not e then return redis.error_reply('NOTOPIC partition does not exist') end
-- Only a compacted topic's partition has a state (made with it, deleted with it): a pass begun on a
-- compacted topic that was deleted and made again plain meanwhile must not remove a record of it.
if call('EXISTS', kstate) == 0 then return redis.error_reply('NOTOPIC partition is not compacted') end
e = tonumber(e)
local s = tonumber(call('GET', kstart) or '0')
local st = call('HMGET', kstate, 'cur', 'from', 'n', 'b', 'rn', 'rb', 'cln', 'to')
local cur, from = tonumber(st[1] or '0'), tonumber(st[2] or '0')
local n, b, rn, rb = tonumber(st[3] or '0'), tonumber(st[4] or '0'), tonumber(st[5] or '0'), tonumber(st[6] or '0')
local cln, cto = st[7] or '0', tonumber(st[8] or '0')
if cur > e then
  -- The state is past the log (only a hand-made change does that: a rollback restores both): start over.
  call('UNLINK', kidx, ktomb)
  call('HSET', kidx, '', '-')
  call('ZADD', ktomb, '+inf', '')
  cur, from, n, b, cln = s, s, 0, 0, '0'
end
if cur < s then cur = s end -- entries never looked at were trimmed
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- The record of an entry's fields (r first, as append-5.lua writes them).
local function record_of(f)
  if f and f[1] == 'r' then return f[2] end
  if f then for k = 1, #f, 2 do if f[k] == 'r' then return f[k + 1] end end end
  return nil
end
-- The index field of a record's key (record layout: backends/record-codec.ts, length prefix included).
local function key_of(r)
  return 'k' .. sub(r, 19, 18 + u('<I2', r, 15))
end
-- Whether a record's value is null: JSON (kind 2) or a typed value (kind 3) whose text is `null`.
local function is_tombstone(r)
  local kind = string.byte(r, 13)
  if kind ~= 2 and kind ~= 3 then return false end
  local q = 19 + u('<I2', r, 15) + string.byte(r, 14)
  for _ = 1, u('<I2', r, 17) do q = q + 6 + u('<I2', r, q) + u('<I4', r, q + 2) end
  return sub(r, q) == 'null'
end

-- A trim moved the start past index entries (their entries are gone): a sweep of the index (HSCAN,
-- a step at a time, cursor `cln`) removes those below `to`, the start when it began, and their counts.
if cln == '0' and s > from then cto = s end
if cln ~= '0' or s > from then
  local r = call('HSCAN', kidx, cln, 'COUNT', budget)
  cln = r[1]
  local kv, stale, tombs = r[2], {}, {}
  for i = 1, #kv, 2 do
    local oo, ob, ot = match(kv[i + 1], '^(%d+) (%d+) (%d)$')
    if oo and tonumber(oo) < s then
      stale[#stale + 1] = kv[i]
      n, b = n - 1, b - tonumber(ob)
      if ot == '1' then tombs[#tombs + 1] = oo end
    end
  end
  if #stale > 0 then call('HDEL', kidx, unpack(stale)) end
  if #tombs > 0 then call('ZREM', ktomb, unpack(tombs)) end
  if cln == '0' then from = cto end
end

local spent, caught = 0, false
if cur < e then
  local res = call('XRANGE', kstream, fmt('%d-1', cur), '+', 'COUNT', budget)
  spent = #res
  -- The step's entries by key: a key seen twice in the step keeps its last entry; the earlier ones go.
  local order, last, gone, goneBytes = {}, {}, {}, 0
  for i = 1, #res do
    local id = res[i][1]
    local o = tonumber(sub(id, 1, -3))
    local r = record_of(res[i][2])
    if r then
      local key = key_of(r)
      local prev = last[key]
      if prev then
        gone[#gone + 1] = prev.id
        goneBytes = goneBytes + prev.size
        n, b = n - 1, b - prev.size
      else
        order[#order + 1] = key
      end
      last[key] = {id = id, o = o, size = #r, tomb = is_tombstone(r)}
      n, b = n + 1, b + #r
    end
    cur = o + 1
  end
  -- Their keys' latest entries before this step: removed (one command each for the whole step).
  local fields, tombsGone, tombsNew = {}, {}, {}
  if #order > 0 then
    local olds = call('HMGET', kidx, unpack(order))
    for i = 1, #order do
      local key, old = order[i], olds[i]
      if old then
        local oo, ob, ot = match(old, '^(%d+) (%d+) (%d)$')
        if tonumber(oo) >= s then
          gone[#gone + 1] = oo .. '-1'
          goneBytes = goneBytes + tonumber(ob)
        end -- else trimmed already: only its counts go
        n, b = n - 1, b - tonumber(ob)
        if ot == '1' then tombsGone[#tombsGone + 1] = oo end
      end
      local l = last[key]
      fields[#fields + 1] = key
      fields[#fields + 1] = fmt('%d %d %s', l.o, l.size, l.tomb and '1' or '0')
      if l.tomb then
        tombsNew[#tombsNew + 1] = now
        tombsNew[#tombsNew + 1] = fmt('%d', l.o)
      end
    end
    call('HSET', kidx, unpack(fields))
  end
  if #gone > 0 then
    -- Every entry the index names at or past the start exists, so all of them are removed.
    call('XDEL', kstream, unpack(gone))
    rn, rb = rn + #gone, rb + goneBytes
  end
  if #tombsGone > 0 then call('ZREM', ktomb, unpack(tombsGone)) end
  if #tombsNew > 0 then call('ZADD', ktomb, unpack(tombsNew)) end
  -- Fewer than asked: none left below the end.
  if #res < budget then cur, caught = e, true end
else
  caught = true
end

local done = false
if caught then
  local limit = math.max(budget - spent, 1)
  local due = call('ZRANGEBYSCORE', ktomb, '-inf', now - keep, 'LIMIT', 0, limit)
  for i = 1, #due do
    local o = due[i]
    if o ~= '' then
      local id = o .. '-1'
      local ent = call('XRANGE', kstream, id, id)[1]
      local r = ent and record_of(ent[2])
      if r then
        local key = key_of(r)
        local latest = call('HGET', kidx, key)
        if latest and match(latest, '^(%d+) ') == o then call('HDEL', kidx, key) end
        call('XDEL', kstream, id)
        n, b, rn, rb = n - 1, b - #r, rn + 1, rb + #r
      end
      call('ZREM', ktomb, o)
    end
  end
  done = #due < limit and cln == '0'
end

if done then
  -- Every entry left is its key's latest: the records are the stream's length.
  local len = call('XLEN', kstream)
  call('HSET', kstate, 'cur', cur, 'from', from, 'n', n, 'b', b, 'rn', 0, 'rb', 0, 'cln', cln, 'to', cto,
    'at', now, 'bn', len + rn, 'bb', b + rb, 'an', len, 'ab', b)
  return {1, len, b, now, len + rn, b + rb}
end
call('HSET', kstate, 'cur', cur, 'from', from, 'n', n, 'b', b, 'rn', rn, 'rb', rb, 'cln', cln, 'to', cto)
return {0, n, b}
