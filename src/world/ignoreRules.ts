import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ignore, { type Ignore } from 'ignore'

/**
 * gitignore semantics per directory: each directory's `.forkpointignore` (and
 * `.gitignore` when asked) applies to paths below it, deeper files refining shallower
 * ones. The matcher for a directory is built once, when the scan enters it.
 */
export interface IgnoreRules {
  /** True when `name` (a child of this directory) is ignored. */
  ignores(name: string, isDir: boolean): boolean
  /** The rules for a child directory, with that directory's own files added. */
  enter(absDir: string, name: string): IgnoreRules
}

interface Layer {
  base: string // path of the rule file's directory, relative to the workspace root ('' = root)
  matcher: Ignore
}

export function rootIgnoreRules(root: string, { respectGitignore = false }: { respectGitignore?: boolean } = {}): IgnoreRules {
  const files = respectGitignore ? ['.gitignore', '.forkpointignore'] : ['.forkpointignore']
  const build = (layers: Layer[], rel: string): IgnoreRules => ({
    ignores(name, isDir) {
      const path = rel ? `${rel}/${name}` : name
      for (const layer of layers) {
        const sub = layer.base ? path.slice(layer.base.length + 1) : path
        if (layer.matcher.ignores(isDir ? `${sub}/` : sub)) return true
      }
      return false
    },
    enter(absDir, name) {
      const childRel = rel ? `${rel}/${name}` : name
      const own = loadLayer(join(absDir, name), childRel, files)
      return build(own ? [...layers, own] : layers, childRel)
    },
  })
  const rootLayer = loadLayer(root, '', files)
  return build(rootLayer ? [rootLayer] : [], '')
}

function loadLayer(absDir: string, base: string, files: string[]): Layer | null {
  let text = ''
  for (const file of files) {
    try {
      text += `${readFileSync(join(absDir, file), 'utf8')}\n`
    } catch {
      // no rule file here
    }
  }
  return text.trim() ? { base, matcher: ignore().add(text) } : null
}
