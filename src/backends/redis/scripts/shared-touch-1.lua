-- Refresh entries a member holds so that nobody claims them while it works on them: XCLAIM to the
-- same member with JUSTID resets their idle time and leaves their delivery count alone. Only entries
-- the member still owns are touched (an entry another member claimed is never taken back).
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3..] entry IDs
-- Returns {{IDs owned by another member or no longer pending}, {IDs trimmed from the stream}}.
local mine, lost, trimmed = {'XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0}, {}, {}
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then mine[#mine + 1] = ARGV[i] else lost[#lost + 1] = ARGV[i] end
end
if #mine > 5 then
  local n = #mine
  mine[n + 1] = 'JUSTID'
  local kept = {}
  for _, id in ipairs(redis.call(unpack(mine))) do kept[id] = true end
  -- XCLAIM drops entries deleted from the stream out of the pending list and does not return them.
  for i = 6, n do
    if not kept[mine[i]] then trimmed[#trimmed + 1] = mine[i] end
  end
end
return {lost, trimmed}
