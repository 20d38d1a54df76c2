-- Before a shared member of a store with `replicaAcks` hands entries out: which of them the node
-- serving the partition now holds as the member's. Each is claimed again by the member (XCLAIM 0,
-- JUSTID: idle time reset, delivery count kept), a write the WAIT sent after this script on the
-- same connection covers, whichever node the entries were read from.
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3..] entry IDs
-- Returns the IDs pending to the member here (and still in the stream).
local claim = {'XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0}
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then claim[#claim + 1] = ARGV[i] end
end
if #claim == 5 then return {} end
claim[#claim + 1] = 'JUSTID'
return redis.call(unpack(claim))
