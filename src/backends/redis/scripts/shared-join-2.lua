-- Join a shared group on a partition: create the stream's consumer group if it does not exist,
-- record the group's committed offset, and delete members long idle that hold nothing.
-- KEYS[1] partition stream  KEYS[2] the group's state of the partition (hash; `committed` is written)
-- ARGV[1] group  ARGV[2] where a new group starts: '0' (every retained entry), '$' (new entries only), or
--   '<offset>-1' (the entries after that one: the end when the consumer was created, from: 'end')
-- ARGV[3] members idle longer than this (ms) with no pending entries are deleted
-- Returns 1 when the group was created, 0 when it existed.
-- `committed` = the offset of the oldest pending entry, else the one after the last delivered entry.
local created = 1
local r = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], ARGV[2], 'MKSTREAM')
if type(r) == 'table' and r.err then
  if not string.find(r.err, 'BUSYGROUP', 1, true) then return redis.error_reply(r.err) end
  created = 0
end

local function field(list, name)
  for i = 1, #list, 2 do
    if list[i] == name then return list[i + 1] end
  end
  return nil
end

local function committed()
  local s = redis.call('XPENDING', KEYS[1], ARGV[1])
  if tonumber(s[1]) > 0 then return string.match(s[2], '^(%d+)') end
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    if field(g, 'name') == ARGV[1] then
      local last = field(g, 'last-delivered-id')
      if last == '0-0' then return '0' end
      return string.format('%d', tonumber(string.match(last, '^(%d+)')) + 1)
    end
  end
  return nil
end

local c = committed()
if c then redis.call('HSET', KEYS[2], 'committed', c) end

local idle = tonumber(ARGV[3])
for _, m in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  if field(m, 'pending') == 0 and field(m, 'idle') > idle then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], field(m, 'name'))
  end
end
return created
