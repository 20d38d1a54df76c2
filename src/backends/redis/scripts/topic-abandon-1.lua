-- Give up a claim whose creation failed before the topic was ready, so a creation tried again does
-- not wait for it to count as abandoned (only the creator that claimed it; a ready topic stays).
-- KEYS[1] topic meta hash
-- ARGV[1] creator token
-- Returns 1 when the claim was removed, 0 when it is not this creator's or the topic is ready.
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'state') ~= 'creating' then return 0 end
redis.call('DEL', KEYS[1])
return 1
