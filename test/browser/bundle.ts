// Bundles an entry for the browser with vite's JS API (library mode, ES module, minified) into
// `outDir`: the browser tests load src/browser this way, and the bench measures the bundle's size.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'vite'
import { repoRoot } from '../helpers/spawn.js'

/** The twainmq/browser entry's source. */
export const browserEntry = join(repoRoot, 'src', 'browser', 'index.ts')

/** Bundles `entry` (a file) into `<outDir>/<name>.js`; resolves with the file's path. */
export async function bundle(entry: string, outDir: string, name: string): Promise<string> {
  await build({
    configFile: false,
    logLevel: 'warn',
    root: repoRoot,
    build: {
      outDir,
      emptyOutDir: false,
      minify: true,
      sourcemap: false,
      target: 'es2022',
      lib: { entry, formats: ['es'], fileName: () => `${name}.js` },
      rollupOptions: { external: [] },
    },
  })
  return join(outDir, `${name}.js`)
}

/**
 * Raw and gzipped size in bytes of a bundle a page loads at once: the file and the chunks it
 * imports statically (gzipped together), not the chunks it imports on demand (`import()`).
 */
export function sizes(file: string): { bytes: number; gzip: number } {
  const files = [file]
  for (let i = 0; i < files.length; i++) {
    const text = readFileSync(files[i] as string, 'utf8')
    for (const m of text.matchAll(/^import\s[^;]*?from\s*["']\.\/([\w.-]+\.js)["']/gm)) {
      const chunk = join(dirname(file), m[1] as string)
      if (!files.includes(chunk)) files.push(chunk)
    }
  }
  const data = Buffer.concat(files.map((f) => readFileSync(f)))
  return { bytes: data.length, gzip: gzipSync(data, { level: 9 }).length }
}
