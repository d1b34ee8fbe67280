// Bundles the CLI (src/cli/main.ts and everything it imports from src/) into dist/cli/:
// one entry file plus a chunk per lazily imported command, so that starting `forkpoint`
// reads a few files instead of resolving and loading each module of dist/ one by one.
// The argument parser and colours are bundled in too (they load on every start); other
// packages stay external, imported lazily where they are needed.
import { readFileSync, rmSync } from 'node:fs'
import { build } from 'esbuild'

const BUNDLED = new Set(['commander', 'picocolors'])
const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8'))

rmSync('dist/cli', { recursive: true, force: true })
await build({
  entryPoints: ['src/cli/main.ts'],
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: Object.keys(dependencies).filter((name) => !BUNDLED.has(name)),
  // bundled CommonJS packages call require() for Node's built-in modules
  banner: { js: "import { createRequire as __forkpointRequire } from 'node:module'; const require = __forkpointRequire(import.meta.url);" },
  sourcemap: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
})
