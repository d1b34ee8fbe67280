// Bundles the CLI into CommonJS files that bin/forkpoint runs: dist/cli/main.cjs (src/cli/main.ts
// and everything it imports from src/), and dist/cli/hook.cjs (src/cli/hookMain.ts: `forkpoint
// claude hook`, which Claude Code runs at every tool call: a client of the store's service, Node's
// own modules only) with dist/cli/hook-in-process.cjs (src/cli/hookInProcess.ts: the hook's work,
// loaded by the client when no service answers, with only the modules a hook uses), and
// dist/cli/snapshot.cjs (src/cli/snapshotMain.ts: a plain `forkpoint snapshot`, sent to the store's
// running service without the option parser and zod; main.cjs when no service answers).
// One file read at start instead of resolving and loading a hundred ES modules, about a quarter of
// a command's start (`npm run bench -- cli`, docs/cli-startup.md). The package's dependencies and
// peers stay external and load where they are needed; the rest, the argument parser and colours
// (which load on every start), is bundled in: they are devDependencies, and a user's install does
// without them. The in-process hook's bundle takes zod in too: loading the package (every locale, every
// schema) was half of a hook's start, and no package the hook loads is handed a schema of ours.
// Each file is replaced atomically, so a build never leaves a running test without a CLI.
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { build } from 'esbuild'

const { dependencies, peerDependencies } = JSON.parse(readFileSync('package.json', 'utf8'))
const packages = [...Object.keys(dependencies), ...Object.keys(peerDependencies)]

/** One bundle of `entry` into `outfile`, every package but `bundled` left external. */
async function bundle(entry, outfile, bundled = []) {
  const { outputFiles } = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    external: packages.filter((name) => !bundled.includes(name)),
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
}

await bundle('src/cli/main.ts', 'dist/cli/main.cjs')
await bundle('src/cli/hookMain.ts', 'dist/cli/hook.cjs')
await bundle('src/cli/snapshotMain.ts', 'dist/cli/snapshot.cjs')
await bundle('src/cli/hookInProcess.ts', 'dist/cli/hook-in-process.cjs', ['zod'])
