-- Take up a member's own pending entries that it may not know of: entries Redis delivered to it
-- whose reply never reached it (a read answered after the client gave up on it, a reply lost with a
-- dropped connection). Unlike recovery, the delivery count stays as it is (the member never handed
-- them out) and each returned entry's idle time is reset (XCLAIM to itself, JUSTID). Entries idle
-- for `claimAfterMs` or longer are left alone: given back, or claimable by any member anyway.
-- Entries trimmed from the stream meanwhile are acknowledged and returned apart.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] cursor (entry ID after which to go on; '' = from the start)
-- ARGV[4] most entries  ARGV[5] least idle time (ms)  ARGV[6] most idle time (ms, exclusive)
-- ARGV[7] entries the member knows it holds here, or -1: with a count, nothing is scanned unless
-- Redis has more pending for the member than that
-- Returns {last ID scanned ('' = none left), {id, delivery count, record, producer id, ...}, {trimmed IDs}}.
-- #include entry.lua
local known = tonumber(ARGV[7])
if known >= 0 then
  local n = 0
  local s = redis.call('XPENDING', KEYS[1], ARGV[1])
  for _, c in ipairs(s[4] or {}) do
    if c[1] == ARGV[2] then n = tonumber(c[2]) end
  end
  if n <= known then return {'', {}, {}} end
end
local from = ARGV[3] == '' and '-' or '(' .. ARGV[3]
local pend = redis.call('XPENDING', KEYS[1], ARGV[1], from, '+', ARGV[4], ARGV[2])
local least, most = tonumber(ARGV[5]), tonumber(ARGV[6])
local out, trimmed, last = {}, {}, ''
local taken = {'XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0}
for _, p in ipairs(pend) do
  local id, idle, count = p[1], p[3], p[4]
  last = id
  if idle >= least and idle < most then
    local e = redis.call('XRANGE', KEYS[1], id, id)
    if e[1] then
      push_entry(out, id, count, e[1][2])
      taken[#taken + 1] = id
    else
      trimmed[#trimmed + 1] = id
    end
  end
end
if #taken > 5 then
  taken[#taken + 1] = 'JUSTID'
  redis.call(unpack(taken))
end
if #trimmed > 0 then redis.call('XACK', KEYS[1], ARGV[1], unpack(trimmed)) end
if #pend < tonumber(ARGV[4]) then last = '' end
return {last, out, trimmed}
