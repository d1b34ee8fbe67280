import { promises as fs } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { forEachLimit } from '../../util/forEachLimit.js'
import { bytesOfName, fsPath, readdirNames, readlinkNameAsync } from '../../util/fsName.js'
import { isInside } from '../../util/isInside.js'
import { readCappedFile } from '../../util/readCappedFile.js'
import { PATH_MAX } from '../../util/longPath.js'
import { isHeldBackGitPath } from '../checkout/heldBackGitPath.js'
import { GitConfigReader, type GitVariable, callerConfigFiles, environmentVariables, expandHome, isInclude } from './gitConfigFiles.js'

/** Variables whose value is a command git runs of itself (`section.name`, any subsection), by a command other than the one named. */
const COMMAND_VARIABLES = new Set([
  ...['core.fsmonitor', 'core.sshcommand', 'core.editor', 'core.pager', 'core.askpass', 'core.gitproxy', 'core.alternaterefscommand'],
  ...['sequence.editor', 'diff.external', 'diff.textconv', 'diff.command', 'interactive.difffilter', 'uploadpack.packobjectshook'],
  ...['difftool.cmd', 'difftool.path', 'mergetool.cmd', 'mergetool.path', 'merge.driver', 'guitool.cmd', 'browser.cmd', 'browser.path'],
  ...['man.cmd', 'man.path', 'filter.clean', 'filter.smudge', 'filter.process', 'credential.helper', 'gpg.program', 'hook.command'],
  ...['gpg.defaultkeycommand', 'remote.uploadpack', 'remote.receivepack', 'trailer.command', 'trailer.cmd', 'submodule.update'],
  ...['sendemail.tocmd', 'sendemail.cccmd', 'sendemail.headercmd', 'sendemail.smtpserver', 'sendemail.sendmailcmd', 'tar.command'],
  'imap.tunnel',
])

/** The hooks git runs by name from its hooks directory (githooks(5)). */
const HOOK_NAMES = [
  ...['applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg'],
  ...['post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update', 'proc-receive', 'post-receive'],
  ...['post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate'],
  ...['fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist', 'p4-post-changelist', 'p4-pre-submit', 'post-index-change'],
]

/** At most this many symbolic links are followed resolving one path, as the kernel's own limit. */
const MAX_LINKS = 40

/**
 * The paths in `workspace` (relative to it) that the caller's next git command runs or reads configuration from, in
 * the repository holding the workspace and in those at `nested` (workspace-relative directories holding a `.git`):
 * the config files themselves (a global one kept in a dotfiles repository too) and every file `include.path` and
 * `includeIf.*.path` name (whatever the condition); `core.hooksPath` (the whole directory holding husky's `_`, each
 * hook name where it is the work tree's top) and `init.templateDir`; the scripts a command git runs of itself names
 * (`commandScripts`); what a hook that is a symbolic link points at; and the repository's own config and hooks where
 * a link or `gitdir:` file leads elsewhere in the work tree. Each as configured and through its links, dangling ones
 * too. What `isHeldBackGitPath` holds back by name is left out. The configuration is the caller's, as their git
 * reads it (the environment's, system, global, the repository's), each file parsed by git itself.
 * @throws {UsageError} a repository is there and git cannot be run
 * @throws {CorruptDataError} a config file git would read and forkpoint will not (`GitConfigReader`)
 */
