/**
 * Run one registry operation on hostile data in a process of its own (`node --import tsx
 * registryChild.ts OP INPUT STORE`: OP `unpack` a pack file or `pull` a remote into a new
 * store at STORE) and print one JSON line: the exit code its error carries (0 when it
 * succeeds) and the process's peak RSS in bytes, which a test bounds.
 */
import { Store, pullImage, unpackImage } from '../../src/index.js'

const [op, input, storeDir] = process.argv.slice(2) as [string, string, string]
let exitCode = 0
let message = ''
try {
  const store = await Store.init(storeDir)
  if (op === 'unpack') await unpackImage({ store, input })
  else await pullImage({ store, remote: input, credentials: null })
} catch (err) {
  exitCode = (err as { exitCode?: number }).exitCode ?? 6
  message = (err as Error).message
}
process.stdout.write(`${JSON.stringify({ exitCode, message, peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`)
