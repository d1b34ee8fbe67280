import { mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** Where what machines fetch is kept between runs (kernels, Debian packages): `$XDG_CACHE_HOME/forkpoint`, else `~/.cache/forkpoint`. */
export function forkpointCacheDir(): string {
  const dir = join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'forkpoint')
  mkdirSync(dir, { recursive: true })
  return dir
}
