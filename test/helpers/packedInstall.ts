import { execFile, spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from './cli.js'

const run = promisify(execFile)

/** What `npm i` of the packed package left in an empty project. */
export interface PackedInstall {
  /** The project: `node_modules/forkpoint` and its dependencies. */
  project: string
  /** PATH as the install had it: every program of this machine's PATH but the C and C++ compilers. */
  noCompilerPath: string
  /** Packages under node_modules, forkpoint's own included. */
  packages: number
  /** Bytes of the files under node_modules. */
  bytes: number
  /** Bytes of disk those take, as `du` counts them (whole blocks; directories too). */
  diskBytes: number
  /** The tarball `npm pack` made. */
  tarballBytes: number
  installMs: number
  /** The prebuilt binaries the mirror served (file names). */
  mirrored: string[]
}

/**
 * The package as a user gets it: `npm pack`, then `npm i` of the tarball into an empty
 * project, from the npm registry, with no C compiler on PATH. better-sqlite3 and zstd-napi
 * fetch their prebuilt binaries at install from their GitHub releases, which this machine
 * cannot reach: here prebuild-install fetches them from a local mirror
 * (`npm_config_<name>_binary_host`) of the same files, taken from this checkout's
 * node_modules, where `npm ci` built them. `dir`: an empty directory for the tarball, the
 * project, the npm cache and the mirror.
 */
export async function packAndInstall(dir: string): Promise<PackedInstall> {
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })
  const tarball = join(dir, stdout.trim().split('\n').at(-1)!)
  const project = join(dir, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', private: true }))
  const noCompilerPath = pathWithoutCompilers(join(dir, 'bin'))
  const mirror = await startPrebuildMirror(join(dir, 'mirror'))
  const started = Date.now()
  try {
    await run('npm', ['i', '--no-audit', '--no-fund', tarball], {
      cwd: project,
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        PATH: noCompilerPath,
        npm_config_cache: join(dir, 'npm-cache'),
        npm_config_update_notifier: 'false',
        npm_config_better_sqlite3_binary_host: mirror.url,
        npm_config_zstd_napi_binary_host: mirror.url,
      },
    })
  } finally {
    mirror.server.close()
  }
  const modules = join(project, 'node_modules')
  return {
    project,
    noCompilerPath,
    packages: countPackages(modules),
    ...sizeUnder(modules),
    tarballBytes: lstatSync(tarball).size,
    installMs: Date.now() - started,
    mirrored: mirror.served,
  }
}

const COMPILER = /^(?:.*-)?(?:cc|c\+\+|c89|c99|cpp|gcc|g\+\+|clang|clang\+\+|tcc)(?:-[\d.]+)?$/

/** A directory of links to every program on this PATH except the C and C++ compilers (cc, gcc, g++, their cross and versioned names). */
function pathWithoutCompilers(bin: string): string {
  mkdirSync(bin)
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!existsSync(dir)) continue
    for (const name of readdirSync(dir)) {
      if (!COMPILER.test(name) && !existsSync(join(bin, name))) symlinkSync(join(dir, name), join(bin, name))
    }
  }
  return bin
}

/** The prebuilt binaries prebuild-install asks for, as `build/Release/<file>` in a .tar.gz, served over HTTP. */
async function startPrebuildMirror(dir: string): Promise<{ server: Server; url: string; served: string[] }> {
  const files = new Map<string, string>()
  for (const { name, file, runtime } of [
    { name: 'better-sqlite3', file: 'better_sqlite3.node', runtime: `node-v${process.versions.modules}` },
    { name: 'zstd-napi', file: 'binding.node', runtime: 'napi-v8' },
  ]) {
    const pkg = join(ROOT, 'node_modules', name)
    const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string }
    const path = `/v${version}/${name}-v${version}-${runtime}-${process.platform}-${process.arch}.tar.gz`
    mkdirSync(join(dir, `v${version}`), { recursive: true })
    const tar = spawnSync('tar', ['czf', join(dir, path), '-C', pkg, `build/Release/${file}`], { encoding: 'utf8' })
    if (tar.status !== 0) throw new Error(`cannot pack ${name}'s binary for the mirror: ${tar.stderr}`)
    files.set(path, join(dir, path))
  }
  const served: string[] = []
  const server = createServer((req, res) => {
    const file = files.get(req.url ?? '')
    if (!file) return void res.writeHead(404).end()
    served.push(req.url!.split('/').at(-1)!)
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, served }
}

/** Packages in a node_modules tree: `name` and `@scope/name` directories, nested node_modules too. */
function countPackages(modules: string): number {
  let count = 0
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue
    const dirs = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((name) => join(modules, entry, name)) : [join(modules, entry)]
    for (const dir of dirs) {
      count++
      if (existsSync(join(dir, 'node_modules'))) count += countPackages(join(dir, 'node_modules'))
    }
  }
  return count
}

function sizeUnder(path: string): { bytes: number; diskBytes: number } {
  const stat = lstatSync(path)
  const own = { bytes: stat.isDirectory() ? 0 : stat.size, diskBytes: stat.blocks * 512 }
  if (!stat.isDirectory()) return own
  return readdirSync(path)
    .map((name) => sizeUnder(join(path, name)))
    .reduce((sum, size) => ({ bytes: sum.bytes + size.bytes, diskBytes: sum.diskBytes + size.diskBytes }), own)
}