export async function readGitRunPaths(workspace: string, { nested = [], made = [] }: { nested?: readonly string[]; made?: readonly string[] } = {}): Promise<string[]> {
  const root = await fs.realpath(workspace)
  // git cannot run in a repository whose config lies at a path of PATH_MAX bytes or more: no path reaches it
  const inner = (dirs: readonly string[]) => dirs.filter((dir) => dir !== '' && dir !== '.' && bytesOfName(join(root, dir, '.git/config')).length < PATH_MAX)
  const found = await Promise.all([findRepository(root), ...inner(nested).map((dir) => repositoryAt(join(root, dir)))])
  const repositories = [...found.filter((repo): repo is Repository => repo !== null), ...inner(made).map((dir) => madeRepository(join(root, dir)))]
  const reader = new GitConfigReader()
  const candidates: string[] = []
  await forEachLimit(repositories, 4, async (repo) => void candidates.push(...(await repositoryRunPaths(repo, reader))))
  const inside = new Set<string>()
  for (const path of candidates) {
    for (const form of [path, await resolveLinks(path)]) if (form !== root && isInside(root, form)) inside.add(relative(root, form))
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
  /** whether its own config is the caller's: not for one sandboxed work made, whose own files are held back anyway */
  trusted: boolean
}

/** A repository sandboxed work made at `top`: the caller's system and global configuration apply to it too. */
const madeRepository = (top: string): Repository => ({ top, gitDir: join(top, '.git'), common: join(top, '.git'), trusted: false })

async function repositoryRunPaths(repo: Repository, reader: GitConfigReader): Promise<string[]> {
  const caller = callerConfigFiles()
  const own = [join(repo.common, 'config'), join(repo.gitDir, 'config.worktree')]
  const paths = [...caller, ...own, join(repo.common, 'hooks'), join(repo.gitDir, 'commondir')]
  if (repo.trusted) paths.push(...(await linkedHooks(join(repo.common, 'hooks'))))
  const read = await reader.read(repo.trusted ? [...caller, ...own] : caller)
  for (const variable of [...environmentVariables(), ...read]) paths.push(...(await variableRunPaths(repo.top, variable)))
  return paths
}

/** What one variable makes git run or read, for a repository whose work tree's top is `top`. */
async function variableRunPaths(top: string, variable: GitVariable): Promise<string[]> {
  const { section, name, value, file } = variable
  if (value === null) return []
  if (isInclude(variable)) return [resolve(file === null ? top : dirname(file), expandHome(value))]
  if (section === 'init' && name === 'templatedir') return [resolve(top, expandHome(value))]
  if (section === 'core' && name === 'hookspath') {
    const hooks = resolve(top, expandHome(value))
    if (hooks === top) return HOOK_NAMES.map((hook) => join(top, hook))
    // husky's `_` runs the hooks in the directory above it
    return [hooks, ...(hooks.endsWith(`${sep}_`) ? [dirname(hooks)] : []), ...(await linkedHooks(hooks))]
  }
  return commandScripts(top, variable)
}

/**
 * The scripts a command git runs of itself names, resolved from the work tree's top where git runs it: each word
 * holding a `/` that is not a directory there, a leading `$VAR/` or `$(…)/` dropped. A word without a `/` is a
 * program git finds on PATH, and an alias is a command the caller runs by name, as they run `make`: neither names a
 * file here. Shell punctuation and quotes separate words.
 */
async function commandScripts(top: string, { section, name, value }: GitVariable): Promise<string[]> {
  const command = value ?? ''
  const isUrlCommand = section === 'remote' && (name === 'url' || name === 'pushurl') && command.startsWith('ext::')
  if (!COMMAND_VARIABLES.has(`${section}.${name}`) && section !== 'pager' && !isUrlCommand) return []
  const scripts: string[] = []
  for (const word of command.split(/[\s;|&()<>{}`'"=!]+/)) {
    const path = word.replace(/^ext::/, '').replace(/^\$[^/]*\//, '')
    if (!path.includes('/') || path.startsWith('-')) continue
    const at = resolve(top, expandHome(path))
    if (!(await fs.stat(fsPath(at)).catch(() => null))?.isDirectory()) scripts.push(at)
  }
  return scripts
}

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
  return { top, gitDir, common: common ? resolve(gitDir, common) : gitDir, trusted: true }
}

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

/**
 * `path` with every symbolic link on the way replaced by what it points at, a dangling one too, as git would follow
 * it once the sandbox made its target (`realpath -m`); at most 40 links, then as far as it got.
 */
async function resolveLinks(path: string): Promise<string> {
  let parts = path.split('/').filter((part) => part !== '')
  let done = '/'
  for (let links = 0; parts.length > 0;) {
    const [part, ...rest] = parts as [string, ...string[]]
    const at = part === '..' ? dirname(done) : join(done, part)
    const target = part === '..' || part === '.' ? null : await readlinkNameAsync(at).catch(() => null)
    if (target === null || ++links > MAX_LINKS) {
      done = part === '.' ? done : at
      parts = rest
    } else {
      if (target.startsWith('/')) done = '/'
      parts = [...target.split('/').filter((p) => p !== ''), ...rest]
    }
  }
  return done
}

function readSmallText(path: string): string | null {
  const refuse = () => new Error('skipped')
  try {
    return readCappedFile(fsPath(path), 1024 * 1024, { missing: refuse, notRegular: refuse, tooLarge: refuse }).toString('utf8')
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
  for (const dir of dirs) if (await holdsGit(workspace, dir)) found.push(dir)
  return found.sort()
}

/** The directories where `paths` (a branch's changes) put a `.git` that `workspace` lacks: the repositories the branch made. */
export async function repositoriesMade(workspace: string, paths: readonly string[]): Promise<string[]> {
  const dirs = new Set<string>()
  for (const path of paths) {
    const names = path.split('/')
    const git = names.indexOf('.git')
    if (git !== -1) dirs.add(names.slice(0, git).join('/'))
  }
  const made: string[] = []
  for (const dir of dirs) if (!(await holdsGit(workspace, dir))) made.push(dir)
  return made.sort()
}

const holdsGit = (workspace: string, dir: string): Promise<boolean> =>
  fs.lstat(fsPath(join(workspace, dir, '.git'))).then(
    () => true,
    () => false,
  )
