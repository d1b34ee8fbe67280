import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { fsPath, nameFromBytes, readdirNames, readlinkNameAsync } from '../../util/fsName.js'
import { isInside } from '../../util/isInside.js'
import { readCappedFile } from '../../util/readCappedFile.js'
import { isHeldBackGitPath } from '../checkout/heldBackGitPath.js'

const run = promisify(execFile)

const MAX_CONFIG_BYTES = 1024 * 1024
/** git's own limit on nested includes */
const MAX_INCLUDE_DEPTH = 10
const MAX_CONFIG_FILES = 64
/** A config file git does not answer for in this long is skipped (a FIFO put in place of one, a stalled mount). */
const GIT_CONFIG_TIMEOUT_MS = 30_000

/** Variables whose value is a command git runs (`section.name`, any subsection); `!` aliases too. */
const COMMAND_VARIABLES = new Set([
  ...['core.fsmonitor', 'core.sshcommand', 'core.editor', 'core.pager', 'core.askpass', 'core.gitproxy', 'core.alternaterefscommand'],
  ...['sequence.editor', 'diff.external', 'diff.textconv', 'diff.command', 'interactive.difffilter', 'uploadpack.packobjectshook'],
  ...['difftool.cmd', 'difftool.path', 'mergetool.cmd', 'mergetool.path', 'merge.driver', 'guitool.cmd', 'browser.cmd', 'browser.path'],
  ...['man.cmd', 'man.path', 'filter.clean', 'filter.smudge', 'filter.process', 'credential.helper', 'gpg.program'],
  ...['gpg.defaultkeycommand', 'remote.uploadpack', 'remote.receivepack', 'trailer.command', 'trailer.cmd', 'submodule.update'],
  ...['sendemail.tocmd', 'sendemail.cccmd', 'sendemail.headercmd', 'sendemail.smtpserver'],
])

/** A variable as `git config --list` names it: `section[.subsection].name`, section and name lower-cased. */
interface Variable {
  section: string
  name: string
  /** as a file name (`nameFromBytes`); null for a name without `=` */
  value: string | null
}

/**
 * The paths in `workspace` (relative to it) that the caller's next git command runs or reads configuration from, in
 * the repository holding the workspace and in those at `nested` (workspace-relative directories holding a `.git`):
 * `core.hooksPath` (and the directory holding husky's `_`), every `include.path` and `includeIf.*.path` (whatever its
 * condition), the scripts a command git runs names (`core.fsmonitor`, filters, drivers, `!` aliases, …), what a
 * hook that is a symbolic link points at, and the repository's own config and hooks where a link or `gitdir:` file
 * leads elsewhere in the work tree. Each as configured and through its links. What `isHeldBackGitPath` holds back by
 * name is left out. The configuration is the caller's, as their git reads it (system, global, the repository's),
 * parsed by git itself (`git config --file F --list`), so no variable reads otherwise than git reads it; where git is
 * not installed nothing runs it.
 */
export async function readGitRunPaths(workspace: string, { nested = [] }: { nested?: readonly string[] } = {}): Promise<string[]> {
  const root = await fs.realpath(workspace)
  const repositories = [await findRepository(root), ...(await Promise.all(nested.filter((dir) => dir !== '' && dir !== '.').map((dir) => repositoryAt(join(root, dir)))))]
  const candidates: string[] = []
  for (const repo of repositories) if (repo) candidates.push(...(await repositoryRunPaths(repo)))
  const inside = new Set<string>()
  for (const path of candidates) {
    for (const form of [path, await realForm(path)]) if (form !== null && form !== root && isInside(root, form)) inside.add(relative(root, form))
  }
  return [...inside].filter((path) => !isHeldBackGitPath(path, true)).sort()
}

interface Repository {
  /** the work tree's top */
  top: string
  /** the repository's own directory (a worktree's, under the main one's `worktrees/`) */
  gitDir: string
  /** where the shared config and hooks are (`commondir`), else `gitDir` */
  common: string
}

