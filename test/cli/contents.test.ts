import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCliInProcess } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'

async function fp(dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCliInProcess(args, { cwd: dir })
}

describe('contents from the command line', () => {
  it('diff --patch, show ID:PATH and checkout ID -- PATH, end to end', async () => {
    const dir = await makeWorkspace({ 'index.js': 'one\n', 'data.bin': Buffer.from('a\0b'), 'lib/x.js': 'x1\n' })
    expect((await fp(dir, 'init')).code).toBe(0)
    const first = (await fp(dir, 'snapshot', '--json')).stdout
    const firstId = (JSON.parse(first) as { id: string }).id
    await fs.writeFile(join(dir, 'index.js'), 'two\n')
    await fs.writeFile(join(dir, 'lib/x.js'), 'x2\n')
    expect((await fp(dir, 'snapshot')).code).toBe(0)

    const patch = await fp(dir, 'diff', firstId, 'HEAD', '-p')
    expect(patch.code).toBe(1)
    expect(patch.stdout).toMatch(
      /^diff --git a\/index\.js b\/index\.js\nindex [0-9a-f]{12}\.\.[0-9a-f]{12} 100644\n--- a\/index\.js\n\+\+\+ b\/index\.js\n@@ -1 \+1 @@\n-one\n\+two\n/,
    )

    expect(await fp(dir, 'show', `${firstId}:index.js`)).toMatchObject({ code: 0, stdout: 'one\n' })
    expect(await fp(dir, 'show', 'HEAD:data.bin')).toMatchObject({ code: 0, stdout: 'a\0b' })
    expect((await fp(dir, 'show', 'HEAD:lib')).stdout).toBe('x.js\n')
    expect((await fp(dir, 'show', 'HEAD:nope')).code).toBe(2)

    const restored = await fp(dir, 'checkout', firstId, '--', 'lib')
    expect(restored.code).toBe(0)
    expect(await fs.readFile(join(dir, 'lib/x.js'), 'utf8')).toBe('x1\n')
    expect(await fs.readFile(join(dir, 'index.js'), 'utf8')).toBe('two\n')
    expect((await fp(dir, 'checkout', firstId, '--', 'missing')).code).toBe(2)
  })
})
