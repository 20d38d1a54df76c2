-- Included by the scripts that return stream entries: scripts.ts replaces a line
-- `-- #include entry.lua` with this file when it loads them, so every script reads an entry's
-- fields one way and returns entries in one of two shapes. An entry twainmq wrote has the fields
-- r (record) and p (producer id), in that order (append-5.lua).

-- The record and producer id of an entry's fields (nil when it has none: not twainmq's).
local function entry_fields(f)
  if f[1] == 'r' and f[3] == 'p' then return f[2], f[4] end
  local rec, pid
  for k = 1, #f, 2 do
    if f[k] == 'r' then rec = f[k + 1] elseif f[k] == 'p' then pid = f[k + 1] end
  end
  return rec, pid
end

-- Add an entry to a `{id, delivery count, record ('' = none), producer id, ...}` reply.
local function push_entry(out, id, count, f)
  local rec, pid = entry_fields(f)
  out[#out + 1] = id
  out[#out + 1] = count
  out[#out + 1] = rec or ''
  out[#out + 1] = pid or ''
end

-- Entries ({id, fields}, each with a record) packed into one bulk string: `<count> <first id>
-- <last id> <producer id changes> `, then each change as `<entry index>:<length>:<producer id>`,
-- then the records back to back (self-delimiting: each starts with its u32 length), each preceded
-- by `<offset>:` when `ids` is true. Nil when an entry has no record (one twainmq did not write, or
-- a pending entry whose fields were trimmed).
local function pack_entries(items, ids)
  local n = #items
  local out, pids, prev, sub = {}, {}, nil, string.sub
  for i = 1, n do
    local f = items[i][2]
    local r, p
    if f and f[1] == 'r' and f[3] == 'p' then r, p = f[2], f[4] elseif f then r, p = entry_fields(f) end -- the hot path inline
    if not r then return nil end
    p = p or ''
    if p ~= prev then
      pids[#pids + 1] = (i - 1) .. ':' .. #p .. ':' .. p
      prev = p
    end
    if ids then out[i] = sub(items[i][1], 1, -3) .. ':' .. r else out[i] = r end
  end
  return n .. ' ' .. items[1][1] .. ' ' .. items[n][1] .. ' ' .. #pids .. ' ' .. table.concat(pids) .. table.concat(out)
end
