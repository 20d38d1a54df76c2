-- Remove group members.
-- KEYS[1] group members (hash)  KEYS[2] group sessions (zset)
-- ARGV[1..] member ids
-- Returns how many were members.
local n = 0
for i = 1, #ARGV do
  n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return n
