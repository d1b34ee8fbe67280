import { existsSync } from 'node:fs'
import { extname, resolve } from 'node:path'
import { UsageError } from '../../errors/index.js'

/** How to run an entrypoint file (which must exist: UsageError, exit 2, when it does not): node for JS, node + tsx for TypeScript, python3 for Python, else the file itself. */
export function entrypointCommand(entrypoint: string, cwd = process.cwd()): string[] {
  const file = resolve(cwd, entrypoint)
  if (!existsSync(file)) throw new UsageError(`--entrypoint ${entrypoint}: no such file (${file})`, { entrypoint: file })
  switch (extname(file)) {
    case '.js':
    case '.mjs':
    case '.cjs':
      return [process.execPath, file]
    case '.ts':
    case '.mts':
      return [process.execPath, '--import', 'tsx', file]
    case '.py':
      return ['python3', file]
    default:
      return [file]
  }
}
