-- The first offset whose record timestamp is >= a time (binary search over the retained offsets;
-- timestamps are assumed to grow with offsets, as one clock stamps them at send time).
-- KEYS[1] partition stream  KEYS[2] end  KEYS[3] start
-- ARGV[1] time (ms since epoch)
-- Returns the offset (the end offset when every record is older).
local lo = tonumber(redis.call('GET', KEYS[3]) or '0')
local hi = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  local r = redis.call('XRANGE', KEYS[1], string.format('%d-1', mid), '+', 'COUNT', 1)
  if #r == 0 or struct.unpack('<d', r[1][2][2], 5) >= t then hi = mid else lo = mid + 1 end
end
return lo
