-- Append records of which some carry an idempotency id (appendIdempotent): a record whose id this
-- partition stored within the last ARGV[8] ms (the server's clock) is not written again and gets the
-- offset of the record stored with it; the others are written as append-5.lua writes them (entry ID
-- `<offset>-1`, fields r and p, dense offsets), and their ids remembered.
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start  KEYS[4] producers  KEYS[5] reservation: as append-5.lua
-- KEYS[6] ids, the current generation (hash: id -> "<offset> <ms stored>"; the field '' holds
--         "<ms the generation began> <longest window asked for>")
-- KEYS[7] ids, the previous generation (hash, same fields; its '' field is kept)
-- Ids are kept in two generations, not with an expiry each: a generation older than the longest
-- window asked for, or holding ARGV[9] ids, becomes the previous one and the previous one is dropped
-- whole (UNLINK: freed off the main thread). An id is so remembered at least for the longest window
-- and at least until ARGV[9] newer ids came (at most twice each); a lookup judges it by the checking
-- call's window against its own storage time. Per id that is one hash field set and two looked up,
-- in one command each per call (a sorted set of expiries cost the server more than the
-- record's own XADD).
-- Like the other keys, the two id keys exist from the topic's creation and are never emptied (their
-- placeholder fields stay): a script naming an absent key gets TRYAGAIN for the whole migration of its
-- Cluster slot, so sends with ids would stall there while plain sends go on. A partition created
-- before id appends existed gets them from its first id append.
-- ARGV[1] producer instance  ARGV[2] batch sequence number  ARGV[3] part: always 'one' (a larger
-- call is several calls, each atomic)  ARGV[4] retention.maxMessages (0 = none)  ARGV[5] producer id
-- ARGV[6] now (ms, the client's clock)  ARGV[7] the encoded records, as append-5.lua takes them
-- ARGV[8] the window (ms)  ARGV[9] ids a generation holds (so at least that many are remembered)
-- ARGV[10] of each record with an id, packed: its index among ARGV[7]'s records (from 1, u32 LE), the
--          id's length (u16 LE), the id (one argument, not two per record: ioredis writes each argument
--          on its own, which cost the client more than the records)
-- Returns {base offset, 1 if this batch was applied before (nothing written) else 0, then of each
-- duplicate: its index, the offset its id was stored at}: the records not listed are at base, base + 1, ...
-- A batch re-sent after a dropped connection is recognised by its sequence number as in append-5.lua
-- (the ids alone would not keep records without one from being written twice) and answered as it
-- was the first time: its own stored entries are found again at base, base + 1, ...
-- Errors: NOTOPIC, BUSY, STALESEQ as append-5.lua.
local kstream, kend, kstart, kprod, kresv, kids, kold = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local now
do
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- #include append-seq.lua
local ids = {}
do
  local packed, q = ARGV[10], 1
  while q <= #packed do
    local idx, len = struct.unpack('<I4I2', packed, q)
    ids[idx] = string.sub(packed, q + 6, q + 5 + len)
    q = q + 6 + len
  end
end
local key, pid, sub, u32, fmt, match = kstream, ARGV[5], string.sub, struct.unpack, string.format, string.match
-- #include append-max.lua
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
        local off = tonumber(match(call('HGET', kids, id) or call('HGET', kold, id) or '', '^(%d+) '))
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
if call('EXISTS', kids, kold) < 2 then
  call('HSETNX', kids, '', '0 0')
  call('HSETNX', kold, '', '-')
end
local base = tonumber(v[1])
-- #include append-inc.lua
local window = tonumber(ARGV[8])
local stamp = fmt('%d', now)
local out = {base, 0}
-- A new generation when the current one is older than the longest window or half full.
do
  local began, stored = match(call('HGET', kids, '') or '', '^(%d+) (%d+)$')
  began, stored = tonumber(began) or 0, tonumber(stored) or 0
  local keep = math.max(stored, window)
  if now - began > keep or call('HLEN', kids) > tonumber(ARGV[9]) then
    call('UNLINK', kold)
    call('RENAME', kids, kold)
    call('HSET', kids, '', stamp .. ' ' .. fmt('%d', keep))
  elseif keep > stored then
    call('HSET', kids, '', fmt('%d', began) .. ' ' .. fmt('%d', keep))
  end
end
-- Every id of the call looked up at once in both generations; the new ones written at once after
-- the records (one command each, not one per record).
local names = {}
for _, id in pairs(ids) do names[#names + 1] = id end
local found = {}
if #names > 0 then
  local cur, prev = call('HMGET', kids, unpack(names)), call('HMGET', kold, unpack(names))
  for q = 1, #names do
    local e = cur[q] or prev[q]
    if e then
      local off, ms = match(e, '^(%d+) (%d+)$')
      if off and now - tonumber(ms) <= window then found[names[q]] = tonumber(off) end
    end
  end
end
local fields = {}
local pos, i, n = 1, 0, 0
while pos <= size do
  i = i + 1
  local len = u32('<I4', blob, pos)
  local id = ids[i]
  local dup = id and found[id]
  if dup then
    out[#out + 1] = i
    out[#out + 1] = dup
  else
    local o = fmt('%d', base + n)
    add_record(o .. '-1', blob, pos, len)
    if id then
      found[id] = base + n -- a repeat later in this call is a duplicate of this one
      fields[#fields + 1] = id
      fields[#fields + 1] = o .. ' ' .. stamp
    end
    n = n + 1
  end
  pos = pos + 4 + len
end
if #fields > 0 then call('HSET', kids, unpack(fields)) end
local newEnd = base + n
-- #include append-done.lua

return out
