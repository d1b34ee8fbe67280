import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A deterministic pseudo-random generator (mulberry32), so every run builds the same tree. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Text-like bytes (compressible about as much as source code), of the given size. */
function content(rand: () => number, size: number): Buffer {
  const words = ['const', 'return', 'function', 'agent', 'value', 'if', 'else', 'await', 'step', 'tool', '=', '(', ')', '{', '}', '\n']
  const parts: string[] = []
  let n = 0
  while (n < size) {
    const w = rand() < 0.3 ? Math.floor(rand() * 1e9).toString(36) : words[Math.floor(rand() * words.length)]!
    parts.push(w, ' ')
    n += w.length + 1
  }
  return Buffer.from(parts.join('').slice(0, size))
}

/**
 * Write `files` files totalling about `totalBytes` into `dir`, 100 files per directory
 * two levels deep; sizes vary (most small, a few large) like a real project.
 */
export function makeFixture(dir: string, { files, totalBytes, seed = 1 }: { files: number; totalBytes: number; seed?: number }): void {
  const rand = prng(seed)
  const avg = totalBytes / files
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${Math.floor(i / 1000)}`, `s${Math.floor(i / 100) % 10}`)
    if (i % 100 === 0) mkdirSync(sub, { recursive: true })
    const size = Math.max(16, Math.round(avg * (rand() < 0.9 ? rand() * 0.6 : 1 + rand() * 8)))
    writeFileSync(join(sub, `f${i}.txt`), content(rand, size))
  }
}
