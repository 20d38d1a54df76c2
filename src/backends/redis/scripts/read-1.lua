-- Read entries of a partition from an offset, packed into one reply (one bulk string instead of
-- five RESP elements per entry).
-- KEYS[1] partition stream
-- ARGV[1] first offset  ARGV[2] most entries  ARGV[3] '1' = an offset before every entry
-- Returns '' when there is nothing, else `<count> <first id> <last id> <producer id changes> `, then
-- each change as `<entry index>:<length>:<producer id>`, then the entries: the records back to back
-- (self-delimiting: each starts with its u32 length), each preceded by `<offset>:` when ARGV[3] is '1'.
-- Offsets are dense, so without ARGV[3] the reader checks last - first + 1 = count.
-- #include entry.lua
local res = redis.call('XRANGE', KEYS[1], ARGV[1] .. '-1', '+', 'COUNT', ARGV[2])
if #res == 0 then return '' end
-- An entry without a record (only a foreign writer makes one) cannot be read.
return pack_entries(res, ARGV[3] == '1') or error('ERR an entry of ' .. KEYS[1] .. ' has no record (not written by twainmq)')
