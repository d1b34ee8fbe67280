// Bundles the CLI (src/cli/main.ts and everything it imports from src/) into one CommonJS
// file, dist/cli/main.cjs, which bin/forkpoint runs: one file read at start instead of
// resolving and loading a hundred ES modules, about a quarter of a command's start
// (`npm run bench -- cli`, docs/cli-startup.md). The package's dependencies and peers stay
// external and load where they are needed; the rest, the argument parser and colours (which
// load on every start), is bundled in: they are devDependencies, and a user's install does
// without them. The file is replaced atomically, so a build never leaves a running test
// without a CLI.
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { build } from 'esbuild'

const { dependencies, peerDependencies } = JSON.parse(readFileSync('package.json', 'utf8'))

const { outputFiles } = await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/main.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  external: [...Object.keys(dependencies), ...Object.keys(peerDependencies)],
  // modules of src/ locate their built siblings (workers, preloads, the native addon) from import.meta.url
  define: { 'import.meta.url': '__forkpointModuleUrl' },
  banner: { js: "const __forkpointModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: true,
  write: false,
})
for (const { path, contents } of outputFiles) {
  writeFileSync(`${path}.tmp`, contents)
  renameSync(`${path}.tmp`, path)
}
