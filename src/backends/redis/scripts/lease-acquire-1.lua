-- Take or renew a member's lease on a partition; every new lease gets the next epoch (fencing token).
-- KEYS[1] the group's state of the partition (hash: owner, epoch, expires, committed)
-- ARGV[1] member id  ARGV[2] the owner the caller saw and found dead ('' = none)  ARGV[3] now (ms)
-- ARGV[4] lease expiry (ms)
-- Returns {epoch, committed offset or ''} when the member holds the lease, {} when another member does.
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[1] and owner ~= ARGV[2] then
  local exp = tonumber(redis.call('HGET', KEYS[1], 'expires') or '0')
  if exp >= tonumber(ARGV[3]) then return {} end
end
local epoch
if owner == ARGV[1] then
  epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch'))
else
  epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
  redis.call('HSET', KEYS[1], 'owner', ARGV[1])
end
redis.call('HSET', KEYS[1], 'expires', ARGV[4])
return {epoch, redis.call('HGET', KEYS[1], 'committed') or ''}
