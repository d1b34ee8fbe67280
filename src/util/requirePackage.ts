import { createRequire } from 'node:module'

/**
 * Load a dependency when it is first needed (native modules, compression, progress bars,
 * and Node's heavier built-ins: child_process alone loads net, dgram and the streams),
 * so that importing forkpoint or starting a command that does not use it stays cheap.
 * Through `require`: synchronous, so a caller needs no `await` to load what it uses.
 */
export const requirePackage = createRequire(import.meta.url)
