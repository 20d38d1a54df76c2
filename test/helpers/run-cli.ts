import { spawn } from 'node:child_process'
import { repoRoot } from './spawn.js'

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Run the CLI (from source, through tsx) to completion, without a TWAINMQ_URL inherited from the shell. */
export function cli(args: string[]): Promise<CliResult> {
  const env = { ...process.env }
  delete env.TWAINMQ_URL
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
