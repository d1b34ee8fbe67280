import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, ROOT, runCli } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

describe('bin/forkpoint', () => {
  it('is a plain Node entry', () => {
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node')
  })

  it("compiles the bundle from the build's code cache, which this Node accepts", () => {
    const probe = [
      "const { readFileSync } = require('node:fs'); const Module = require('node:module'); const vm = require('node:vm')",
      `const bundle = ${JSON.stringify(join(ROOT, 'dist', 'cli', 'main.cjs'))}`,
      "const script = new vm.Script(Module.wrap(readFileSync(bundle, 'utf8')), { filename: bundle, cachedData: readFileSync(bundle + '.cache') })",
      'console.log(script.cachedDataRejected)',
    ].join('\n')
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' })
    expect([r.status, r.stdout.trim()], r.stderr).toEqual([0, 'false'])
  })

  it('runs as usual when V8 rejects the code cache beside the bundle', () => {
    const copy = tempDir('rejected-cache')
    mkdirSync(join(copy, 'bin'))
    mkdirSync(join(copy, 'dist', 'cli'), { recursive: true })
    for (const file of ['bin/forkpoint', 'bin/package.json', 'dist/cli/main.cjs', 'package.json']) copyFileSync(join(ROOT, file), join(copy, file))
    writeFileSync(join(copy, 'dist', 'cli', 'main.cjs.cache'), 'not a code cache')
    const r = spawnSync(process.execPath, [join(copy, 'bin', 'forkpoint'), '--version'], { encoding: 'utf8' })
    expect([r.status, r.stdout.trim()], r.stderr).toEqual([0, (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version])
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
