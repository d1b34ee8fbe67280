import { claudeHook } from './claudeHook.js'
import { allowSafeDirectories } from './safeDirectories.js'

// `forkpoint claude hook` on its own (bin/forkpoint runs this bundle, dist/cli/hook.cjs, for it):
// it runs at every tool call, so it loads the hook's modules and not the option parser or any other command's
allowSafeDirectories(process.env)
void claudeHook().then(() => process.exit(process.exitCode ?? 0))
