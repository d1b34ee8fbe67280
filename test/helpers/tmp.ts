import { mkdtempSync, promises as fs } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll } from 'vitest'

const made: string[] = []
afterAll(async () => {
  await Promise.all(made.map((d) => fs.rm(d, { recursive: true, force: true })))
})

/** A fresh temporary directory, removed after the test file. */
export function tempDir(label = 'fp'): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`))
  made.push(dir)
  return dir
}

export type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string } | { dir: true }

/** Build a workspace from a map of relative paths: `{ 'a.txt': 'hi', 'bin/x': { content, mode: 0o755 } }`. */
export async function makeWorkspace(files: Record<string, FileSpec>, dir = tempDir('ws')): Promise<string> {
  for (const [rel, spec] of Object.entries(files)) {
    const path = join(dir, rel)
    await fs.mkdir(dirname(path), { recursive: true })
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) await fs.writeFile(path, spec)
    else if ('symlink' in spec) await fs.symlink(spec.symlink, path)
    else if ('dir' in spec) await fs.mkdir(path, { recursive: true })
    else {
      await fs.writeFile(path, spec.content)
      if (spec.mode !== undefined) await fs.chmod(path, spec.mode)
    }
  }
  return dir
}
