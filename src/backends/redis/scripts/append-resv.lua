-- Included by append-5.lua and append-ids-7.lua after append-seq.lua: the partition's reservation
-- (a multi-part append of another instance holds it: BUSY; its writer gone: released) and the order
-- of this append's parts (SEQGAP). Sets now (the server's ms) when the including script has none yet
-- and needs it here; leaves resv (the reservation, when this instance holds it).
local resv = v[2]
if not now and (resv or part == 'first' or part == 'next') then
  local t = call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if resv then
  local owner, deadline = string.match(resv, '^(%S+) (%d+)$')
  if owner ~= pkey then
    if tonumber(deadline) > now then return redis.error_reply('BUSY partition is held by a multi-part append') end
    call('SET', kresv, '-') -- its writer is gone: the parts it wrote stay, offsets stay dense
    resv = nil
  end
end
if (part == 'next' or part == 'last') and (not resv or seq ~= last + 1) then
  return redis.error_reply('SEQGAP the previous part of this append was not applied')
end
