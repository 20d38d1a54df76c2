/**
 * What each Lua script of `./scripts/` takes and returns, checked against the files: its KEYS count
 * is the file name's `-<n>` suffix and the highest `KEYS[n]` it uses (test/unit/redis-scripts.test.ts),
 * its ARGV and reply are the script's opening comment written as types. Scripts marked in
 * {@link BUFFER_REPLY} reply with Buffers for bulk strings (records, packed replies); the others with
 * strings.
 */
export const SCRIPT_KEYS = {
  append: 5,
  'append-ids': 7,
  'append-src': 7,
  read: 1,
  'offset-for-time': 3,
  trim: 3,
  compact: 6,
  'create-topic': 1,
  'topic-ready': 1,
  'topic-abandon': 1,
  'member-join': 3,
  'member-leave': 2,
  'lease-acquire': 1,
  'lease-release': 1,
  commit: 1,
  'shared-join': 2,
  'shared-member-join': 3,
  'shared-recover': 1,
  'shared-adopt': 1,
  'shared-confirm': 1,
  'shared-claim': 1,
  'shared-read': 1,
  'shared-touch': 1,
  'shared-redeliver': 1,
  'shared-release': 1,
  'shared-ack': 2,
  'shared-leave': 1,
  'replica-check': 1,
} as const

export type ScriptName = keyof typeof SCRIPT_KEYS

/** The scripts whose replies carry records: called with ioredis's `…Buffer` variant. */
export const BUFFER_REPLY: ReadonlySet<ScriptName> = new Set<ScriptName>([
  'read',
  'shared-recover',
  'shared-adopt',
  'shared-claim',
  'shared-read',
  'shared-touch',
  'shared-redeliver',
])

/** A number or its decimal text (Redis takes both). */
type Num = number | string
/** An entry ID `<offset>-<seq>` or an offset's `<offset>-1`. */
type Id = string
/** `{id, delivery count, record ('' = none), producer id, ...}` (see scripts/entry.lua). */
type Entries = unknown[]

/** Per script: ARGV (as a tuple) and the reply. */
export interface ScriptSpecs {
  append: {
    args: [
      instance: string,
      sequence: number,
      part: 'one' | 'first' | 'next' | 'last',
      maxMessages: number,
      producerId: string,
      now: number,
      records: Buffer,
      expectedEnd: string,
    ]
    reply: [base: number, duplicate: number]
  }
  'append-ids': {
    args: [
      instance: string,
      sequence: number,
      part: 'one',
      maxMessages: number,
      producerId: string,
      now: number,
      records: Buffer,
      windowMs: number,
      maxIds: number,
      /** Of each record with an id: its index (from 1) as u32 LE, the id's UTF-8 length as u16 LE, the id (`packIds`, append-parts.ts). */
      ids: Buffer,
    ]
    /** Then of each duplicate record: its index in the call (from 1), the offset its id was stored at. */
    reply: [base: number, applied: number, ...indexAndOffset: number[]]
  }
  'append-src': {
    args: [
      instance: string,
      sequence: number,
      part: 'one',
      maxMessages: number,
      producerId: string,
      now: number,
      records: Buffer,
      source: string,
      epoch: number,
      committed: number,
      deadline: number | '',
      /** Each record's input offset and sequence number, two doubles LE (`packPositions`, append-parts.ts). */
      positions: Buffer,
    ]
    /** Then of each duplicate record: its index in the call (from 1), its stored offset. */
    reply: [base: number, applied: number, ...indexAndOffset: number[]]
  }
  read: { args: [from: number, count: number, ids: '0' | '1', maxBytes: number | '']; reply: Buffer }
  'offset-for-time': { args: [time: number, scanFrom: number | '']; reply: [offset: number, done: number] }
  trim: { args: [before: number]; reply: number }
  compact: {
    args: [most: number, tombstoneRetentionMs: number]
    /** `[0, records, bytes]` while the pass goes on; at its end `[1, records, bytes, at, records before, bytes before]`. */
    reply: [done: number, records: number, bytes: number, at?: number, recordsBefore?: number, bytesBefore?: number]
  }
  'create-topic': { args: [token: string, now: number, abandonedMs: number, ...fields: string[]]; reply: number }
  'topic-ready': { args: [token: string]; reply: number }
  'topic-abandon': { args: [token: string]; reply: number }
  'member-join': {
    args: [id: string, spec: string, now: number, expiry: number, ...topics: string[]]
    reply: [changed: number, ...idsAndSpecs: string[]]
  }
  'member-leave': { args: string[]; reply: number }
  'lease-acquire': {
    args: [id: string, seen: string, now: number, expiry: number]
    reply: [epoch: number, committed: string] | []
  }
  'lease-release': { args: [id: string]; reply: number }
  commit: { args: [id: string, epoch: Num, offset: Num]; reply: number }
  'shared-join': { args: [group: string, from: string, forgetIdleMs: number]; reply: number }
  'shared-member-join': {
    args: [name: string, spec: string, now: number, expiry: number, token: string, replace: string, ...topics: string[]]
    reply: [ok: number, other?: string]
  }
  'shared-recover': {
    args: [group: string, member: string, cursor: string, count: number]
    reply: [last: Buffer, entries: Entries, trimmed: Buffer[]]
  }
  'shared-adopt': {
    args: [
      group: string,
      member: string,
      cursor: string,
      count: number,
      minIdleMs: number,
      maxIdleMs: number,
      known: number,
    ]
    reply: [last: Buffer, entries: Entries, trimmed: Buffer[]]
  }
  'shared-confirm': { args: [group: string, member: string, ...ids: Id[]]; reply: string[] }
  'shared-claim': {
    args: [
      group: string,
      member: string,
      minIdleMs: number,
      cursor: string,
      count: number,
      mode: 'autoclaim' | 'readgroup',
    ]
    reply: [cursor: Buffer, entries: Entries, trimmed: Buffer[]]
  }
  'shared-read': { args: [group: string, member: string, count: number]; reply: Buffer }
  'shared-touch': { args: [group: string, member: string, ...ids: Id[]]; reply: [gone: Buffer[], trimmed: Buffer[]] }
  'shared-redeliver': {
    args: [group: string, member: string, ...ids: Id[]]
    reply: [entries: Entries, gone: Buffer[], trimmed: Buffer[]]
  }
  'shared-release': {
    args: [group: string, member: string, idleMs: number, uncount: '0' | '1', ...ids: Id[]]
    reply: number
  }
  'shared-ack': { args: [group: string, ...ids: Id[]]; reply: [acked: number, committed: string] }
  'shared-leave': { args: [group: string, member: string, idleMs: number]; reply: number }
  'replica-check': { args: [field: string, value: string, now: number]; reply: number }
}

type Tuple<N extends number, T extends unknown[] = []> = T['length'] extends N ? T : Tuple<N, [...T, string]>

/** The KEYS of a script: exactly as many stream/hash keys as it declares. */
export type ScriptKeys<N extends ScriptName> = Readonly<Tuple<(typeof SCRIPT_KEYS)[N]>>
export type ScriptArgs<N extends ScriptName> = Readonly<ScriptSpecs[N]['args']>
export type ScriptReply<N extends ScriptName> = ScriptSpecs[N]['reply']
