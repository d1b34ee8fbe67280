import { expect, it } from 'vitest'
import { networkNamespaceAvailable, spawnAgent } from '../../src/trace/record/spawnAgent.js'
import { useHelloServer } from '../helpers/helloServer.js'

/** Replay's network isolation goes through the sandbox runtime too (no `unshare`, no `ip`). */
const helloPort = useHelloServer()

const script = (p: number) => `
  const net = require('net')
  const local = net.createServer((s) => s.end('loop')).listen(0, '127.0.0.1', () => {
    net.connect(local.address().port, '127.0.0.1').on('data', (d) => {
      process.stdout.write(String(d) + ' ')
      net.connect(${p}, '127.0.0.1').on('data', (h) => { console.log(String(h)); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })
    })
  })`

it('closes an offline agent network: loopback works, the host 127.0.0.1 is out of reach', async () => {
  expect(networkNamespaceAvailable()).toBe(true)
  const offline = await spawnAgent({ command: [process.execPath, '-e', script(helloPort())], env: process.env, cwd: process.cwd(), offline: true, stdout: 'capture' })
  expect(offline).toMatchObject({ exitCode: 0, isolation: 'netns', stdout: 'loop ECONNREFUSED\n' })
  const online = await spawnAgent({ command: [process.execPath, '-e', script(helloPort())], env: process.env, cwd: process.cwd(), stdout: 'capture' })
  expect(online).toMatchObject({ exitCode: 0, isolation: 'none', stdout: 'loop hello\n' })
})