async function repositoryRunPaths(repo: Repository): Promise<string[]> {
  const own = [join(repo.common, 'config'), join(repo.common, 'hooks'), join(repo.gitDir, 'config.worktree'), join(repo.gitDir, 'commondir')]
  return [...own, ...(await linkedHooks(join(repo.common, 'hooks'))), ...(await configRunPaths(repo.top, configFiles(repo)))]
}

/** What the variables of `files` (and what they include) name, for a repository whose work tree's top is `top`. */
async function configRunPaths(top: string, files: string[]): Promise<string[]> {
  const paths: string[] = []
  for (const { file, variable } of await readConfigs(files)) {
    const { section, name, value } = variable
    if (value === null) continue
    if (section === 'core' && name === 'hookspath') {
      const hooks = resolve(top, expandHome(value))
      // husky's `_` runs the hooks in the directory above it
      paths.push(hooks, ...(basename(hooks) === '_' ? [dirname(hooks)] : []), ...(await linkedHooks(hooks)))
    } else if (isInclude(variable)) paths.push(resolve(dirname(file), expandHome(value)))
    else paths.push(...(await commandPaths(top, variable)))
  }
  return paths
}

const isInclude = ({ section, name }: Variable): boolean => name === 'path' && (section === 'include' || section === 'includeif')

/** The repository git finds from `dir`: the nearest `.git` directory, or `.git` file's `gitdir:`, at or above it. */
async function findRepository(dir: string): Promise<Repository | null> {
  for (let at = dir; ; at = dirname(at)) {
    const repo = await repositoryAt(at)
    if (repo) return repo
    if (dirname(at) === at) return null
  }
}

async function repositoryAt(top: string): Promise<Repository | null> {
  const dotGit = join(top, '.git')
  const st = await fs.stat(fsPath(dotGit)).catch(() => null)
  const pointer = st?.isFile() ? /^gitdir:\s*(.+?)\s*$/m.exec(readSmallText(dotGit) ?? '') : null
  const gitDir = st?.isDirectory() ? dotGit : pointer ? resolve(top, pointer[1]!) : null
  if (gitDir === null) return null
  const common = readSmallText(join(gitDir, 'commondir'))?.trim()
  return { top, gitDir, common: common ? resolve(gitDir, common) : gitDir }
}

/** The files git reads its configuration from, as the caller's git would (the environment is the caller's). */
function configFiles(repo: Repository): string[] {
  const env = process.env
  const files: string[] = []
  if (!env.GIT_CONFIG_NOSYSTEM) files.push(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig')
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL)
  else files.push(join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'git', 'config'), join(homedir(), '.gitconfig'))
  files.push(join(repo.common, 'config'), join(repo.gitDir, 'config.worktree'))
  return files
}

/** Every variable of `files` and what they include, each with the file it is in; a file git cannot read is skipped, as git would refuse it. */
async function readConfigs(files: string[]): Promise<{ file: string; variable: Variable }[]> {
  const read: { file: string; variable: Variable }[] = []
  let count = 0
  const visit = async (file: string, depth: number): Promise<void> => {
    if (depth > MAX_INCLUDE_DEPTH || ++count > MAX_CONFIG_FILES) return
    for (const variable of await gitConfigList(file)) {
      read.push({ file, variable })
      if (isInclude(variable) && variable.value !== null) await visit(resolve(dirname(file), expandHome(variable.value)), depth + 1)
    }
  }
  for (const file of files) await visit(file, 0)
  return read
}

