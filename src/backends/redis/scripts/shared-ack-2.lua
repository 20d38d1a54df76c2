-- Acknowledge entries of a shared group (one batch) and record the group's committed offset of the
-- partition, so describeGroup and `retention: { consumed: true }` see it like a partitioned commit:
-- the offset of the oldest pending entry, else the one after the last delivered entry.
-- KEYS[1] partition stream  KEYS[2] the group's state of the partition (hash)
-- ARGV[1] group  ARGV[2..] entry IDs
-- Returns {entries acknowledged, committed offset ('' when the group is gone)}.
local n = redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 2))
local c
local s = redis.call('XPENDING', KEYS[1], ARGV[1])
if tonumber(s[1]) > 0 then
  c = string.match(s[2], '^(%d+)')
else
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    local name, last
    for i = 1, #g, 2 do
      if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
    end
    if name == ARGV[1] then
      if last == '0-0' then c = '0' else c = string.format('%d', tonumber(string.match(last, '^(%d+)')) + 1) end
    end
  end
end
if not c then return {n, ''} end
redis.call('HSET', KEYS[2], 'committed', c)
return {n, c}
