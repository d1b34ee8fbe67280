/**
 * `npm run bench -- hostile`: what hostile images cost forkpoint (THREAT-MODEL.md,
 * adversary 2). Each bomb is built with forkpoint's own store functions
 * (test/helpers/hostileImages.ts), and each row runs the built CLI on it in a child
 * process under `/usr/bin/time -v`: unpack of its pack file, pull and clone of its file://
 * layout, and checkout of the image once let in under a raised budget. Targets: peak RSS
 * at most 200 MB and wall time at most 2 s per row, each refused with exit 5 and nothing
 * written. Packs whose zstd frame inflates to 4 GiB of zeros are unpacked and pulled the
 * same way. Needs `npm run build` and GNU time (`apt-get install time`).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Digest, Store } from '../src/index.js'
import { type HostileImage, chunksBomb, dagBomb, deepTree, hostileImage, sharedBlobBomb } from '../test/helpers/hostileImages.js'
import { CLI } from '../test/helpers/cli.js'
import { FOUR_GIB_OF_ZEROS, zeroFrame, zstdBombLayout, zstdBombPack } from '../test/helpers/zstdBombs.js'
import { type Row, report } from './harness.js'

const MiB = 1024 ** 2
const TARGET = { rssMb: 200, seconds: 2 }
/** What lets each bomb into a store, so that a checkout of it can be measured. */
const RAISED = { FORKPOINT_MAX_EXPANSION: '1000000000', FORKPOINT_MAX_CHECKOUT_PATHS: '1T' }

const BOMBS: Array<{ name: string; build: (store: Store) => Promise<Digest> }> = [
  { name: 'DAG of 26 trees (2^26 paths)', build: (store) => dagBomb(store, 26) },
  { name: 'one 1 MiB blob x 2,048 chunks (2 GiB)', build: (store) => chunksBomb(store, MiB, 2048) },
  { name: '32 dirs x 32 files, one 1 MiB blob (1 GiB)', build: (store) => sharedBlobBomb(store, 32, 32, MiB) },
  { name: 'tree 10,000 deep', build: (store) => deepTree(store, 10_000) },
]

