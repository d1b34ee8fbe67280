import { join } from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { CorruptDataError } from '../../errors/index.js'
import { fsPath } from '../../util/fsName.js'
import { readCappedFile } from '../../util/readCappedFile.js'

/**
 * gitignore semantics per directory: each directory's `.forkpointignore` (and
 * `.gitignore` when asked) applies to paths below it, deeper files refining shallower
 * ones. The matcher for a directory is built once, when the scan enters it.
 */
export interface IgnoreRules {
  /** True when `name` (a child of this directory) is ignored. */
  ignores(name: string, isDir: boolean): boolean
  /**
   * The rules inside a directory (absolute path, path relative to the root) with its own
   * rule files added; `has` says which files the directory holds (from its listing, so a
   * directory without rule files costs no failed read).
   */
  enter(absDir: string, relDir: string, has: (file: string) => boolean): IgnoreRules
}

interface Layer {
  base: string // path of the rule file's directory, relative to the workspace root ('' = root)
  matcher: Ignore
}

/** The files that hold ignore rules (`.gitignore` only with `respectGitignore`). */
export const IGNORE_FILES = ['.gitignore', '.forkpointignore'] as const

/**
 * The rules in force above the workspace root: none yet; `enter` the root first.
 * `onRead` hears each directory's rule text as it is read.
 */
export function ignoreRules({ respectGitignore = false, onRead }: { respectGitignore?: boolean; onRead?: (relDir: string, text: string) => void } = {}): IgnoreRules {
  const files = IGNORE_FILES.filter((f) => respectGitignore || f !== '.gitignore')
  const build = (layers: Layer[], rel: string): IgnoreRules => ({
    ignores(name, isDir) {
      if (layers.length === 0) return false
      const path = rel ? `${rel}/${name}` : name
      // The deepest file with a matching rule decides, so a deeper `!pattern` re-includes.
      for (let i = layers.length - 1; i >= 0; i--) {
        const layer = layers[i]!
        const sub = layer.base ? path.slice(layer.base.length + 1) : path
        const verdict = layer.matcher.test(isDir ? `${sub}/` : sub)
        if (verdict.ignored || verdict.unignored) return verdict.ignored
      }
      return false
    },
    enter(absDir, relDir, has) {
      const present = files.filter(has)
      if (present.length === 0) return relDir === rel ? this : build(layers, relDir)
      const text = present.map((f) => readIgnoreFile(join(absDir, f))).join('\n')
      onRead?.(relDir, text)
      return build(text.trim() ? [...layers, { base: relDir, matcher: ignore().add(text) }] : layers, relDir)
    },
  })
  return build([], '')
}

/** The largest ignore file read: git's own are kilobytes, and a cloned repository chooses its own. */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024

/** An ignore file's text; CorruptDataError (exit 5) past `MAX_IGNORE_FILE_BYTES`, or when it is no regular file or gone since the listing. */
function readIgnoreFile(path: string): string {
  const refused = (why: string) => new CorruptDataError(`${path} ${why}: refusing to read it as ignore rules`, { path })
  return readCappedFile(fsPath(path), MAX_IGNORE_FILE_BYTES, {
    missing: () => refused('vanished while it was read'),
    notRegular: () => refused('is not a regular file'),
    tooLarge: (size) => refused(`is ${size} bytes, more than the ${MAX_IGNORE_FILE_BYTES} an ignore file may hold`),
  }).toString('utf8')
}
