-- Deliver entries a member holds again (after a nack): XCLAIM to the same member, which counts the
-- delivery and returns the entry. Entries now owned by another member are not touched.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3..] entry IDs
-- Returns {{id, delivery count, record, producer id, ...}, {IDs owned by another member or no longer
-- pending}, {IDs trimmed from the stream (XCLAIM drops them from the pending list)}}.
-- #include entry.lua
local out, lost, trimmed = {}, {}, {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if not (p[1] and p[1][2] == ARGV[2]) then
    lost[#lost + 1] = id
  else
    local e = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id)[1]
    local f = e and e[2]
    if not f or #f == 0 then
      trimmed[#trimmed + 1] = id
      redis.call('XACK', KEYS[1], ARGV[1], id)
    else
      push_entry(out, id, p[1][4] + 1, f)
    end
  end
end
return {out, lost, trimmed}
