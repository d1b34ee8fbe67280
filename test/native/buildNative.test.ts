import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'

/** What an install of the package unpacks to build from: its native sources and build script, and (`prebuilds`) the prebuilt parts. */
function packageCopy(prebuilds?: string): string {
  const dir = tempDir('build-native')
  for (const path of ['native', 'binding.gyp', 'scripts/buildNative.mjs']) cpSync(join(ROOT, path), join(dir, path), { recursive: true })
  if (prebuilds) cpSync(prebuilds, join(dir, 'prebuilds'), { recursive: true })
  return dir
}

function buildNative(dir: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['scripts/buildNative.mjs', ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env } })
}

/** As on a machine without node-gyp, or without a C compiler. */
const NO_NODE_GYP = { npm_config_node_gyp: '/nonexistent/node-gyp.js' }
const NO_COMPILER = { ...NO_NODE_GYP, CC: '/nonexistent/cc' }

/** An ELF file's machine (62 x86-64, 183 AArch64) and whether it names a program interpreter (it is dynamically linked). */
function elf(path: string): { machine: number; interpreter: boolean } {
  const bytes = readFileSync(path)
  expect(bytes.subarray(0, 4).toString('latin1')).toBe('\x7fELF')
  const programHeaders = Number(bytes.readBigUInt64LE(32))
  const size = bytes.readUInt16LE(54)
  const PT_INTERP = 3
  let interpreter = false
  for (let i = 0; i < bytes.readUInt16LE(56); i++) interpreter ||= bytes.readUInt32LE(programHeaders + i * size) === PT_INTERP
  return { machine: bytes.readUInt16LE(18), interpreter }
}

describe('building the compiled lstat', () => {
  it('at install, where no prebuilt fits, a failed build says so in one line and lets the install go on', () => {
    const r = buildNative(packageCopy(), ['--optional'], NO_NODE_GYP)
    expect(r.status).toBe(0)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/native lstat helper was not built .*Node's lstat/)
  })

  it('in npm run build, a failed build fails', () => {
    const r = buildNative(packageCopy(), [], NO_NODE_GYP)
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/buildNative: node-gyp (build|rebuild) failed/)
  })
})

describe('the prebuilt native parts (scripts/buildNative.mjs --prebuilds)', () => {
  let built: string
  beforeAll(() => {
    built = packageCopy()
    const r = buildNative(built, ['--prebuilds'])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })
  const file = (arch: string, name: string) => join(built, 'prebuilds', `linux-${arch}`, name)

  it('are built for x86-64 and AArch64, the runtimes statically linked', () => {
    expect(elf(file('x64', 'forkpoint-sandbox'))).toEqual({ machine: 62, interpreter: false })
    expect(elf(file('arm64', 'forkpoint-sandbox'))).toEqual({ machine: 183, interpreter: false })
    expect(elf(file('x64', 'forkpoint_native.node')).machine).toBe(62)
    expect(elf(file('arm64', 'forkpoint_native.node')).machine).toBe(183)
  })

  it('give the AArch64 runtime a seccomp filter of AArch64 system call numbers', () => {
    const filter = readFileSync(join(built, 'build', 'prebuild-arm64', 'seccomp-filter.h'), 'utf8')
    // the filter's first test is of the architecture: AUDIT_ARCH_AARCH64
    expect(filter).toMatch(/^ {2}\{0x0015, \d+, \d+, 0xc00000b7\},$/m)
    // unshare, mount, bpf and clone3 as AArch64 numbers them (x86-64's are 272, 165, 321 and 435)
    for (const nr of [97, 40, 280, 435]) expect(filter).toContain(`0x${nr.toString(16).padStart(8, '0')}}`)
    expect(filter).not.toContain(`0x${(272).toString(16).padStart(8, '0')}}`)
  })

  it('run: the AArch64 runtime under qemu-user answers as the runtime does', () => {
    const r = spawnSync('qemu-aarch64-static', [file('arm64', 'forkpoint-sandbox')], { encoding: 'utf8' })
    expect(r.error).toBeUndefined()
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^usage: forkpoint-sandbox holder/)
  })

  it("load: this machine's lstat helper gives what Node's lstat gives", () => {
    const addon = createRequire(import.meta.url)(file(process.arch, 'forkpoint_native.node')) as { lstatNames(dir: Buffer, names: Buffer, out: Float64Array): number }
    const dir = tempDir('prebuilt-lstat')
    writeFileSync(join(dir, 'a'), 'four')
    const out = new Float64Array(5)
    expect(addon.lstatNames(Buffer.from(dir), Buffer.from('a'), out)).toBe(0)
    expect(out[1]).toBe(4)
    expect(out[4]).toBeGreaterThan(0)
  })

  it('at install, where a prebuilt fits, nothing is compiled and nothing is said', () => {
    const dir = packageCopy(join(built, 'prebuilds'))
    const r = buildNative(dir, ['--optional'], NO_COMPILER)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(existsSync(join(dir, 'build'))).toBe(false)
  })
})
