-- Included by append-5.lua and append-ids-7.lua (scripts.ts replaces `-- #include append-seq.lua`):
-- an append's first checks. The including script names its keys kend, kstart, kprod, kresv and
-- takes ARGV[1] producer instance, ARGV[2] batch sequence number, ARGV[3] part. Leaves v (end,
-- reservation, start), pkey, seq, part, slot, st (the producers hash's fields), last, and applied:
-- the base offset this batch got when it was applied before (re-sent after a dropped connection).
local call = redis.call
local v = call('MGET', kend, kresv, kstart)
if not v[1] then return redis.error_reply('NOTOPIC partition does not exist') end
if not v[3] then call('SET', kstart, '0') end
if not v[2] then call('SET', kresv, '-') end
if v[2] == '-' then v[2] = false end
local pkey, seq, part = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local slot = pkey .. ':' .. (seq % 32)
local st = call('HMGET', kprod, pkey, slot, '~inc')
local last = 0
local applied
if st[1] then
  last = tonumber(string.match(st[1], '^(%d+)'))
  if seq <= last then
    if st[2] then
      local s, b = string.match(st[2], '^(%d+):(%d+)$')
      if s == ARGV[2] then applied = tonumber(b) end
    end
    if not applied then
      return redis.error_reply('STALESEQ batch ' .. ARGV[2] .. ' is older than the last applied one (' .. last .. ')')
    end
  end
end
