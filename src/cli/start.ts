/**
 * The first module `forkpoint` runs (bin/forkpoint starts it): it loads the CLI bundle,
 * dist/cli/main.cjs, through V8's code cache, so that a command does not parse and
 * compile the bundle's 600 KB of JavaScript again each time it starts. Node >= 22.1 keeps
 * such a cache itself (`module.enableCompileCache`); on Node 20 the bundle is compiled
 * here with the cached data of an earlier start. V8 checks that data against its own
 * version and flags but only the source's length, so the cache file also records which
 * bundle it was made from (size, mtime, inode: a rebuild or an upgrade is a new one). It
 * is written when there was none or it did not fit, under $XDG_CACHE_HOME/forkpoint
 * (default ~/.cache); a cache that cannot be read or written only costs the compile.
 *
 * Bundled on its own (CommonJS, Node's built-ins only) so that it stays small.
 */
import { type Stats, closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
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
  // one open file for the identity and the source: a rebuild between two lookups would label the cache of one build with another's identity
  const fd = openSync(file, 'r')
  const made = bundleIdentity(fstatSync(fd))
  const source = readFileSync(fd, 'utf8')
  closeSync(fd)
  const cacheFile = cachePath(file)
  const cachedData = cacheFile ? readCache(cacheFile, made) : undefined
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) })
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // at exit, so the cache holds the functions this command compiled, not only the top level
    process.once('exit', () => writeCache(cacheFile, made, () => script.createCachedData()))
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

/** Which build of the bundle this is: a line at the head of its cache file. */
function bundleIdentity(st: Stats): string {
  return `${st.size} ${st.mtimeMs} ${st.ino}\n`
}

/** The cached data, when the file holds some made from this very bundle. */
function readCache(path: string, made: string): Buffer | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch {
    return undefined
  }
  const head = Buffer.from(made)
  return bytes.subarray(0, head.length).equals(head) ? bytes.subarray(head.length) : undefined
}

function writeCache(path: string, made: string, data: () => Buffer): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    // pids repeat across PID namespaces sharing a home directory (sandboxes): a random part too
    const temp = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`
    writeFileSync(temp, Buffer.concat([Buffer.from(made), data()]), { mode: 0o600 })
    renameSync(temp, path)
  } catch {
    // a read-only or full cache directory: the next start compiles again
  }
}
