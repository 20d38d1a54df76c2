-- Remove a partition's entries below an offset (clamped to [start, end]); exact.
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start
-- ARGV[1] offset
-- Returns how many offsets were removed. Error NOTOPIC when the partition does not exist.
local e = redis.call('GET', KEYS[2])
if not e then return redis.error_reply('NOTOPIC partition does not exist') end
local s = tonumber(redis.call('GET', KEYS[3]) or '0')
local target = math.min(math.max(tonumber(ARGV[1]), s), tonumber(e))
if target <= s then return 0 end
redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-1', target))
redis.call('SET', KEYS[3], string.format('%d', target))
return target - s
