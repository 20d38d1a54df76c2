-- The first offset whose record timestamp is >= a time, whatever the order of timestamps.
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start
-- ARGV[1] time (ms since epoch)  ARGV[2] '' to search, or an offset to go on scanning from
-- Returns {offset, done}: done 1 → offset is the answer (the end offset when no record is at or
-- after the time); done 0 → call again with ARGV[2] = offset.
-- Search: a binary search over the retained offsets for the first whose running maximum (its
-- entry's `m` field, else its own timestamp; append-max.lua) is >= the time. That entry's own
-- timestamp is >= the time unless the maximum it carries came from an entry removed since (trimmed
-- below it, or compacted away before it): then the retained entries are scanned from it, a page
-- per call (so a long scan never blocks the server), up to the first at or after the time (at the
-- latest the first entry without `m`: its timestamp is the running maximum, already past the time).
local t = tonumber(ARGV[1])
local unpack = struct.unpack

-- {running maximum, own timestamp} of an entry's fields (nil, nil when it has no record).
local function times(f)
  local own, m
  for k = 1, #f, 2 do
    if f[k] == 'r' and #f[k + 1] >= 12 then own = unpack('<d', f[k + 1], 5) elseif f[k] == 'm' then m = tonumber(f[k + 1]) end
  end
  return m or own, own
end

local function offset_of(id)
  return tonumber(string.sub(id, 1, -3))
end

if ARGV[2] ~= '' then
  local from = tonumber(ARGV[2])
  local page = redis.call('XRANGE', KEYS[1], string.format('%d-1', from), '+', 'COUNT', 256)
  if #page == 0 then return {tonumber(redis.call('GET', KEYS[2]) or '0'), 1} end
  for i = 1, #page do
    local _, own = times(page[i][2])
    if own and own >= t then return {offset_of(page[i][1]), 1} end
  end
  return {offset_of(page[#page][1]) + 1, 0}
end

local start = tonumber(redis.call('GET', KEYS[3]) or '0')
local lo = start
local hi = tonumber(redis.call('GET', KEYS[2]) or '0')
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  local r = redis.call('XRANGE', KEYS[1], string.format('%d-1', mid), '+', 'COUNT', 1)
  if #r == 0 or (times(r[1][2]) or t) >= t then hi = mid else lo = mid + 1 end
end
-- The first entry kept at or after lo: its running maximum is >= the time, and every entry before it
-- is below. Its own timestamp is too, unless the maximum it carries came from an entry removed
-- since (a trim below it, or compaction between): then scan on from it. lo itself may be an offset
-- compaction removed.
local r = redis.call('XRANGE', KEYS[1], string.format('%d-1', lo), '+', 'COUNT', 1)[1]
if not r then return {hi, 1} end
local _, own = times(r[2])
if own and own < t then return {offset_of(r[1]), 0} end
return {offset_of(r[1]), 1}
