import { promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { isInside } from '../../util/isInside.js'
import { readCappedFile } from '../../util/readCappedFile.js'
import { type GitConfigEntry, parseGitConfig } from './gitConfig.js'

const MAX_CONFIG_BYTES = 1024 * 1024
/** git's own limit on nested includes */
const MAX_INCLUDE_DEPTH = 10
const MAX_CONFIG_FILES = 64

/** Variables whose value is a command git runs (`section.name`, any subsection); `alias` and `pager` whole. */
const COMMAND_VARIABLES = new Set([
  'core.fsmonitor',
  'core.sshcommand',
  'core.editor',
  'core.pager',
  'core.askpass',
  'core.gitproxy',
  'sequence.editor',
  'diff.external',
  'diff.textconv',
  'diff.command',
  'difftool.cmd',
  'mergetool.cmd',
  'filter.clean',
  'filter.smudge',
  'filter.process',
  'merge.driver',
  'credential.helper',
  'gpg.program',
  'interactive.difffilter',
  'uploadpack.packobjectshook',
])
const COMMAND_SECTIONS = new Set(['alias', 'pager'])

/**
 * The paths in `workspace` (relative to it) that git's configuration makes it run or read configuration from, on the
 * caller's next git command in the repository holding the workspace: `core.hooksPath`, every `include.path` and
 * `includeIf.*.path` (whatever its condition), each word that may name a file in a command git runs
 * (`core.fsmonitor`, filters, diff and merge drivers, aliases, …), and what a hook that is a symbolic link names. Each as configured
 * and, where it exists, as its links resolve. The configuration read is the caller's, as their git reads it: the
 * system's, the global one and the repository's (a worktree's common one too), with their includes.
 */
export async function readGitRunPaths(workspace: string): Promise<string[]> {
  const root = await fs.realpath(workspace)
  const repo = await findRepository(root)
  const files = configFiles(repo)
  const entries = await readConfigs(files)
  const top = repo?.top ?? root
  const candidates: string[] = []
  for (const { file, entry } of entries) {
    if (entry.value === null) continue
    const key = `${entry.section}.${entry.name}`
    if (key === 'core.hookspath') candidates.push(resolve(top, expandHome(entry.value)))
    else if (entry.name === 'path' && (entry.section === 'include' || entry.section === 'includeif')) candidates.push(resolve(dirname(file), expandHome(entry.value)))
    else if (COMMAND_VARIABLES.has(key) || COMMAND_SECTIONS.has(entry.section)) candidates.push(...commandPaths(top, entry.value))
  }
  if (repo) candidates.push(...(await linkedHooks(join(repo.common, 'hooks'))))
  const inside = new Set<string>()
  for (const path of candidates) {
    for (const form of [path, await realOrNull(path)]) if (form !== null && isInside(root, form) && form !== root) inside.add(relative(root, form))
  }
  return [...inside].sort()
}

interface Repository {
  /** the work tree's top */
  top: string
  /** the repository's own directory (a worktree's, under the main one's `worktrees/`) */
  gitDir: string
  /** where the shared config and hooks are (`commondir`), else `gitDir` */
  common: string
}

/** The repository git finds from `dir`: the nearest `.git` directory, or `.git` file's `gitdir:`, at or above it. */
async function findRepository(dir: string): Promise<Repository | null> {
  for (let at = dir; ; at = dirname(at)) {
    const gitDir = await gitDirAt(at)
    if (gitDir) {
      const common = readSmallText(join(gitDir, 'commondir'))?.trim()
      return { top: at, gitDir, common: common ? resolve(gitDir, common) : gitDir }
    }
    if (dirname(at) === at) return null
  }
}

async function gitDirAt(dir: string): Promise<string | null> {
  const dotGit = join(dir, '.git')
  const st = await fs.stat(dotGit).catch(() => null)
  if (st?.isDirectory()) return dotGit
  const pointer = st?.isFile() ? /^gitdir:\s*(.+?)\s*$/m.exec(readSmallText(dotGit) ?? '') : null
  return pointer ? resolve(dir, pointer[1]!) : null
}

/** The files git reads its configuration from, as the caller's git would (the environment is the caller's). */
function configFiles(repo: Repository | null): string[] {
  const env = process.env
  const files: string[] = []
  if (!env.GIT_CONFIG_NOSYSTEM) files.push(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig')
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL)
  else files.push(join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'git', 'config'), join(homedir(), '.gitconfig'))
  if (repo) files.push(join(repo.common, 'config'), join(repo.gitDir, 'config.worktree'))
  return files
}

/** Every variable of `files` and what they include, each with the file it is in; a file that cannot be read is skipped. */
async function readConfigs(files: string[]): Promise<{ file: string; entry: GitConfigEntry }[]> {
  const read: { file: string; entry: GitConfigEntry }[] = []
  let count = 0
  const visit = async (file: string, depth: number): Promise<void> => {
    if (depth > MAX_INCLUDE_DEPTH || ++count > MAX_CONFIG_FILES) return
    const real = await realOrNull(file)
    const text = real === null ? null : readSmallText(real, MAX_CONFIG_BYTES)
    if (text === null) return
    for (const entry of parseGitConfig(text)) {
      read.push({ file, entry })
      if (entry.name === 'path' && entry.value !== null && (entry.section === 'include' || entry.section === 'includeif')) {
        await visit(resolve(dirname(file), expandHome(entry.value)), depth + 1)
      }
    }
  }
  for (const file of files) await visit(file, 0)
  return read
}

/**
 * The words of a command that may name a file, resolved from the work tree's top, where git runs them: every word
 * but an option, a placeholder (`%f`), a variable and a boolean (`core.fsmonitor = true`). A word without a `/` counts
 * too: `python3 tool.py` reads `tool.py` from the work tree. Shell punctuation and quotes separate words.
 */
function commandPaths(top: string, command: string): string[] {
  return command
    .split(/[\s;|&()<>{}`'"=!]+/)
    .filter((word) => word !== '' && !/^[-%$]/.test(word) && !BOOLEANS.test(word))
    .map((word) => resolve(top, expandHome(word)))
}

const BOOLEANS = /^(?:true|false|yes|no|on|off|[01])$/i

/** What each hook that is a symbolic link names. */
async function linkedHooks(hooks: string): Promise<string[]> {
  const names = await fs.readdir(hooks).catch(() => [])
  const targets: string[] = []
  for (const name of names) {
    const target = await fs.readlink(join(hooks, name)).catch(() => null)
    if (target !== null) targets.push(resolve(hooks, target))
  }
  return targets
}

const expandHome = (path: string): string => (path.startsWith('~/') ? join(homedir(), path.slice(2)) : path)

const realOrNull = (path: string): Promise<string | null> => fs.realpath(path).catch(() => null)

function readSmallText(path: string, maxBytes = 4096): string | null {
  const refuse = () => new Error('skipped')
  try {
    return readCappedFile(path, maxBytes, { missing: refuse, notRegular: refuse, tooLarge: refuse }).toString('utf8')
  } catch {
    return null
  }
}
