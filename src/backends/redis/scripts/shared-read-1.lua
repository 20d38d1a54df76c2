-- Read new entries of a partition for a shared-group member without blocking (XREADGROUP … >),
-- packed into one reply like read-1.lua (one bulk string instead of five RESP elements per entry).
-- Used while the member works through a backlog; a member that caught up blocks in XREADGROUP instead.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] most entries
-- Returns '' when there is nothing new, else 'd' (dense offsets) or 'i' (an `<offset>:` before every
-- entry), then read-1.lua's format: `<count> <first id> <last id> <producer id changes> `, each change
-- as `<entry index>:<length>:<producer id>`, then the records back to back.
local res = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS', KEYS[1], '>')
local items = res and res[1] and res[1][2]
if not items or #items == 0 then return '' end
-- Entries without a record (not written by twainmq) are acknowledged and skipped.
local foreign = {}
for _, e in ipairs(items) do
  local f = e[2]
  if not (f and f[1] == 'r') then
    local r
    if f then
      for k = 1, #f, 2 do
        if f[k] == 'r' then r = f[k + 1] end
      end
    end
    if not r then foreign[#foreign + 1] = e[1] end
  end
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
local out, pids, prev, sub = {}, {}, nil, string.sub
for i = 1, n do
  local f = items[i][2]
  local r, p = f[2], f[4]
  if f[1] ~= 'r' then
    for k = 1, #f, 2 do
      if f[k] == 'r' then r = f[k + 1] elseif f[k] == 'p' then p = f[k + 1] end
    end
  end
  p = p or ''
  if p ~= prev then
    pids[#pids + 1] = (i - 1) .. ':' .. #p .. ':' .. p
    prev = p
  end
  if ids then out[i] = sub(items[i][1], 1, -3) .. ':' .. r else out[i] = r end
end
return (ids and 'i' or 'd') .. n .. ' ' .. first .. ' ' .. last .. ' ' .. #pids .. ' ' .. table.concat(pids) .. table.concat(out)
