import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { Workspace } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'

/** Bytes this process has read with read(2) and friends so far (/proc/self/io: rchar). */
const bytesRead = (): number => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1])

/**
 * 25k files of 1 KB: reading them is 25 MB, a hundred times the bounds below, and reading the workspace's stat
 * cache again (1.8 MB) is past the bound on catching up after a commit. Branching at 100k files is bench/branch.ts's.
 */
const FILES = 25_000

it('branches a 25k-file workspace without reading its files, also after a commit', async () => {
  const dir = tempDir('big')
  const content = 'y'.repeat(1000)
  for (let i = 0; i < FILES; i++) {
    if (i % 1000 === 0) mkdirSync(join(dir, `d${i / 1000}`))
    writeFileSync(join(dir, `d${Math.floor(i / 1000)}`, `f${i}`), `${i}${content}`)
  }
  const ws = await Workspace.open({ dir, backend: 'overlay' })
  await ws.refresh() // the one scan that reads (hashes) every file
  const fileBytes = FILES * 1000
  let before = bytesRead()
  const first = await ws.branch('first') // builds the shared base directory: links, not reads
  expect(bytesRead() - before).toBeLessThan(fileBytes / 4) // what it reads is tree objects, not files
  before = bytesRead()
  const second = await ws.branch('second')
  expect(bytesRead() - before).toBeLessThan(256 * 1024)
  expect(readFileSync(join(second.path, 'd24', 'f24999'), 'utf8')).toBe(`24999${content}`)
  writeFileSync(join(second.path, 'd5', 'f5000'), 'changed')
  before = bytesRead()
  const result = await second.commit() // looks at the changed path only
  expect(bytesRead() - before).toBeLessThan(256 * 1024)
  expect(result.written).toEqual(['d5/f5000'])
  expect(readFileSync(join(dir, 'd5', 'f5000'), 'utf8')).toBe('changed')
  await first.abort()
  before = bytesRead()
  const third = await ws.branch('third') // catches up with the commit by its record: no rescan, no new view
  expect(bytesRead() - before).toBeLessThan(1024 * 1024)
  expect(readFileSync(join(third.path, 'd5', 'f5000'), 'utf8')).toBe('changed')
  expect(readFileSync(join(third.path, 'd5', 'f5001'), 'utf8')).toBe(`5001${content}`)
  await third.abort()
}, 300_000)

it('builds a base directory even when one object backs more files than a file system allows links (ext4: 65000)', async () => {
  const dir = tempDir('same')
  for (let i = 0; i < 70_000; i++) {
    if (i % 1000 === 0) mkdirSync(join(dir, `d${i / 1000}`))
    writeFileSync(join(dir, `d${Math.floor(i / 1000)}`, `f${i}`), '')
  }
  const ws = await Workspace.open({ dir, backend: 'overlay' })
  const b = await ws.branch('empty-files')
  expect(readFileSync(join(b.path, 'd69', 'f69999'), 'utf8')).toBe('')
  await b.abort()
}, 300_000)
