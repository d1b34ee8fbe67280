import { createRequire } from 'node:module'
import { runClaudeHook } from './hookClient.js'

// `forkpoint claude hook` on its own (bin/forkpoint runs this bundle, dist/cli/hook.cjs, for it): it
// runs at every tool call, so it is the service's client alone; the hook's own code, its bundle
// dist/cli/hook-in-process.cjs beside this one, loads only when no service answers
const inProcess = (text: string): Promise<void> => (createRequire(import.meta.url)('./hook-in-process.cjs') as typeof import('./hookInProcess.js')).claudeHookInProcess(text)
void runClaudeHook(inProcess).then(() => process.exit(process.exitCode ?? 0))
