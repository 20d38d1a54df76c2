-- Stop holding entries: they become claimable at once (their idle time is set to the claim time).
-- For entries never handed to the application the delivery is not counted (the count goes back by one).
-- KEYS[1] partition stream
-- ARGV[1] group  ARGV[2] member  ARGV[3] idle time to set (ms)  ARGV[4] '1' = uncount the last delivery
-- ARGV[5..] entry IDs
-- Returns how many entries were released (those the member still owned).
local n = 0
for i = 5, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    local count = p[1][4]
    if ARGV[4] == '1' and count > 0 then count = count - 1 end
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'IDLE', ARGV[3], 'RETRYCOUNT', count, 'JUSTID')
    n = n + 1
  end
end
return n
