import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, ROOT, runCli } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

describe('bin/forkpoint', () => {
  it('is a plain Node entry', () => {
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node')
  })

  it('works through chains of relative and absolute symlinks, as npm installs it', () => {
    const dir = tempDir('bin')
    symlinkSync(CLI, join(dir, 'absolute'))
    mkdirSync(join(dir, '.bin'))
    symlinkSync('../absolute', join(dir, '.bin', 'forkpoint'))
    for (const bin of [join(dir, '.bin', 'forkpoint'), 'forkpoint']) {
      const r = spawnSync(bin, ['--version'], { encoding: 'utf8', cwd: dir, env: { ...process.env, PATH: `${dir}/.bin:${process.env['PATH']}` } })
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    }
  })

  it("prints its own package's version, not the version npm sets for the package that runs it", async () => {
    const own = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
    const r = await runCli(['--version'], { cwd: tempDir('caller'), env: { npm_package_version: '9.9.9-caller' } })
    expect([r.code, r.stdout.trim()]).toEqual([0, own])
  })

  it('leaves NODE_EXTRA_CA_CERTS as the user set it, for itself and every process it starts (into a sandbox when passed by name)', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    const certs = join(ws, 'no-such-ca.pem')
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    const r = await runCli(['run', '--env', 'NODE_EXTRA_CA_CERTS', '--', 'sh', '-c', 'printf "%s|%s" "$NODE_EXTRA_CA_CERTS" "${FORKPOINT_DEFERRED_CA_CERTS-unset}"'], {
      cwd: ws,
      env: { NODE_EXTRA_CA_CERTS: certs },
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${certs}|unset`)
  })
})
