-- Append records to a partition with dense offsets: entry ID `<offset>-1`, fields r (record), p (producer id).
-- KEYS[1] partition stream  KEYS[2] end (next offset)  KEYS[3] start (first retained offset)
-- KEYS[4] producers (hash: <instance> -> "<last seq> <ms>", <instance>:<seq % 32> -> "<seq>:<base offset>",
--         and ~inc -> the partition's incarnations "<server run id>:<first offset> ..." (decision 112))
-- KEYS[5] reservation ("<instance> <deadline ms>" while a multi-part append holds the partition, else "-")
-- Every key exists from the topic's creation (a script naming an absent key fails with TRYAGAIN for
-- the whole migration of its Cluster slot); a partition created before that gets them here.
-- ARGV[1] producer instance  ARGV[2] batch sequence number  ARGV[3] part: 'one' | 'first' | 'next' | 'last'
-- ARGV[4] retention.maxMessages (0 = none)  ARGV[5] producer id  ARGV[6] now (ms, the client's clock)
-- ARGV[7] the encoded records, concatenated (each starts with its u32 little-endian length)
-- ARGV[8] compare-and-append: the end this batch must find ('' = any end)
-- Returns {base offset, 1 if this batch was applied before (nothing written) else 0}.
-- Errors: NOTOPIC (partition absent), BUSY (another instance's multi-part append holds the partition),
-- SEQGAP (the previous part of this append was not applied), STALESEQ (an old batch, no longer remembered),
-- CONFLICT <end> (ARGV[8] is not the end: nothing written).
local call = redis.call
local v = call('MGET', KEYS[2], KEYS[5], KEYS[3])
if not v[1] then return redis.error_reply('NOTOPIC partition does not exist') end
if not v[3] then call('SET', KEYS[3], '0') end
if not v[2] then call('SET', KEYS[5], '-') end
if v[2] == '-' then v[2] = false end
local pkey, seq, part = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local slot = pkey .. ':' .. (seq % 32)
local st = call('HMGET', KEYS[4], pkey, slot, '~inc')
local last = 0
if st[1] then
  last = tonumber(string.match(st[1], '^(%d+)'))
  if seq <= last then
    -- A batch applied before (re-sent after a dropped connection): its original offsets.
    if st[2] then
      local s, b = string.match(st[2], '^(%d+):(%d+)$')
      if s == ARGV[2] then return {tonumber(b), 1} end
    end
    return redis.error_reply('STALESEQ batch ' .. ARGV[2] .. ' is older than the last applied one (' .. last .. ')')
  end
end
local resv = v[2]
local now
if resv or part == 'first' or part == 'next' then
  local t = call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if resv then
  local owner, deadline = string.match(resv, '^(%S+) (%d+)$')
  if owner ~= pkey then
    if tonumber(deadline) > now then return redis.error_reply('BUSY partition is held by a multi-part append') end
    call('SET', KEYS[5], '-') -- its writer is gone: the parts it wrote stay, offsets stay dense
    resv = nil
  end
end
if (part == 'next' or part == 'last') and (not resv or seq ~= last + 1) then
  return redis.error_reply('SEQGAP the previous part of this append was not applied')
end

if ARGV[8] and ARGV[8] ~= '' and ARGV[8] ~= v[1] then return redis.error_reply('CONFLICT ' .. v[1]) end
local base = tonumber(v[1])
-- A server (a restart, a promoted replica, a restore) appending here for the first time starts an
-- incarnation at the end it finds: readers that saw offsets past it know they were rolled back.
local run = string.match(call('INFO', 'server'), 'run_id:(%x%x%x%x%x%x%x%x%x%x%x%x)')
local inc = st[3] or ''
if string.match(inc, '(%x+):%d+$') ~= run then
  inc = inc .. (inc == '' and '' or ' ') .. run .. ':' .. v[1]
  local n = 0
  for _ in string.gmatch(inc, ' ') do n = n + 1 end
  if n >= 16 then inc = string.match(inc, '^%S+ (.*)$') end
  call('HSET', KEYS[4], '~inc', inc)
end
local key, pid, sub, unpack, fmt = KEYS[1], ARGV[5], string.sub, struct.unpack, string.format
local blob = ARGV[7]
local pos, size, n = 1, #blob, 0
while pos <= size do
  local len = unpack('<I4', blob, pos)
  call('XADD', key, fmt('%d-1', base + n), 'r', sub(blob, pos, pos + 3 + len), 'p', pid)
  pos = pos + 4 + len
  n = n + 1
end
local newEnd = base + n
call('SET', KEYS[2], fmt('%d', newEnd))
if part == 'first' or part == 'next' then
  call('SET', KEYS[5], pkey .. ' ' .. fmt('%d', now + 10000))
elseif resv then
  call('SET', KEYS[5], '-')
end

-- Remember this batch (32 slots per producer instance) so a re-sent copy is recognised.
call('HSET', KEYS[4], pkey, ARGV[2] .. ' ' .. ARGV[6], slot, ARGV[2] .. ':' .. fmt('%d', base))
-- Now and then, forget producer instances idle for an hour.
if seq % 64 == 0 and call('HLEN', KEYS[4]) > 4096 then
  local all = call('HGETALL', KEYS[4])
  local cutoff = tonumber(ARGV[6]) - 3600000
  for i = 1, #all, 2 do
    local ms = string.match(all[i + 1], '^%d+ (%d+)$')
    if ms and tonumber(ms) < cutoff then
      call('HDEL', KEYS[4], all[i])
      for k = 0, 31 do call('HDEL', KEYS[4], all[i] .. ':' .. k) end
    end
  end
end

local max = tonumber(ARGV[4])
if max > 0 then
  local s = tonumber(call('GET', KEYS[3]) or '0')
  if newEnd - s > max then
    local cut = newEnd - max
    call('XTRIM', key, 'MINID', fmt('%d-1', cut))
    call('SET', KEYS[3], fmt('%d', cut))
  end
end
return {base, 0}
