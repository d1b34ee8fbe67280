import { promises as fs, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { UsageError } from '../../errors/index.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { shellQuote } from '../../trace/core/shellQuote.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../../util/jsonDepth.js'
import { PACKAGE_ROOT } from '../../util/ownPackage.js'
import { readCappedFile } from '../../util/readCappedFile.js'
import { HOOKED_EVENTS, endsRun } from './hookEvent.js'

export interface ClaudeHooksArgs extends StoreLocator {
  /** The command the hooks run (default: this package's `bin/forkpoint claude hook`, by absolute path). */
  command?: string
}

export interface ClaudeHooksResult {
  /** The settings file: `<workspace>/.claude/settings.json`. */
  settings: string
  /** False when the file already said exactly this. */
  changed: boolean
}

type HookGroup = { matcher?: string; hooks: Array<{ type: string; command?: string }> }
type Settings = { hooks?: Record<string, HookGroup[]>; [other: string]: unknown }

/**
 * Point the workspace's Claude Code hooks at forkpoint: PreToolUse and PostToolUse (every
 * tool) and Stop run `forkpoint claude hook`. Everything else in the file, other hooks
 * included, stays as it was; installing again replaces forkpoint's own hooks, never adds twice.
 * @throws {UsageError} a settings file that is not a JSON object (nothing is written)
 */
export async function installClaudeHooks(args: ClaudeHooksArgs = {}): Promise<ClaudeHooksResult> {
  const command = args.command ?? defaultHookCommand()
  return editSettings(args, (hooks) => {
    for (const event of HOOKED_EVENTS) {
      const group: HookGroup = { ...(endsRun(event) ? {} : { matcher: '*' }), hooks: [{ type: 'command', command }] }
      hooks[event] = [...withoutOurs(hooks[event] ?? []), group]
    }
  })
}

/** Take forkpoint's hooks out of the workspace's Claude Code settings, leaving the rest. */
export async function uninstallClaudeHooks(args: StoreLocator = {}): Promise<ClaudeHooksResult> {
  return editSettings(args, (hooks) => {
    for (const event of Object.keys(hooks)) {
      const kept = withoutOurs(hooks[event]!)
      if (kept.length > 0) hooks[event] = kept
      else delete hooks[event]
    }
  })
}

async function editSettings(locator: StoreLocator, edit: (hooks: Record<string, HookGroup[]>) => void): Promise<ClaudeHooksResult> {
  const { workspace } = await openStore(locator)
  const path = join(workspace, '.claude', 'settings.json')
  // a link would be replaced by a file (its target's secrets copied into the workspace, its mode lost), or lead the write out of the workspace
  for (const link of [dirname(path), path]) {
    if ((await fs.lstat(link).catch(() => null))?.isSymbolicLink())
      throw new UsageError(`${link} is a symlink; forkpoint edits only a settings file of the workspace's own: nothing was changed`, { path: link })
  }
  const mode = (await fs.stat(path).catch(() => null))?.mode
  const before = readSettingsText(path)
  const settings = parseSettings(before, path)
  const hooks = { ...settings.hooks }
  edit(hooks)
  const next: Settings = { ...settings, hooks }
  if (Object.keys(hooks).length === 0) delete next.hooks
  const text = `${JSON.stringify(next, null, 2)}\n`
  if (text === before) return { settings: path, changed: false }
  await fs.mkdir(dirname(path), { recursive: true })
  await atomicWrite(path, text)
  if (mode !== undefined) await fs.chmod(path, mode & 0o777)
  return { settings: path, changed: true }
}

/** The largest settings file `claude install` edits: a cloned repository chooses its `.claude/settings.json`. */
const MAX_SETTINGS_BYTES = 4 * 1024 * 1024

/** The settings file's text, or null when there is none; UsageError for anything but a regular file of at most `MAX_SETTINGS_BYTES`. */
function readSettingsText(path: string): string | null {
  const refused = (why: string) => new UsageError(`${path} ${why}; fix or move it, then install again: nothing was changed`, { path })
  const st = statSync(path, { throwIfNoEntry: false })
  if (st === undefined) return null
  if (!st.isFile()) throw refused('is not a regular file')
  return readCappedFile(path, MAX_SETTINGS_BYTES, {
    missing: () => refused('vanished while it was read'),
    notRegular: () => refused('is not a regular file'),
    tooLarge: (size) => refused(`is ${size} bytes, more than the ${MAX_SETTINGS_BYTES} a settings file may hold`),
  }).toString('utf8')
}

function parseSettings(text: string | null, path: string): Settings {
  if (text === null) return {}
  if (jsonTextTooDeep(text)) throw new UsageError(`${path} nests deeper than ${MAX_JSON_DEPTH} levels; fix or move it, then install again: nothing was changed`, { path })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${path} is not JSON (${(err as Error).message}); fix or move it, then install again: nothing was changed`, { path })
  }
  const hooks = (value as Settings | null)?.hooks
  const isGroup = (g: unknown) => typeof g === 'object' && g !== null && !Array.isArray(g) && Array.isArray((g as HookGroup).hooks)
  const ok =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (hooks === undefined ||
      (typeof hooks === 'object' && hooks !== null && !Array.isArray(hooks) && Object.values(hooks).every((groups) => Array.isArray(groups) && groups.every(isGroup))))
  if (!ok) throw new UsageError(`${path} must be a JSON object whose "hooks" maps events to lists of {matcher, hooks: [...]}; nothing was changed`, { path })
  return value as Settings
}

/** A group with forkpoint's hook taken out (and dropped when nothing is left in it). */
function withoutOurs(groups: HookGroup[]): HookGroup[] {
  return groups
    .map((group) => ({ ...group, hooks: (group.hooks ?? []).filter((hook) => !isOurs(hook.command)) }))
    .filter((group, i) => group.hooks.length > 0 || (groups[i]!.hooks ?? []).length === 0)
}

function isOurs(command: string | undefined): boolean {
  return typeof command === 'string' && /forkpoint'? claude hook$/.test(command)
}

/** `bin/forkpoint claude hook` of this package, by absolute path: hooks run without forkpoint on PATH. */
function defaultHookCommand(): string {
  return `${shellQuote([join(PACKAGE_ROOT, 'bin', 'forkpoint')])} claude hook`
}
