-- Read entries of a partition from an offset, packed into one reply (one bulk string instead of
-- five RESP elements per entry).
-- KEYS[1] partition stream
-- ARGV[1] first offset  ARGV[2] most entries  ARGV[3] '1' = an offset before every entry
-- Returns '' when there is nothing, else `<count> <first id> <last id> <producer id changes> `, then
-- each change as `<entry index>:<length>:<producer id>`, then the entries: the records back to back
-- (self-delimiting: each starts with its u32 length), each preceded by `<offset>:` when ARGV[3] is '1'.
-- Offsets are dense, so without ARGV[3] the reader checks last - first + 1 = count.
local res = redis.call('XRANGE', KEYS[1], ARGV[1] .. '-1', '+', 'COUNT', ARGV[2])
local n = #res
if n == 0 then return '' end
local out, pids, prev, ids, sub = {}, {}, nil, ARGV[3] == '1', string.sub
for i = 1, n do
  local f = res[i][2]
  local p = f[4]
  if p ~= prev then
    pids[#pids + 1] = (i - 1) .. ':' .. #p .. ':' .. p
    prev = p
  end
  if ids then out[i] = sub(res[i][1], 1, -3) .. ':' .. f[2] else out[i] = f[2] end
end
return n .. ' ' .. res[1][1] .. ' ' .. res[n][1] .. ' ' .. #pids .. ' ' .. table.concat(pids) .. table.concat(out)
