/**
 * The first module `forkpoint` runs (bin/forkpoint starts it): it loads the CLI bundle,
 * dist/cli/main.cjs, through V8's code cache, so that a command does not parse and
 * compile the bundle's 600 KB of JavaScript again each time it starts. Node >= 22.1 keeps
 * such a cache itself (`module.enableCompileCache`); on Node 20 the bundle is compiled
 * here with the cached data of an earlier start, which V8 checks against the source, its
 * own version and flags and rejects when they differ. The cache is written when there was
 * none or it was rejected, under $XDG_CACHE_HOME/forkpoint (default ~/.cache); a cache
 * that cannot be read or written only costs the compile.
 *
 * Bundled on its own (CommonJS, Node's built-ins only) so that it stays small.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { Script } from 'node:vm'

const bundle = join(__dirname, 'main.cjs')
const nodeCache = (Module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache

if (nodeCache) {
  nodeCache(cacheDir())
  require(bundle)
} else {
  runWithCodeCache(bundle)
}

function runWithCodeCache(file: string): void {
  const source = readFileSync(file, 'utf8')
  const cacheFile = cachePath(file)
  const cachedData = cacheFile ? readOrUndefined(cacheFile) : undefined
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) })
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // at exit, so the cache holds the functions this command compiled, not only the top level
    process.once('exit', () => writeCache(cacheFile, () => script.createCachedData()))
  }
  const wrapper = script.runInThisContext() as (exports: object, require: NodeRequire, module: object, filename: string, dirname: string) => void
  const module = { exports: {} }
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file))
}

function cacheDir(): string | undefined {
  const base = process.env['XDG_CACHE_HOME'] || (process.env['HOME'] ? join(homedir(), '.cache') : undefined)
  return base ? join(base, 'forkpoint') : undefined
}

/** One cache file per bundle path and Node version (V8 rejects a stale one anyway). */
function cachePath(file: string): string | undefined {
  const dir = cacheDir()
  return dir ? join(dir, 'v8', `${process.version}-${process.arch}-${fnv1a(file)}.bin`) : undefined
}

/** A short name for a path; node:crypto would cost more to load than the whole rest of this file. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return hash.toString(16).padStart(8, '0')
}

function readOrUndefined(path: string): Buffer | undefined {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

function writeCache(path: string, data: () => Buffer): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    const temp = `${path}.${process.pid}.tmp`
    writeFileSync(temp, data(), { mode: 0o600 })
    renameSync(temp, path)
  } catch {
    // a read-only or full cache directory: the next start compiles again
  }
}
