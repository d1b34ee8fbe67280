/**
 * Run one registry operation on hostile data in a process of its own (`node registryChild.mjs OP
 * INPUT STORE`: OP `unpack` a pack file or `pull` a remote into a new store at STORE) and print one
 * JSON line: the exit code its error carries (0 when it succeeds) and the process's peak RSS in
 * bytes, which a test bounds. It drives the built library: plain Node starts it in a fraction of
 * the time a TypeScript loader takes, and the peak RSS is the library's own.
 */
import { Store, pullImage, unpackImage } from '../../dist/index.js'

const [op, input, storeDir] = process.argv.slice(2)
let exitCode = 0
let message = ''
try {
  const store = await Store.init(storeDir)
  if (op === 'unpack') await unpackImage({ store, input })
  else await pullImage({ store, remote: input, credentials: null })
} catch (err) {
  exitCode = err.exitCode ?? 6
  message = err.message
}
process.stdout.write(`${JSON.stringify({ exitCode, message, peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`)
