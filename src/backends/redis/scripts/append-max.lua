-- Included by the append scripts (scripts.ts replaces `-- #include append-max.lua`) before their
-- writes, with `call` and kstream named: `add_record(id, blob, at, len)` adds the entry `id` of the
-- record at byte `at` of `blob` (`len` bytes after its u32 length).
-- Timestamps need not grow with offsets (`SendOptions.timestamp`). An entry whose timestamp is
-- below the largest of the entries before it gets that largest timestamp as field `m`, so the
-- running maximum (`m` where present, else the record's own timestamp) never decreases along the
-- stream, and offset-for-time-3.lua binary-searches it. Entries in order (sends without a
-- timestamp, one clock) get no field: per call one XREVRANGE, per record one number read.
local runmax = -math.huge
do
  local last = call('XREVRANGE', kstream, '+', '-', 'COUNT', 1)[1]
  if last then
    local f = last[2]
    for k = 1, #f, 2 do
      if f[k] == 'm' then
        runmax = tonumber(f[k + 1])
        break
      end
      if f[k] == 'r' and #f[k + 1] >= 12 then runmax = struct.unpack('<d', f[k + 1], 5) end
    end
  end
end
local function add_record(id, blob, at, len)
  local rec = string.sub(blob, at, at + 3 + len)
  local ts = len >= 8 and struct.unpack('<d', blob, at + 4) or runmax -- (shorter: not a record twainmq encoded)
  if ts >= runmax then
    runmax = ts
    return call('XADD', kstream, id, 'r', rec, 'p', ARGV[5])
  end
  return call('XADD', kstream, id, 'r', rec, 'p', ARGV[5], 'm', string.format('%.17g', runmax))
end
