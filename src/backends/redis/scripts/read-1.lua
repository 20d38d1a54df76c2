-- Read entries of a partition from an offset, packed into one reply (one bulk string instead of
-- five RESP elements per entry).
-- KEYS[1] partition stream
-- ARGV[1] first offset  ARGV[2] most entries  ARGV[3] '1' = an offset before every entry
-- ARGV[4] byte budget of the records ('' or absent = none): no entry is added once the records
--         taken reach it (decision 178). The stream is read in steps sized by the records seen so
--         far, so entries past the budget are not converted either; a page ends at most one step
--         past the budget, and has at least one entry.
-- Returns '' when there is nothing, else `<count> <first id> <last id> <producer id changes> `, then
-- each change as `<entry index>:<length>:<producer id>`, then the entries: the records back to back
-- (self-delimiting: each starts with its u32 length), each preceded by `<offset>:` when ARGV[3] is '1'.
-- Offsets are dense, so without ARGV[3] the reader checks last - first + 1 = count.
-- #include entry.lua
local want, budget = tonumber(ARGV[2]), tonumber(ARGV[4] or '')
local res
if not budget then
  res = redis.call('XRANGE', KEYS[1], ARGV[1] .. '-1', '+', 'COUNT', want)
else
  res = {}
  local from, bytes, step = ARGV[1] .. '-1', 0, math.min(want, 16)
  while true do
    local part = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', step)
    for i = 1, #part do
      local e = part[i]
      res[#res + 1] = e
      local f = e[2]
      if f and f[2] then bytes = bytes + #f[2] end -- the record, in twainmq's layout (r first)
    end
    if #part < step or #res >= want or bytes >= budget then break end
    from = '(' .. part[#part][1]
    step = math.min(want - #res, math.max(1, math.floor((budget - bytes) * #res / math.max(bytes, 1))))
  end
end
if #res == 0 then return '' end
-- An entry without a record (only a foreign writer makes one) cannot be read.
return pack_entries(res, ARGV[3] == '1') or error('ERR an entry of ' .. KEYS[1] .. ' has no record (not written by twainmq)')
