// Preloaded into the gateway bench's server children (with --expose-gc): SIGUSR2 runs a full
// garbage collection, so RSS is read with what is live, not what the last phase left to collect.
process.on('SIGUSR2', () => globalThis.gc?.())
