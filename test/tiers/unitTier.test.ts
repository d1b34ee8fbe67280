import { execFile, spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { NODE_LSTAT_TESTS, UNIT_TESTS } from '../../vitest.config.js'

const root = join(import.meta.dirname, '..', '..')
/** The guard's error (test/helpers/unitTierGuard.ts), by its message: with `isolate: false` the guard may come from an earlier file's module instance. */
const violation = /^unit tier: /

describe('the unit tier', () => {
  it('fails a file that spawns the CLI, node or a service', async () => {
    expect(() => spawnSync(join(root, 'bin', 'forkpoint'), ['--version'])).toThrow(violation)
    expect(() => spawn('node', ['-e', '0'])).toThrow(violation)
    expect(() => spawn(process.execPath, ['-e', '0'])).toThrow(violation)
    expect(() => spawnSync('redis-server', ['--version'])).toThrow(violation)
    expect(() => spawnSync('qemu-system-x86_64', ['--version'])).toThrow(violation)
    expect(() => promisify(execFile)('docker-registry', ['--version'])).toThrow(violation)
  })

  it('fails a file that starts a server', () => {
    expect(() => createServer().listen(0, '127.0.0.1')).toThrow(violation)
  })

  it('lets a short helper run', async () => {
    expect(spawnSync('true').status).toBe(0)
    await expect(promisify(execFile)('sync', ['-f', root])).resolves.toBeDefined()
  })

  it.each([...UNIT_TESTS, ...NODE_LSTAT_TESTS])('lists files that exist: %s', (file) => {
    expect(existsSync(join(root, file))).toBe(true)
  })
})
