/** Shared by the examples: a throwaway copy of a tiny project with a failing test. */
import { mkdtempSync, promises as fs, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const PROJECT: Record<string, string> = {
  'calc.js': 'export function add(a, b) {\n  return a - b\n}\n',
  'test.js': "import { add } from './calc.js'\nif (add(2, 3) !== 5) { console.error(`add(2, 3) returned ${add(2, 3)}, expected 5`); process.exit(1) }\nconsole.log('ok')\n",
  'package.json': '{ "type": "module" }\n',
}

/** Write the project into a fresh temporary directory; `done()` removes it. */
export async function tempProject(files: Record<string, string> = PROJECT): Promise<{ dir: string; read(rel: string): string; done(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'forkpoint-example-'))
  for (const [rel, text] of Object.entries(files)) await fs.writeFile(join(dir, rel), text)
  return { dir, read: (rel) => readFileSync(join(dir, rel), 'utf8'), done: () => rmSync(dir, { recursive: true, force: true }) }
}

/** One line per candidate. */
export function table(results: Array<{ index: number; status: string; score: number | null; depth?: number }>, winner?: number): string {
  return results.map((r) => `${r.index === winner ? '*' : ' '} #${r.index}${r.depth ? ` depth ${r.depth}` : ''}  ${r.status.padEnd(9)}  score ${r.score ?? '-'}`).join('\n')
}
