#!/usr/bin/env node
/**
 * The `twainmq` command-line tool (docs/cli.md). Exit codes: 0 ok, 1 runtime error, 2 usage error;
 * errors print as `code: message` on stderr. The store is always closed before the process ends,
 * and the process ends by itself (no `process.exit` on the normal path).
 */
import { readFileSync } from 'node:fs'
import { run } from './program.js'

function packageVersion(): string {
  try {
    // src/cli/main.ts and dist/cli/main.js both sit two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }
    return pkg.version ?? '0.0.0'
  } catch {
    return '0.0.0'
  }
}

process.exitCode = await run(process.argv, packageVersion())
