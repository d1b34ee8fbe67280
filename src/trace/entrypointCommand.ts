import { extname, resolve } from 'node:path'

/** How to run an entrypoint file: node for JS, node + tsx for TypeScript, python3 for Python, else the file itself. */
export function entrypointCommand(entrypoint: string, cwd = process.cwd()): string[] {
  const file = resolve(cwd, entrypoint)
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
