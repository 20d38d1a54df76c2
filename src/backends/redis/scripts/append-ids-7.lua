-- Append records of which some carry an idempotency id (appendIdempotent): a record whose id this
-- partition stored within the last ARGV[8] ms (the server's clock) is not written again and gets the
-- offset of the record stored with it; the others are written as append-5.lua writes them (entry ID
-- `<offset>-1`, fields r and p, dense offsets), and their ids remembered.
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start  KEYS[4] producers  KEYS[5] reservation: as append-5.lua
-- KEYS[6] ids (hash: id -> "<offset> <ms stored>"; a placeholder field '' -> '-' keeps it existing)
-- KEYS[7] id expiries (sorted set: id scored by ms stored + the storing call's window; the placeholder
--         member '' scored +inf keeps it existing)
-- Like the other keys, the two id keys exist from the topic's creation and are never emptied (their
-- placeholders stay): a script naming an absent key gets TRYAGAIN for the whole migration of its
-- Cluster slot, so sends with ids would stall there while plain sends go on. A partition created
-- before id appends existed gets them from its first id append.
-- ARGV[1] producer instance  ARGV[2] batch sequence number  ARGV[3] part: always 'one' (a larger
-- call is several calls, each atomic)  ARGV[4] retention.maxMessages (0 = none)  ARGV[5] producer id
-- ARGV[6] now (ms, the client's clock)  ARGV[7] the encoded records, as append-5.lua takes them
-- ARGV[8] the window (ms)  ARGV[9] most ids remembered (the oldest expiries forgotten first)
-- ARGV[10..] of each record with an id: its index among ARGV[7]'s records (from 1), its id
-- Returns {base offset, 1 if this batch was applied before (nothing written) else 0, then of each
-- duplicate: its index, the offset its id was stored at}: the records not listed are at base, base + 1, ...
-- A batch re-sent after a dropped connection is recognised by its sequence number as in append-5.lua
-- (the ids alone would not keep records without one from being written twice) and answered as it
-- was the first time: its own stored entries are found again at base, base + 1, ...
-- Errors: NOTOPIC, BUSY, STALESEQ as append-5.lua.
local kstream, kend, kstart, kprod, kresv, kids, kexp = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local now
do
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- #include append-seq.lua
local ids = {}
for i = 10, #ARGV, 2 do ids[tonumber(ARGV[i])] = ARGV[i + 1] end
local key, pid, sub, u32, fmt, match = kstream, ARGV[5], string.sub, struct.unpack, string.format, string.match
local blob = ARGV[7]
local size = #blob

if applied then
  -- Applied before: walk the records again. One with an id was written by that batch when the next
  -- of its entries holds the same record; else it was a duplicate, of the offset its id still names.
  local out = {applied, 1}
  local pos, i, k = 1, 0, 0
  while pos <= size do
    i = i + 1
    local len = u32('<I4', blob, pos)
    local id = ids[i]
    if id then
      local at = fmt('%d-1', applied + k)
      local e = call('XRANGE', key, at, at)[1]
      if e and e[2][2] == sub(blob, pos, pos + 3 + len) then
        k = k + 1
      else
        local off = tonumber(match(call('HGET', kids, id) or '', '^(%d+) '))
        if off and off < applied + k then
          out[#out + 1] = i
          out[#out + 1] = off
        elseif off == applied + k then
          k = k + 1 -- its entry was trimmed since
        else
          return redis.error_reply('STALESEQ batch ' .. ARGV[2] .. ': its ids are no longer remembered')
        end
      end
    else
      k = k + 1
    end
    pos = pos + 4 + len
  end
  return out
end

-- #include append-resv.lua
if call('EXISTS', kids, kexp) < 2 then
  call('HSETNX', kids, '', '-')
  call('ZADD', kexp, 'NX', '+inf', '')
end
local base = tonumber(v[1])
-- #include append-inc.lua
local window = tonumber(ARGV[8])
local stamp = fmt('%d', now)
local expiry = fmt('%d', now + window)
local out = {base, 0}
local pos, i, n = 1, 0, 0
while pos <= size do
  i = i + 1
  local len = u32('<I4', blob, pos)
  local id = ids[i]
  local dup
  if id then
    local e = call('HGET', kids, id)
    if e then
      local off, ms = match(e, '^(%d+) (%d+)$')
      if off and now - tonumber(ms) <= window then dup = tonumber(off) end
    end
  end
  if dup then
    out[#out + 1] = i
    out[#out + 1] = dup
  else
    local o = fmt('%d', base + n)
    call('XADD', key, o .. '-1', 'r', sub(blob, pos, pos + 3 + len), 'p', pid)
    if id then
      call('HSET', kids, id, o .. ' ' .. stamp)
      call('ZADD', kexp, expiry, id)
    end
    n = n + 1
  end
  pos = pos + 4 + len
end
local newEnd = base + n
-- #include append-done.lua

-- Forget ids past the window they were stored with (a bounded number per call: a few more than a
-- call can add), then the earliest to expire beyond ARGV[9].
local old = call('ZRANGEBYSCORE', kexp, '-inf', '(' .. stamp, 'LIMIT', 0, i + 64)
if #old > 0 then
  call('HDEL', kids, unpack(old))
  call('ZREM', kexp, unpack(old))
end
local over = call('ZCARD', kexp) - 1 - tonumber(ARGV[9])
while over > 0 do
  local c = math.min(over, 1000)
  local popped = call('ZPOPMIN', kexp, c)
  local gone = {}
  for j = 1, #popped, 2 do gone[#gone + 1] = popped[j] end
  call('HDEL', kids, unpack(gone))
  over = over - c
end
return out
