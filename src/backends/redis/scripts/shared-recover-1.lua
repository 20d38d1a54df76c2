-- Re-read a member's own pending entries after a cursor: what a restarted member held before and
-- never acknowledged. The caller moves the cursor past every entry returned, so an entry that is
-- never acknowledged cannot make it read the same entries forever. Each re-read counts as a
-- delivery. Entries trimmed from the stream meanwhile are acknowledged and returned apart.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] cursor (entry ID; '0' = from the start)  ARGV[4] most entries
-- Returns {last ID read ('' = none left), {id, delivery count, record, producer id, ...}, {trimmed IDs}}.
-- #include entry.lua
local res = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[4], 'STREAMS', KEYS[1], ARGV[3])
local items = (res and res[1] and res[1][2]) or {}
local out, trimmed, last = {}, {}, ''
for _, e in ipairs(items) do
  local id, f = e[1], e[2]
  last = id
  if not f or #f == 0 then
    trimmed[#trimmed + 1] = id
  else
    local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
    push_entry(out, id, (p[1] and p[1][4]) or 1, f)
  end
end
if #trimmed > 0 then redis.call('XACK', KEYS[1], ARGV[1], unpack(trimmed)) end
return {last, out, trimmed}
