-- Append a processor's outputs (appendSourced) exactly once: source-table.ts's rule in Lua. Per source
-- (a group's input partition) the partition keeps the highest lease epoch stored and the input offset
-- below which outputs are forgotten (the floor: the input's committed offset as the last writer knew
-- it), and the offset of every output of an input at or past the floor, by (input offset, output
-- sequence number). A writer whose epoch is below the stored one, or whose lease deadline has passed
-- (the server's clock), is fenced: nothing is written. An output whose position is stored is not
-- written again; it gets the stored offset. The others are written as append-5.lua writes them.
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start  KEYS[4] producers  KEYS[5] reservation: as append-5.lua
-- KEYS[6] sources (hash: source -> "<epoch> <floor>")
-- KEYS[7] the source's outputs (sorted set: member "<seq>:<offset>", score the input offset)
-- ARGV[1] producer instance  ARGV[2] batch sequence number  ARGV[3] part: always 'one'
-- ARGV[4] retention.maxMessages (0 = none)  ARGV[5] producer id  ARGV[6] now (ms, the client's clock)
-- ARGV[7] the encoded records, as append-5.lua takes them  ARGV[8] the source ("<group> <topic> <partition>")
-- ARGV[9] the writer's lease epoch  ARGV[10] its committed input offset  ARGV[11] its lease deadline
-- (ms; '' = none)  ARGV[12] each record's position: its input offset and sequence number, two
-- little-endian doubles
-- Returns {base offset, 1 if this batch was applied before (nothing written) else 0, then of each
-- duplicate: its index (from 1), its stored offset}: the records not listed are at base, base + 1, ...
-- A batch re-sent after a dropped connection is answered from the stored positions.
-- Errors: FENCED (nothing written), NOTOPIC, BUSY, STALESEQ as append-5.lua.
local kstream, kend, kstart, kprod, kresv, ksrc, kout = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local now
do
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- #include append-seq.lua
local fmt, bin = string.format, struct.unpack
-- Each record's position, in two flat lists: its input offset and its sequence number.
local po, pq = {}, {}
-- Whether the positions rise strictly (one input's outputs in order, then the next input's): no
-- position of the call repeats an earlier one of it.
local rising, lo, hi = true, nil, nil
do
  local s, at, k = ARGV[12], 1, 0
  local size, last, lastq = #s, -1, -1
  while at < size do
    local o, q
    o, q, at = bin('<dd', s, at)
    k = k + 1
    po[k], pq[k] = o, q
    if o < last or (o == last and q <= lastq) then rising = false end
    last, lastq = o, q
    if not lo or o < lo then lo = o end
    if not hi or o > hi then hi = o end
  end
end
-- The stored outputs of the call's inputs: "<offset>.<seq>" -> stored offset.
local function storedOf()
  local found = {}
  if lo then
    local got = call('ZRANGEBYSCORE', kout, lo, hi, 'WITHSCORES')
    for i = 1, #got, 2 do
      local q, off = string.match(got[i], '^(%d+):(%d+)$')
      found[fmt('%d.', tonumber(got[i + 1])) .. q] = tonumber(off)
    end
  end
  return found
end

if applied then
  -- Applied before: every record is stored, by this batch (at or past its base) or before it.
  local found = storedOf()
  local out = {applied, 1}
  for i = 1, #po do
    local off = found[fmt('%d.%d', po[i], pq[i])]
    if not off then return redis.error_reply('STALESEQ batch ' .. ARGV[2] .. ': its outputs are no longer remembered') end
    if off < applied then
      out[#out + 1] = i
      out[#out + 1] = off
    end
  end
  return out
end

-- #include append-resv.lua
local epoch, committed = tonumber(ARGV[9]), tonumber(ARGV[10])
if ARGV[11] ~= '' and now > tonumber(ARGV[11]) then
  return redis.error_reply('FENCED its lease lapsed (session timeout) before the write')
end
local state = call('HGET', ksrc, ARGV[8])
local floor = committed
if state then
  local e, f = string.match(state, '^(%d+) (%d+)$')
  e, f = tonumber(e), tonumber(f)
  if epoch < e then return redis.error_reply('FENCED a writer with a later lease epoch stored outputs there') end
  if epoch == e and f > floor then floor = f end
  if floor ~= f or epoch ~= e then call('HSET', ksrc, ARGV[8], fmt('%d %d', epoch, floor)) end
  if floor > f then call('ZREMRANGEBYSCORE', kout, '-inf', '(' .. fmt('%d', floor)) end
else
  call('HSET', ksrc, ARGV[8], fmt('%d %d', epoch, floor))
end
local found = storedOf()
local base = tonumber(v[1])
-- #include append-inc.lua
local key, pid = kstream, ARGV[5]
-- #include append-max.lua
local blob = ARGV[7]
local size = #blob
local out = {base, 0}
local members, m = {}, 0
local at, i, n = 1, 0, 0
-- Nothing of the call's inputs stored, no position repeated: every record is new (the usual call).
local fresh = rising and next(found) == nil
while at <= size do
  i = i + 1
  local len = bin('<I4', blob, at)
  local o, q = po[i], pq[i]
  local id = not fresh and fmt('%d.%d', o, q)
  local dup = id and found[id]
  if dup then
    out[#out + 1] = i
    out[#out + 1] = dup
  else
    add_record(fmt('%d-1', base + n), blob, at, len)
    if id then found[id] = base + n end -- a repeat later in this call is a duplicate of this one
    if o >= floor then
      members[m + 1], members[m + 2] = o, fmt('%d:%d', q, base + n)
      m = m + 2
    end
    n = n + 1
  end
  at = at + 4 + len
end
if m > 0 then call('ZADD', kout, unpack(members)) end
local newEnd = base + n
-- #include append-done.lua

return out
