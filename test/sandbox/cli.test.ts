import { spawn, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

const cli = (dir: string, args: string[], env: NodeJS.ProcessEnv = process.env) => spawnSync(CLI, ['-C', dir, ...args], { encoding: 'utf8', env })

describe('forkpoint run (sandbox flags)', () => {
  it('passes only the allowlist, plus --env NAME and --env-from lines', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const env = { ...process.env, FP_CLI_SECRET: 'canary-19', FP_CLI_PASSED: 'passed' }
    const file = join(tempDir('envfile'), 'vars.env')
    writeFileSync(file, '# comment\nexport FROM_FILE="file value"\n')
    const clean = cli(dir, ['run', '--', 'env'], env)
    expect(clean.status).toBe(0)
    expect(clean.stdout).not.toContain('canary-19')
    expect(clean.stdout).not.toContain('FP_CLI_PASSED')
    const passed = cli(dir, ['run', '--env', 'FP_CLI_PASSED', '--env-from', file, '--', 'env'], env)
    expect(passed.stdout).toContain('FP_CLI_PASSED=passed\n')
    expect(passed.stdout).toContain('FROM_FILE=file value\n')
    expect(passed.stdout).not.toContain('canary-19')
    expect(cli(dir, ['run', '--env-from', join(dir, 'missing.env'), '--', 'true']).status).toBe(2)
  })

  it('shows an --expose path, read-only, and nothing else of the host', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const shared = tempDir('exposed')
    spawnSync('chmod', ['755', shared])
    writeFileSync(join(shared, 'f'), 'shared\n')
    const hidden = cli(dir, ['run', '--', 'cat', join(shared, 'f')])
    expect(hidden.status).not.toBe(0)
    const shown = cli(dir, ['run', '--expose', shared, '--', 'sh', '-c', `cat ${shared}/f; touch ${shared}/g 2>/dev/null || echo read-only`])
    expect(shown.stdout).toBe('shared\nread-only\n')
    expect(cli(dir, ['run', '--expose', 'relative/path', '--', 'true']).status).toBe(2)
  })

  it('takes --timeout 0 for none, and says on stderr when a limit is weaker than asked', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    expect(cli(dir, ['run', '--timeout', '0', '--', 'echo', 'ok']).stdout).toBe('ok\n')
    const limited = cli(dir, ['run', '--memory', '100M', '--json', '--', 'true'])
    const result = JSON.parse(limited.stdout) as { limits: { memory: string }; warnings: string[] }
    if (result.limits.memory === 'rlimit') expect(limited.stderr).toMatch(/warning: memory 100M is only a per-process address-space limit/)
    else expect(limited.stderr).toBe('')
  })

  it('streams the command output as it is written', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const child = spawn(CLI, ['-C', dir, 'run', '--', 'sh', '-c', 'echo first; while [ ! -e go ]; do sleep 0.05; done; echo second'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      if (out === 'first\n') writeFileSync(join(dir, 'go'), '')
    })
    const code = await new Promise((r) => child.once('close', r))
    expect(code).toBe(0)
    expect(out).toBe('first\nsecond\n')
  })
})
