-- Read entries of a partition from an offset, packed into one reply (one bulk string instead of
-- five RESP elements per entry).
-- KEYS[1] partition stream
-- ARGV[1] first offset  ARGV[2] most entries
-- Returns, per entry: `<offset>` then `:<producer id length>:<producer id>` (or `=` when it is the
-- previous entry's producer id), then the record (self-delimiting: it starts with its u32 length).
local res = redis.call('XRANGE', KEYS[1], ARGV[1] .. '-1', '+', 'COUNT', ARGV[2])
local out, prev = {}, nil
for i = 1, #res do
  local id, f = res[i][1], res[i][2]
  local off = string.sub(id, 1, string.find(id, '-', 1, true) - 1)
  local p = f[4]
  if p == prev then
    out[i] = off .. '=' .. f[2]
  else
    out[i] = off .. ':' .. #p .. ':' .. p .. f[2]
    prev = p
  end
end
return table.concat(out)
