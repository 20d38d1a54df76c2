-- Join or refresh a group member, dropping members whose session expired.
-- KEYS[1] group members (hash: id -> spec JSON)  KEYS[2] group sessions (zset: id -> expiry ms)
-- KEYS[3] group topics (set)
-- ARGV[1] member id  ARGV[2] member spec (JSON)  ARGV[3] now (ms)  ARGV[4] session expiry (ms)  ARGV[5..] topics
-- Returns {changed (0/1), id, spec, id, spec, ...} of the live members.
local changed = 0
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
for _, id in ipairs(dead) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  changed = 1
end
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  changed = 1
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
for i = 5, #ARGV do
  if redis.call('SADD', KEYS[3], ARGV[i]) == 1 then changed = 1 end
end
local all = redis.call('HGETALL', KEYS[1])
table.insert(all, 1, changed)
return all
