-- Commit a partition's offset for a group, only by the lease holder with the lease's epoch (fencing).
-- KEYS[1] the group's state of the partition (hash)
-- ARGV[1] member id  ARGV[2] lease epoch  ARGV[3] offset
-- Returns 1 when written, 0 when fenced (another owner or epoch).
local s = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'committed', ARGV[3])
return 1
