-- Append records to a partition with dense offsets: entry ID `<offset>-1`, fields r (record), p (producer id),
-- and m (the running maximum timestamp) on a record older than one before it (append-max.lua).
-- KEYS[1] partition stream  KEYS[2] end (next offset)  KEYS[3] start (first retained offset)
-- KEYS[4] producers (hash: <instance> -> "<last seq> <ms>", <instance>:<seq % 32> -> "<seq>:<base offset>",
--         and ~inc -> the partition's incarnations "<server run id>:<first offset> ..." (decision 112))
-- KEYS[5] reservation ("<instance> <deadline ms>" while a multi-part append holds the partition, else "-")
-- The checks and the bookkeeping around the writes are in append-*.lua, shared with append-ids-7.lua.
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
local kstream, kend, kstart, kprod, kresv = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- #include append-seq.lua
if applied then return {applied, 1} end -- a batch applied before: its original offsets
local now
-- #include append-resv.lua

if ARGV[8] and ARGV[8] ~= '' and ARGV[8] ~= v[1] then return redis.error_reply('CONFLICT ' .. v[1]) end
local base = tonumber(v[1])
-- #include append-inc.lua
local pid, sub, unpack, fmt = ARGV[5], string.sub, struct.unpack, string.format
-- #include append-max.lua
local blob = ARGV[7]
local pos, size, n = 1, #blob, 0
while pos <= size do
  local len = unpack('<I4', blob, pos)
  -- add_record (append-max.lua), inline on this path
  local rec, ts = sub(blob, pos, pos + 3 + len), len >= 8 and unpack('<d', blob, pos + 4) or runmax
  if ts >= runmax then
    runmax = ts
    call('XADD', kstream, fmt('%d-1', base + n), 'r', rec, 'p', pid)
  else
    call('XADD', kstream, fmt('%d-1', base + n), 'r', rec, 'p', pid, 'm', fmt('%.17g', runmax))
  end
  pos = pos + 4 + len
  n = n + 1
end
local newEnd = base + n
-- #include append-done.lua
return {base, 0}
