import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'

/** `forkpoint demo`, as root or as nobody, with no network needed: exit code and everything it printed. */
function demo(asNobody: boolean): Promise<{ code: number; out: string }> {
  const argv = asNobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', CLI, 'demo'] : [CLI, 'demo']
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: '/tmp', env: { PATH: process.env['PATH'], NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, out }))
  })
}

describe("forkpoint demo: the agent image's story", () => {
  it.each([
    ['as root', false],
    ['unprivileged', true],
  ])(
    'snapshots, forks 4 ways, merges the winner layer by layer, and the mail service gets exactly one call (%s)',
    async (_who, asNobody) => {
      const { code, out } = await demo(asNobody)
      expect(code, out).toBe(0)
      expect(out).toMatch(/world: 2 files {3}trace: 4 messages {3}effects: 1 entry/)
      expect(out.match(/^ {4}fork \d: sha256:[0-9a-f]{12} {2}\(refs\/forks\/[0-9a-f]{12}\/\d\)$/gm)).toHaveLength(4)
      expect(out.match(/HTTP 202 \(deferred: held in the outbox of branch fork-\d/g)).toHaveLength(2)
      expect(out).toMatch(/✓ two forks "sent" an email, the service has received none yet/)
      expect(out).toMatch(/fork 1 wins \(score 3\); its outbox sent 1 email/)
      expect(out).toMatch(/^ {4}world: clean\n {4}effects: taken from theirs\n {4}trace: merged/m)
      expect(out).toMatch(/^ {4}dropped {2}ticket-42-escalation\n {4}sending {2}ticket-42-refund\n {4}executed ticket-42-refund$/m)
      expect(out).toMatch(/✓ the mail service received exactly one call: the winner’s, with its Idempotency-Key/)
      expect(out).toMatch(/demo finished in/)
    },
    600_000,
  )
})
