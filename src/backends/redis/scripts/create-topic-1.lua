-- Claim a topic name (state 'creating'); the creator then initialises the partitions and marks it 'ready'.
-- KEYS[1] topic meta hash
-- ARGV[1] creator token  ARGV[2] now (ms)  ARGV[3] ms after which a 'creating' claim counts as abandoned
-- ARGV[4..] field, value, ... of the topic's configuration
-- Returns 1 when claimed (or already claimed by this token), 0 when the topic exists.
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then return 1 end
  if state == 'ready' then return 0 end
  local created = tonumber(redis.call('HGET', KEYS[1], 'createdAt') or '0')
  if tonumber(ARGV[2]) - created < tonumber(ARGV[3]) then return 0 end
  redis.call('DEL', KEYS[1]) -- its creator died half-way: take over
end
redis.call('HSET', KEYS[1], 'state', 'creating', 'token', ARGV[1], unpack(ARGV, 4))
return 1
