-- A member leaves a partition's shared group: deleted when it holds nothing (deleting a member drops
-- its pending entries for good), else what it still holds is made claimable at once.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] idle time to set on entries it still holds (ms)
-- Returns 1 when the member was deleted, 0 when it still has pending entries (or the group is gone).
local p = redis.pcall('XPENDING', KEYS[1], ARGV[1], '-', '+', 1000, ARGV[2])
if type(p) ~= 'table' or p.err then return 0 end
if #p == 0 then
  redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
while #p > 0 do
  local ids = {'XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0}
  for _, e in ipairs(p) do ids[#ids + 1] = e[1] end
  ids[#ids + 1] = 'IDLE'
  ids[#ids + 1] = ARGV[3]
  ids[#ids + 1] = 'JUSTID'
  redis.call(unpack(ids))
  if #p < 1000 then break end
  p = redis.call('XPENDING', KEYS[1], ARGV[1], '(' .. p[#p][1], '+', 1000, ARGV[2])
end
return 0
