import { claudeHook } from './claudeHook.js'
import { allowSafeDirectories } from './safeDirectories.js'

/** The hook's work in this process, when no service answers it: the entry of dist/cli/hook-in-process.cjs, which the hook's client loads then. */
export function claudeHookInProcess(text: string): Promise<void> {
  allowSafeDirectories(process.env)
  return claudeHook(text)
}
