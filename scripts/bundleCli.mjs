// Bundles the CLI (src/cli/main.ts and everything it imports from src/) into one
// CommonJS file, dist/cli/main.cjs, and its loader, dist/cli/start.cjs (src/cli/start.ts),
// which compiles the bundle with V8's code cache. One file read and no ES module
// resolution on each start: the command-line benchmark's start-up, not style, decides
// this layout (see docs/design-decisions.md). The argument parser and colours are bundled
// in too (they load on every start); other packages stay external and are loaded lazily
// where they are needed.
import { readFileSync, rmSync } from 'node:fs'
import { build } from 'esbuild'

const BUNDLED = new Set(['commander', 'picocolors'])
const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8'))

// commander requires node:child_process when it loads, only to spawn executable
// subcommands, which forkpoint has none of; that require loads net, dgram and the streams
// (about 4 ms of every start). It is deferred to the first spawn instead.
const deferChildProcess = {
  name: 'defer-child-process',
  setup(b) {
    b.onLoad({ filter: /commander[\\/]lib[\\/]command\.js$/ }, ({ path }) => {
      const eager = "const childProcess = require('node:child_process');"
      const source = readFileSync(path, 'utf8')
      if (!source.includes(eager)) throw new Error(`bundleCli: ${path} no longer has the line that defer-child-process rewrites`)
      const lazy = "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };"
      return { contents: source.replace(eager, lazy), loader: 'js' }
    })
  },
}

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
}

rmSync('dist/cli', { recursive: true, force: true })
const bundle = await build({
  ...common,
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/main.cjs',
  plugins: [deferChildProcess],
  external: Object.keys(dependencies).filter((name) => !BUNDLED.has(name)),
  // modules of src/ locate their built siblings (workers, preloads) from import.meta.url
  define: { 'import.meta.url': '__forkpointModuleUrl' },
  banner: { js: "const __forkpointModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: true,
  metafile: true,
})
// start.cjs compiles the bundle with vm.Script, where Node 20 cannot run import(): load packages with requirePackage
const dynamic = Object.values(bundle.metafile.outputs).flatMap((o) => o.imports).filter((i) => i.kind === 'dynamic-import')
if (dynamic.length > 0) throw new Error(`the CLI bundle must not import() packages (use requirePackage): ${dynamic.map((i) => i.path).join(', ')}`)
await build({ ...common, entryPoints: ['src/cli/start.ts'], outfile: 'dist/cli/start.cjs' })
