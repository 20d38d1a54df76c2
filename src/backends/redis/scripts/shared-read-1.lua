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
-- Entries without a record (not written by twainmq) are acknowledged and skipped.
local foreign = {}
for _, e in ipairs(items) do
  if not (e[2] and entry_fields(e[2])) then foreign[#foreign + 1] = e[1] end
end
if #foreign > 0 then
  redis.call('XACK', KEYS[1], ARGV[1], unpack(foreign))
  local kept, skip = {}, {}
  for _, id in ipairs(foreign) do skip[id] = true end
  for _, e in ipairs(items) do
    if not skip[e[1]] then kept[#kept + 1] = e end
  end
  items = kept
end
local n = #items
if n == 0 then return '' end
local first, last = items[1][1], items[n][1]
local ids = tonumber(string.match(last, '^(%d+)')) - tonumber(string.match(first, '^(%d+)')) + 1 ~= n
return (ids and 'i' or 'd') .. pack_entries(items, ids)
