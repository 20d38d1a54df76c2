-- Join or refresh a shared-group member, unless a live member of another consumer has its name.
-- (member-join plus the name check, in one step, so two processes joining under one name at once
-- cannot both get in, and a member whose session expired learns that its name was taken.)
-- KEYS[1] group members (hash: id -> spec JSON)  KEYS[2] group sessions (zset: id -> expiry ms)
-- KEYS[3] group topics (set)
-- ARGV[1] member name  ARGV[2] member spec (JSON, with its `token`)  ARGV[3] now (ms)
-- ARGV[4] session expiry (ms)  ARGV[5] the member's token
-- ARGV[6] a stored spec that may be replaced even if its session is live (its process is known dead; '' none)
-- ARGV[7..] topics
-- Returns {1} when joined or refreshed, {0, spec} when a live member of another token has the name.
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
for _, id in ipairs(dead) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and cur ~= ARGV[2] and cur ~= ARGV[6] then
  local ok, spec = pcall(cjson.decode, cur)
  local token = ok and type(spec) == 'table' and spec.token or nil
  if token ~= ARGV[5] then return {0, cur} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
for i = 7, #ARGV do redis.call('SADD', KEYS[3], ARGV[i]) end
return {1}
