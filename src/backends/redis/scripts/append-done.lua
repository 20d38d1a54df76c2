-- Included by append-5.lua and append-ids-7.lua once their records are written: the new end, the
-- reservation, this batch remembered for a re-sent copy, idle producer instances forgotten, and
-- retention.maxMessages (ARGV[4]) applied. Uses base, newEnd, fmt (string.format), kstream and the
-- locals of append-seq.lua and append-resv.lua.
call('SET', kend, fmt('%d', newEnd))
if part == 'first' or part == 'next' then
  call('SET', kresv, pkey .. ' ' .. fmt('%d', now + 10000))
elseif resv then
  call('SET', kresv, '-')
end

-- Remember this batch (32 slots per producer instance) so a re-sent copy is recognised.
call('HSET', kprod, pkey, ARGV[2] .. ' ' .. ARGV[6], slot, ARGV[2] .. ':' .. fmt('%d', base))
-- Now and then, forget producer instances idle for an hour.
if seq % 64 == 0 and call('HLEN', kprod) > 4096 then
  local all = call('HGETALL', kprod)
  local cutoff = tonumber(ARGV[6]) - 3600000
  for i = 1, #all, 2 do
    local ms = string.match(all[i + 1], '^%d+ (%d+)$')
    if ms and tonumber(ms) < cutoff then
      call('HDEL', kprod, all[i])
      for k = 0, 31 do call('HDEL', kprod, all[i] .. ':' .. k) end
    end
  end
end

local max = tonumber(ARGV[4])
if max > 0 then
  local s = tonumber(call('GET', kstart) or '0')
  if newEnd - s > max then
    local cut = newEnd - max
    call('XTRIM', kstream, 'MINID', fmt('%d-1', cut))
    call('SET', kstart, fmt('%d', cut))
  end
end
