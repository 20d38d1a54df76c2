-- Claim entries pending longer than a minimum idle time from any member of a shared group (members
-- that died or stalled: live members refresh what they hold), continuing a scan of the group's
-- pending list from a cursor. Entries trimmed from the stream are acknowledged and returned apart.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] minimum idle time (ms)  ARGV[4] cursor ('0-0' = from the start)
-- ARGV[5] most entries  ARGV[6] 'autoclaim' (XAUTOCLAIM, up to 16 steps of the scan) or 'readgroup'
-- (XREADGROUP … CLAIM, Redis >= 8.4: idle pending entries first, then new ones; no cursor)
-- Returns {next cursor ('0-0' = the scan went round), {id, delivery count, record, producer id, ...}, {trimmed IDs}}.
-- #include entry.lua
local out, trimmed = {}, {}
local want = tonumber(ARGV[5])
local got = 0

local function add(e)
  local id, f = e[1], e[2]
  if not f or #f == 0 then
    trimmed[#trimmed + 1] = id
    return
  end
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  push_entry(out, id, (p[1] and p[1][4]) or 1, f)
  got = got + 1
end

local cursor = ARGV[4]
if ARGV[6] == 'readgroup' then
  local res = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', want, 'CLAIM', ARGV[3], 'STREAMS', KEYS[1], '>')
  for _, e in ipairs((res and res[1] and res[1][2]) or {}) do
    if type(e) == 'table' then add(e) end
  end
  cursor = '0-0'
else
  for _ = 1, 16 do
    local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], cursor, 'COUNT', want - got)
    cursor = r[1]
    for _, e in ipairs(r[2]) do
      if type(e) == 'table' then add(e) end -- Redis 6.2 returned deleted entries as nil
    end
    for _, id in ipairs(r[3] or {}) do trimmed[#trimmed + 1] = id end -- Redis >= 7: deleted, already out of the pending list
    if cursor == '0-0' or got >= want then break end
  end
end
if #trimmed > 0 then redis.call('XACK', KEYS[1], ARGV[1], unpack(trimmed)) end
return {cursor, out, trimmed}
