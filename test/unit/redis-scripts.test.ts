// The Redis backend's Lua scripts and what script-specs.ts declares of them: every .lua file of
// src/backends/redis/scripts/ is a declared script or an include a script uses, every declared script
// has its file, each script's KEYS count (file name, declaration) is the highest KEYS[n] it uses, and
// the loader expands `-- #include` lines.
import { readFileSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BUFFER_REPLY, SCRIPT_KEYS, type ScriptName } from '../../src/backends/redis/script-specs.js'
import { expandIncludes, scriptFiles } from '../../src/backends/redis/scripts.js'

const { scripts, dir } = scriptFiles()
const files = readdirSync(dir).filter((f) => f.endsWith('.lua'))
const SCRIPT_FILE = /^([a-z-]+)-(\d+)\.lua$/
const raw = (file: string) => readFileSync(new URL(file, dir), 'utf8')
/** Every n of KEYS[n] in a text. */
const keysUsed = (lua: string) => [...lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]))

describe('Redis Lua scripts', () => {
  it('every script file is declared, with the key count of its name, and every declared script has a file', () => {
    const onDisk = files.filter((f) => SCRIPT_FILE.test(f)).map((f) => SCRIPT_FILE.exec(f) as RegExpExecArray)
    expect(onDisk.map((m) => m[1]).sort()).toEqual(Object.keys(SCRIPT_KEYS).sort())
    for (const m of onDisk) expect(Number(m[2]), m[0]).toBe(SCRIPT_KEYS[m[1] as ScriptName])
    expect([...scripts.keys()].sort()).toEqual(Object.keys(SCRIPT_KEYS).sort())
    for (const name of BUFFER_REPLY) expect(SCRIPT_KEYS).toHaveProperty(name)
  })

  it('every other .lua file is an include some script uses, and uses no KEYS itself', () => {
    const includes = files.filter((f) => !SCRIPT_FILE.test(f))
    expect(includes.sort()).toEqual([
      'append-done.lua',
      'append-inc.lua',
      'append-max.lua',
      'append-resv.lua',
      'append-seq.lua',
      'entry.lua',
    ])
    for (const inc of includes) {
      expect(
        files.filter((f) => SCRIPT_FILE.test(f) && raw(f).includes(`-- #include ${inc}\n`)).length,
        inc,
      ).toBeGreaterThan(0)
      expect(keysUsed(raw(inc)), inc).toEqual([])
    }
  })

  it('each script uses KEYS[1] to KEYS[n] for the n it declares, and no more', () => {
    for (const [name, s] of scripts) {
      const used = new Set(keysUsed(s.lua))
      expect(Math.max(0, ...used), name).toBe(s.numberOfKeys)
      for (let n = 1; n <= s.numberOfKeys; n++) expect(used.has(n), `${name} KEYS[${n}]`).toBe(true)
    }
  })

  it('the loader replaces every include line with the file, and nothing is left to include', () => {
    for (const [name, s] of scripts) expect(s.lua, name).not.toMatch(/^-- #include/m)
    expect(scripts.get('shared-claim')?.lua).toContain('local function entry_fields(f)')
    const lib: Record<string, string> = { 'x.lua': 'local x = 1\n' }
    expect(expandIncludes('a\n-- #include x.lua\nb\n', (f) => lib[f] as string)).toBe('a\nlocal x = 1\nb\n')
    expect(() => expandIncludes('-- #include read-1.lua\n', () => '')).toThrow(/names a script/)
  })
})
