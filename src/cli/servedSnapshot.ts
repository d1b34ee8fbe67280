import { colorsWanted, useColors } from '../operations/text/colors.js'
import { snapshotRendering } from '../operations/text/snapshotRendering.js'
import { callService } from '../service/callService.js'
import { print } from './output.js'

/** A plain snapshot's line: `snapshot`, then at most a message and --json. */
interface PlainSnapshot {
  message?: string
  json: boolean
}

/**
 * `forkpoint snapshot [-m MESSAGE] [--json]` answered by the store's running service, as the
 * whole command line answers it, but without loading the option parser, the operation table
 * and zod: a plain snapshot is the command an agent's loop runs most. False when the line
 * is any other, or no service answers, or the service fails it: the whole command line then
 * runs it (and words any failure as it does).
 */
export async function servedSnapshot(words: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  const line = plainSnapshot(words)
  if (line === null) return false
  try {
    const store = env['FORKPOINT_STORE'] || undefined
    const answered = await callService({ dir: process.cwd(), ...(store ? { store } : {}) }, 'snapshot', line.message === undefined ? {} : { message: line.message })
    if (answered === null) return false
    useColors(colorsWanted(env, process.stdout))
    print({ json: line.json }, answered as Parameters<typeof snapshotRendering.human>[0], snapshotRendering)
    return true
  } catch {
    return false
  }
}

/** The line as a plain snapshot's, or null for any other (an option more, a help, a message left out). */
function plainSnapshot(words: string[]): PlainSnapshot | null {
  if (words[0] !== 'snapshot') return null
  const line: PlainSnapshot = { json: false }
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    if (word === '--json') line.json = true
    else if (word === '-m' || word === '--message') {
      // as the option parser takes it: the next word is the message, whatever it looks like
      if (i + 1 === words.length) return null
      line.message = words[++i]!
    } else if (word.startsWith('--message=')) line.message = word.slice('--message='.length)
    else if (word.startsWith('-m') && word.length > 2) line.message = word.slice(2)
    else return null
  }
  return line
}
