-- Mark a claimed topic ready (only by the creator that claimed it).
-- KEYS[1] topic meta hash
-- ARGV[1] creator token
-- Returns 1 when marked, 0 when the claim was lost.
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'ready')
return 1
