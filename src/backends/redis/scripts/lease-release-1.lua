-- Release a member's lease on a partition (the epoch and committed offset stay).
-- KEYS[1] the group's state of the partition (hash)
-- ARGV[1] member id
-- Returns 1 when the member held it, else 0.
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'owner', 'expires')
return 1