/** One file's variables as git parses them, its includes not followed; none when it is not a regular file within the size cap. */
async function gitConfigList(file: string): Promise<Variable[]> {
  const st = await fs.stat(fsPath(file)).catch(() => null)
  if (!st?.isFile() || st.size > MAX_CONFIG_BYTES) return []
  try {
    const { stdout } = await run('git', ['config', '--file', file, '--list', '-z', '--no-includes'], {
      cwd: '/',
      encoding: 'buffer',
      maxBuffer: 4 * MAX_CONFIG_BYTES,
      timeout: GIT_CONFIG_TIMEOUT_MS,
      env: { PATH: process.env.PATH ?? '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    })
    return parseListing(stdout)
  } catch {
    return []
  }
}

/** `git config --list -z`: each variable its key, then a newline and its value unless it has none, then a NUL. */
function parseListing(listing: Buffer): Variable[] {
  const variables: Variable[] = []
  for (let at = 0; at < listing.length;) {
    const end = listing.indexOf(0, at)
    const record = listing.subarray(at, end === -1 ? listing.length : end)
    at = end === -1 ? listing.length : end + 1
    const newline = record.indexOf(0x0a)
    const key = (newline === -1 ? record : record.subarray(0, newline)).toString('utf8')
    const value = newline === -1 ? null : nameFromBytes(record.subarray(newline + 1))
    variables.push({ section: key.slice(0, key.indexOf('.')), name: key.slice(key.lastIndexOf('.') + 1), value })
  }
  return variables
}

/**
 * The scripts a command names, resolved from the work tree's top, where git runs it: each word holding a `/` that is
 * not a directory, and each other word that is a file there (`python3 tool.py`); options, placeholders (`%f`),
 * variables and booleans are no scripts, and an alias without `!` is a git command. Shell punctuation and quotes
 * separate words.
 */
async function commandPaths(top: string, { section, name, value }: Variable): Promise<string[]> {
  const command = value ?? ''
  const isUrlCommand = section === 'remote' && (name === 'url' || name === 'pushurl') && command.startsWith('ext::')
  if (!(COMMAND_VARIABLES.has(`${section}.${name}`) || (section === 'alias' && command.startsWith('!')) || isUrlCommand)) return []
  const words = command.replace(/^ext::/, '').split(/[\s;|&()<>{}`'"=!]+/)
  // a helper named without a path is git's `git credential-NAME`
  if (section === 'credential' && !command.startsWith('!') && !words.find((w) => w !== '')?.includes('/')) words.splice(0, words.findIndex((w) => w !== '') + 1)
  const scripts: string[] = []
  for (const word of words) {
    if (word === '' || /^[-%$]/.test(word) || BOOLEANS.test(word)) continue
    const path = resolve(top, expandHome(word))
    const st = await fs.stat(fsPath(path)).catch(() => null)
    if (word.includes('/') ? !st?.isDirectory() : st?.isFile()) scripts.push(path)
  }
  return scripts
}

const BOOLEANS = /^(?:true|false|yes|no|on|off|[01])$/i

/** What each hook in `hooks` that is a symbolic link points at. */
async function linkedHooks(hooks: string): Promise<string[]> {
  const names = await readdirNames(hooks).catch(() => [])
  const targets: string[] = []
  for (const name of names) {
    const target = await readlinkNameAsync(join(hooks, name)).catch(() => null)
    if (target !== null) targets.push(resolve(hooks, target))
  }
  return targets
}

/** `path` through its links: the deepest part of it that exists, resolved, with the rest as written. */
async function realForm(path: string): Promise<string | null> {
  const rest: string[] = []
  for (let at = path; dirname(at) !== at; at = dirname(at)) {
    const real = await fs.realpath(fsPath(at), { encoding: 'buffer' }).catch(() => null)
    if (real !== null) return join(nameFromBytes(real), ...rest)
    rest.unshift(basename(at))
  }
  return null
}

const expandHome = (path: string): string => (path.startsWith('~/') ? join(homedir(), path.slice(2)) : path)

function readSmallText(path: string): string | null {
  const refuse = () => new Error('skipped')
  try {
    return readCappedFile(fsPath(path), MAX_CONFIG_BYTES, { missing: refuse, notRegular: refuse, tooLarge: refuse }).toString('utf8')
  } catch {
    return null
  }
}

/**
 * The directories among `paths` and those above them (workspace-relative, the top left out: `readGitRunPaths`
 * finds that one) that hold a `.git` in `workspace`: the nested repositories whose configuration can run one of them.
 */
export async function repositoriesAbove(workspace: string, paths: readonly string[]): Promise<string[]> {
  const dirs = new Set<string>()
  for (const path of paths) for (let at = path; at !== '.' && at !== ''; at = dirname(at)) dirs.add(at)
  const found: string[] = []
  for (const dir of dirs) if (await fs.lstat(fsPath(join(workspace, dir, '.git'))).catch(() => null)) found.push(dir)
  return found.sort()
}
