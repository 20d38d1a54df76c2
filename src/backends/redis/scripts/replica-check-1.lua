-- Before a WAIT for replicas (replicaAcks): does this node hold the producer's batch? If it does,
-- write a mark, so the WAIT that follows on the same connection counts everything the node holds
-- now, the batch included (WAIT counts the connection's own last write, and the batch may have
-- reached this node through another connection: replicated to it before it was promoted).
-- KEYS[1] producers (hash)
-- ARGV[1] the batch's field `<instance>:<seq % 32>`  ARGV[2] its value `<seq>:<base offset>`  ARGV[3] now (ms)
-- Returns 1 when the batch is held (the mark written), 0 when it is not.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], '~w', ARGV[3])
return 1
