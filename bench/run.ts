/**
 * `npm run bench -- NAME [args]`: runs bench/NAME.ts, which prints a table and writes
 * JSON under bench/results/. Without a name, lists the benchmarks.
 */
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'harness.ts'].includes(f))
  .map((f) => f.slice(0, -3))
const [name, ...rest] = process.argv.slice(2)
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args]`)
  process.exit(name ? 2 : 0)
}
const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as { main(args: string[]): Promise<void> }
await mod.main(rest)
