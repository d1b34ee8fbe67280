import { type CliResult, runCli } from './cli.js'
import { KERNEL_CACHE } from './machines.js'

/** The CLI in workspace `cwd`, with the suite's kernel cache: `fp` gives its result, `fpJson` its parsed `--json` output (any exit but 0 throws). */
export function machineCli(cwd: () => string): { fp: (...args: string[]) => Promise<CliResult>; fpJson: <T>(...args: string[]) => Promise<T> } {
  const fp = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: cwd(), env: { XDG_CACHE_HOME: KERNEL_CACHE } })
  const fpJson = async <T>(...args: string[]): Promise<T> => {
    const r = await fp(...args, '--json')
    if (r.code !== 0) throw new Error(`forkpoint ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`)
    return JSON.parse(r.stdout) as T
  }
  return { fp, fpJson }
}
