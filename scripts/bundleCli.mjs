// Bundles the CLI (src/cli/main.ts and everything it imports from src/) into dist/cli/:
// one entry file plus a chunk per lazily imported command, so that starting `forkpoint`
// reads a few files instead of resolving and loading each module of dist/ one by one.
// Packages stay external (heavy ones are imported lazily where they are needed).
import { rmSync } from 'node:fs'
import { build } from 'esbuild'

rmSync('dist/cli', { recursive: true, force: true })
await build({
  entryPoints: ['src/cli/main.ts'],
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
})
