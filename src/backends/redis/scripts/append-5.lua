-- Append records to a partition with dense offsets: entry ID `<offset>-1`, fields r (record), p (producer id).
-- KEYS[1] partition stream  KEYS[2] end (next offset)  KEYS[3] start (first retained offset)
-- KEYS[4] producers (hash: producer instance -> "<last seq> <ms>,<seq>:<base>,...")  KEYS[5] reservation
-- ARGV[1] producer instance  ARGV[2] batch sequence number  ARGV[3] part: 'one' | 'first' | 'next' | 'last'
-- ARGV[4] retention.maxMessages (0 = none)  ARGV[5] producer id  ARGV[6..] encoded records
-- Returns {base offset, 1 if this batch was applied before (nothing written) else 0}.
-- Errors: NOTOPIC (partition absent), BUSY (another instance's multi-part append holds the partition),
-- SEQGAP (the previous part of this append was not applied), STALESEQ (an old batch, no longer remembered).
local e = redis.call('GET', KEYS[2])
if not e then return redis.error_reply('NOTOPIC partition does not exist') end
local pkey, seq, part = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local state = redis.call('HGET', KEYS[4], pkey)
local last = 0
if state then
  last = tonumber(string.match(state, '^(%d+)'))
  if seq <= last then
    local b = string.match(state, ',' .. ARGV[2] .. ':(%d+)')
    if b then return {tonumber(b), 1} end
    return redis.error_reply('STALESEQ batch ' .. ARGV[2] .. ' is older than the last applied one (' .. last .. ')')
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local resv = redis.call('GET', KEYS[5])
if resv then
  local owner, deadline = string.match(resv, '^(%S+) (%d+)$')
  if owner ~= pkey then
    if tonumber(deadline) > now then return redis.error_reply('BUSY partition is held by a multi-part append') end
    redis.call('DEL', KEYS[5]) -- its writer is gone: the parts it wrote stay, offsets stay dense
    resv = nil
  end
end
if (part == 'next' or part == 'last') and (not resv or seq ~= last + 1) then
  return redis.error_reply('SEQGAP the previous part of this append was not applied')
end

local base = tonumber(e)
local n = #ARGV - 5
local call, key, pid = redis.call, KEYS[1], ARGV[5]
for i = 1, n do
  call('XADD', key, string.format('%d-1', base + i - 1), 'r', ARGV[5 + i], 'p', pid)
end
local newEnd = base + n
redis.call('SET', KEYS[2], string.format('%d', newEnd))
if part == 'first' or part == 'next' then
  redis.call('SET', KEYS[5], pkey .. ' ' .. string.format('%d', now + 10000))
elseif resv then
  redis.call('DEL', KEYS[5])
end

-- Remember this batch (the last 32 per producer instance) so a re-sent copy is recognised.
local parts = { string.format('%d %d', seq, now) }
if state then
  local list = {}
  for sb in string.gmatch(state, ",(%d+:%d+)") do list[#list + 1] = sb end
  for i = math.max(1, #list - 30), #list do parts[#parts + 1] = list[i] end
end
parts[#parts + 1] = string.format('%d:%d', seq, base)
redis.call('HSET', KEYS[4], pkey, table.concat(parts, ','))
-- Forget producer instances idle for an hour (checked now and then, when there are many).
if seq % 64 == 0 and redis.call('HLEN', KEYS[4]) > 256 then
  local all = redis.call('HGETALL', KEYS[4])
  for i = 1, #all, 2 do
    local ms = tonumber(string.match(all[i + 1], '^%d+ (%d+)') or '0')
    if ms < now - 3600000 then redis.call('HDEL', KEYS[4], all[i]) end
  end
end

local max = tonumber(ARGV[4])
if max > 0 then
  local s = tonumber(redis.call('GET', KEYS[3]) or '0')
  if newEnd - s > max then
    local cut = newEnd - max
    redis.call('XTRIM', key, 'MINID', string.format('%d-1', cut))
    redis.call('SET', KEYS[3], string.format('%d', cut))
  end
end
return {base, 0}
