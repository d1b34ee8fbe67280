import { spawn } from 'node:child_process'
import { type AddressInfo, connect, createServer } from 'node:net'
import { proxyEnv } from './recordingProxy.js'

/**
 * `node netnsBridge.js SOCKET -- CMD…`, run inside the replay's network namespace (made,
 * loopback up, by the sandbox runtime: see spawnAgent.ts): listens on 127.0.0.1, relays
 * each connection to the replay proxy's unix socket outside, and runs the agent pointed
 * at it. Nothing else in the namespace has a route anywhere.
 */
const [socketPath, separator, ...command] = process.argv.slice(2)
if (!socketPath || separator !== '--' || command.length === 0) {
  process.stderr.write('usage: netnsBridge.js SOCKET -- CMD...\n')
  process.exit(2)
}
const server = createServer((client) => {
  const upstream = connect(socketPath)
  client.pipe(upstream).pipe(client)
  client.on('error', () => upstream.destroy())
  upstream.on('error', () => client.destroy())
})
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env: { ...process.env, ...proxyEnv(url) } })
  child.on('error', (err) => {
    process.stderr.write(`forkpoint: cannot start ${command[0]}: ${err.message}\n`)
    process.exit(127)
  })
  child.on('close', (code, signal) => process.exit(code ?? (signal ? 128 : 1)))
})