const made: string[] = []
function newDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fp-bench-${label}-`))
  made.push(dir)
  return dir
}

interface Measured {
  exit: number
  rssMb: number
  seconds: number
  stderr: string
}

/** `forkpoint ARGS` under GNU time: its exit status, peak RSS and wall time. */
function timed(args: string[], cwd: string, env: Record<string, string> = {}): Measured {
  const r = spawnSync('/usr/bin/time', ['-v', CLI, ...args], { cwd, env: { PATH: process.env['PATH'], HOME: process.env['HOME'], NO_COLOR: '1', ...env }, encoding: 'utf8' })
  const field = (name: string) =>
    Number(
      new RegExp(`${name}: (.*)`)
        .exec(r.stderr)?.[1]
        ?.trim()
        .split(':')
        .reduce((s, part) => s * 60 + Number(part), 0) ?? Number.NaN,
    )
  return {
    exit: r.status ?? -1,
    rssMb: field('Maximum resident set size \\(kbytes\\)') / 1024,
    seconds: field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)'),
    stderr: r.stderr.split('\n').find((line) => line.startsWith('forkpoint') || line.includes('refusing')) ?? '',
  }
}

/** A new workspace with a store, for a receiving side. */
function receiver(): string {
  const dir = newDir('recv')
  spawnSync(CLI, ['init'], { cwd: dir })
  return dir
}

/** One measured operation on one bomb, against the targets. */
function row(bomb: string, operation: string, m: Measured, written: boolean): Row {
  return {
    bomb,
    operation,
    exit: m.exit,
    'peak RSS MB': Math.round(m.rssMb),
    'wall s': m.seconds,
    'nothing written': written ? 'no' : 'yes',
    target: m.rssMb <= TARGET.rssMb && m.seconds <= TARGET.seconds && m.exit === 5 && !written ? 'met' : 'missed',
    message: m.stderr.slice(0, 160),
  }
}

function rowsFor(name: string, image: HostileImage): Row[] {
  const rows: Row[] = []
  const add = (op: string, m: Measured, written: boolean) => rows.push(row(name, op, m, written))
  const unpackInto = receiver()
  add('unpack', timed(['unpack', image.pack], unpackInto), false)
  const pullInto = receiver()
  add('pull (file://)', timed(['pull', image.remote], pullInto), false)
  const cloneInto = join(newDir('clone'), 'into')
  add('clone (file://)', timed(['clone', image.remote, '--into', cloneInto], tmpdir()), existsSync(cloneInto))
  const admitted = receiver()
  const letIn = timed(['unpack', image.pack, '--tag', 'bomb'], admitted, RAISED)
  if (letIn.exit !== 0) return rows // refused whatever the budget (depth): nothing to check out
  const into = join(newDir('checkout'), 'into')
  add('checkout --into', timed(['checkout', 'bomb', '--into', into], admitted), existsSync(into))
  return rows
}

/** Packs whose one zstd frame inflates to 4 GiB of zeros: unpack of the pack file and pull of its layout. */
async function zstdBombRows(): Promise<Row[]> {
  const note = Buffer.from('{"kind":"note","schemaVersion":1,"text":"an honest object before the zeros"}')
  const bombs = [
    { name: '4 GiB zstd frame, its index declaring 3.5 KB', frame: zeroFrame(Buffer.alloc(0), FOUR_GIB_OF_ZEROS), object: Buffer.alloc(3584) },
    { name: 'an honest object, then a 4 GiB zero tail in its frame', frame: zeroFrame(note, FOUR_GIB_OF_ZEROS), object: note },
  ]
  const rows: Row[] = []
  for (const bomb of bombs) {
    const dir = newDir('zstd')
    const ops: Array<[string, string[]]> = [
      ['unpack', ['unpack', await zstdBombPack(dir, bomb.frame, bomb.object)]],
      ['pull (file://)', ['pull', await zstdBombLayout(dir, bomb.frame, bomb.object)]],
    ]
    for (const [op, args] of ops) rows.push(row(bomb.name, op, timed(args, receiver()), false))
  }
  return rows
}

/** A layout whose `index.json` is the most a manifest may be (4 MiB) of arrays nested two million deep: pull and clone. */
function nestedIndexRows(): Row[] {
  const name = 'index.json of 4 MiB nesting two million deep'
  const source = receiver()
  writeFileSync(join(source, 'a.txt'), 'a\n')
  spawnSync(CLI, ['snapshot'], { cwd: source })
  const layout = join(newDir('nested'), 'layout')
  spawnSync(CLI, ['push', 'HEAD', `file://${layout}:v1`], { cwd: source })
  const depth = (4 * MiB - 64) / 2
  writeFileSync(join(layout, 'index.json'), `{"schemaVersion":2,"manifests":${'['.repeat(depth)}${']'.repeat(depth)}}`)
  const cloneInto = join(newDir('clone'), 'into')
  return [
    row(name, 'pull (file://)', timed(['pull', `file://${layout}:v1`], receiver()), false),
    row(name, 'clone (file://)', timed(['clone', `file://${layout}:v1`, '--into', cloneInto], tmpdir()), existsSync(cloneInto)),
  ]
}

export async function main(): Promise<void> {
  if (!existsSync('/usr/bin/time')) throw new Error('GNU time is missing: apt-get install -y time')
  const rows: Row[] = []
  try {
    for (const bomb of BOMBS) {
      const image = await hostileImage(newDir, bomb.build)
      rows.push(...rowsFor(bomb.name, image))
    }
    rows.push(...(await zstdBombRows()))
    rows.push(...nestedIndexRows())
  } finally {
    for (const dir of made) rmSync(dir, { recursive: true, force: true })
  }
  report('hostile', `hostile images: peak RSS and wall time per operation (targets: exit 5, ≤ ${TARGET.rssMb} MB, ≤ ${TARGET.seconds} s, nothing written)`, rows, {
    target: TARGET,
  })
}
