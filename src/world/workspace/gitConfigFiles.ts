import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { CorruptDataError, UsageError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
import { fsPath, nameFromBytes } from '../../util/fsName.js'

const run = promisify(execFile)

/** Larger config files are refused rather than skipped: git reads them, so skipping one would miss what it runs. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024
/** git's own limit on nested includes */
const MAX_INCLUDE_DEPTH = 10
const MAX_CONFIG_FILES = 256
const GIT_CONFIG_TIMEOUT_MS = 60_000

/** A variable as `git config --list` names it: `section[.subsection].name`, section and name lower-cased. */
export interface GitVariable {
  section: string
  name: string
  /** as a file name (`nameFromBytes`); null for a name without `=` */
  value: string | null
  /** the file it is in; null for one the environment gives (`GIT_CONFIG_COUNT`) */
  file: string | null
}

export const isInclude = ({ section, name }: GitVariable): boolean => name === 'path' && (section === 'include' || section === 'includeif')

/**
 * Reads git config files as git parses them (`git config --file F --list -z --no-includes`, the includes followed
 * here whatever their condition), each file once however often it is included.
 */
export class GitConfigReader {
  readonly #parsed = new Map<string, Promise<GitVariable[]>>()

  /**
   * Every variable of `files` and of what they include, ten deep at most, each file once.
   * @throws {UsageError} git cannot be run: nothing could say what the configuration makes it run
   * @throws {CorruptDataError} a file over 16 MiB, more than 256 files, or one git did not parse in a minute
   */
  async read(files: readonly string[]): Promise<GitVariable[]> {
    const variables: GitVariable[] = []
    // a file included again holds the same variables, its includes resolved from the same place
    const visited = new Set<string>()
    const visit = async (file: string, depth: number): Promise<void> => {
      if (depth > MAX_INCLUDE_DEPTH || visited.has(file)) return
      visited.add(file)
      for (const variable of await this.#parse(file)) {
        variables.push(variable)
        if (isInclude(variable) && variable.value !== null) await visit(resolve(dirname(file), expandHome(variable.value)), depth + 1)
      }
    }
    for (const file of files) await visit(file, 0)
    return variables
  }

  #parse(file: string): Promise<GitVariable[]> {
    let parsed = this.#parsed.get(file)
    if (!parsed) {
      if (this.#parsed.size >= MAX_CONFIG_FILES) throw new CorruptDataError(`more than ${MAX_CONFIG_FILES} git config files are included: ${file}`, { path: file })
      parsed = gitConfigList(file)
      this.#parsed.set(file, parsed)
    }
    return parsed
  }
}

/** The files outside any repository git reads its configuration from, as the caller's git would (the environment is the caller's). */
export function callerConfigFiles(): string[] {
  const env = process.env
  const files: string[] = []
  if (!env.GIT_CONFIG_NOSYSTEM) files.push(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig')
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL)
  else files.push(join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'git', 'config'), join(homedir(), '.gitconfig'))
  return files
}

/** The variables the caller's environment gives every git command (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`). */
export function environmentVariables(): GitVariable[] {
  const env = process.env
  const count = Math.min(Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10) || 0, 1000)
  const variables: GitVariable[] = []
  for (let i = 0; i < count; i++) {
    const key = env[`GIT_CONFIG_KEY_${i}`]?.toLowerCase()
    if (key?.includes('.'))
      variables.push({ section: key.slice(0, key.indexOf('.')), name: key.slice(key.lastIndexOf('.') + 1), value: env[`GIT_CONFIG_VALUE_${i}`] ?? null, file: null })
  }
  return variables
}

/** One file's variables as git parses them, its includes not followed; none when there is no regular file (git reads none either). */
async function gitConfigList(file: string): Promise<GitVariable[]> {
  const st = await fs.stat(fsPath(file)).catch(() => null)
  if (!st?.isFile()) return []
  if (st.size > MAX_CONFIG_BYTES) throw new CorruptDataError(`the git config file ${file} is over ${MAX_CONFIG_BYTES} bytes`, { path: file })
  try {
    const { stdout } = await run('git', ['config', '--file', file, '--list', '-z', '--no-includes'], {
      cwd: '/',
      encoding: 'buffer',
      maxBuffer: 4 * MAX_CONFIG_BYTES,
      timeout: GIT_CONFIG_TIMEOUT_MS,
      env: { PATH: process.env.PATH ?? '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    })
    return parseListing(stdout, file)
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') throw new UsageError('git is not on PATH: forkpoint asks it what the repository’s git configuration runs (install git, or put it on PATH)')
    if ((err as { killed?: boolean }).killed) throw new CorruptDataError(`git did not read the config file ${file} within a minute`, { path: file })
    return [] // git refuses the file: every git command fails on it, so it runs nothing
  }
}

/** `git config --list -z`: each variable its key, then a newline and its value unless it has none, then a NUL. */
function parseListing(listing: Buffer, file: string): GitVariable[] {
  const variables: GitVariable[] = []
  for (let at = 0; at < listing.length;) {
    const end = listing.indexOf(0, at)
    const record = listing.subarray(at, end === -1 ? listing.length : end)
    at = end === -1 ? listing.length : end + 1
    const newline = record.indexOf(0x0a)
    const key = (newline === -1 ? record : record.subarray(0, newline)).toString('utf8')
    const value = newline === -1 ? null : nameFromBytes(record.subarray(newline + 1))
    variables.push({ section: key.slice(0, key.indexOf('.')), name: key.slice(key.lastIndexOf('.') + 1), value, file })
  }
  return variables
}

export const expandHome = (path: string): string => (path.startsWith('~/') ? join(homedir(), path.slice(2)) : path)
