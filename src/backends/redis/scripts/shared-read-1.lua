-- Read new entries of a partition for a shared-group member without blocking (XREADGROUP … >),
-- packed into one reply like read-1.lua (one bulk string instead of five RESP elements per entry).
-- Used while the member works through a backlog; a member that caught up blocks in XREADGROUP instead.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] most entries
-- Returns '' when there is nothing new, else 'd' (dense offsets) or 'i' (an `<offset>:` before every
-- entry), then read-1.lua's format: `<count> <first id> <last id> <producer id changes> `, each change
-- as `<entry index>:<length>:<producer id>`, then the records back to back.
-- #include entry.lua
local res = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS', KEYS[1], '>')
local items = res and res[1] and res[1][2]
if not items or #items == 0 then return '' end
local function dense(list)
  local n = #list
  return tonumber(string.match(list[n][1], '^(%d+)')) - tonumber(string.match(list[1][1], '^(%d+)')) + 1 == n
end
-- Packed in one pass; pack_entries gives up (nil) on an entry without a record (not written by
-- twainmq): those are acknowledged and skipped, and the rest packed.
local ids = not dense(items)
local packed = pack_entries(items, ids)
if packed then return (ids and 'i' or 'd') .. packed end
local foreign, kept = {}, {}
for _, e in ipairs(items) do
  if e[2] and entry_fields(e[2]) then kept[#kept + 1] = e else foreign[#foreign + 1] = e[1] end
end
redis.call('XACK', KEYS[1], ARGV[1], unpack(foreign))
if #kept == 0 then return '' end
ids = not dense(kept)
return (ids and 'i' or 'd') .. pack_entries(kept, ids)
