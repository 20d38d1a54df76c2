-- Included by append-5.lua and append-ids-7.lua before they write: a server (a restart, a promoted
-- replica, a restore) appending here for the first time starts an incarnation at the end it finds
-- (decision 112): readers that saw offsets past it know they were rolled back.
local run = string.match(call('INFO', 'server'), 'run_id:(%x%x%x%x%x%x%x%x%x%x%x%x)')
local inc = st[3] or ''
if string.match(inc, '(%x+):%d+$') ~= run then
  inc = inc .. (inc == '' and '' or ' ') .. run .. ':' .. v[1]
  local n = 0
  for _ in string.gmatch(inc, ' ') do n = n + 1 end
  if n >= 16 then inc = string.match(inc, '^%S+ (.*)$') end
  call('HSET', kprod, '~inc', inc)
end
