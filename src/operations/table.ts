import { abort } from './branches/abort.js'
import { branch, branchList } from './branches/branch.js'
import { commit, commitAbort, commitContinue } from './branches/commit.js'
import { run } from './branches/run.js'
import { effects, effectsRecover } from './images/effects.js'
import { fork } from './images/fork.js'
import { merge, mergeAbort, mergeContinue } from './images/merge.js'
import { show } from './images/show.js'
import type { AnyOperation } from './operation.js'
import { WEB_VIEW_QUERIES } from './queries/webViewQueries.js'
import { pull } from './remotes/pull.js'
import { push } from './remotes/push.js'
import { record } from './runs/record.js'
import { replay } from './runs/replay.js'
import { runs, runsExport, runsRm, runsShow } from './runs/runs.js'
import { checkout } from './workspace/checkout.js'
import { diff } from './workspace/diff.js'
import { log } from './workspace/log.js'
import { explore } from './patterns/explore.js'
import { speculate } from './patterns/speculate.js'
import { scan } from './workspace/scan.js'
import { snapshot } from './workspace/snapshot.js'
import { status } from './workspace/status.js'
import { gc } from './store/gc.js'
import { tag, tagDelete, tagList } from './store/tag.js'
import { verify } from './store/verify.js'

/**
 * Every operation, each declared once: the command line, the HTTP service, its OpenAPI
 * document and the MCP server are made from this table (`query` ones are the web view's
 * reads, `GET /v1/view/<name>`).
 */
export const OPERATIONS: readonly AnyOperation[] = [
  snapshot,
  status,
  diff,
  log,
  checkout,
  branch,
  branchList,
  commit,
  commitContinue,
  commitAbort,
  abort,
  run,
  record,
  fork,
  explore,
  speculate,
  merge,
  mergeContinue,
  mergeAbort,
  show,
  runs,
  runsShow,
  runsRm,
  runsExport,
  replay,
  scan,
  push,
  pull,
  tag,
  tagList,
  tagDelete,
  verify,
  gc,
  effects,
  effectsRecover,
  ...WEB_VIEW_QUERIES,
]

/**
 * The commands of the command line that are no operation of the table, each with why: the
 * surfaces themselves, and commands that work the caller's terminal, files or processor. A
 * command is made from the table or listed here.
 */
export const NOT_OPERATIONS: Readonly<Record<string, string>> = {
  serve: 'the HTTP service: a surface the table makes, not an operation on one',
  mcp: 'the MCP server: a surface the table makes, not an operation on one',
  ui: "the web view: the service's read-only surface, started for a browser",
  worker: "a process that runs other machines' signed jobs from a Redis queue: a surface of its own, with its own checks",
  init: 'makes the store a service and an MCP server are started on: they have one already',
  demo: 'a walkthrough in a temporary directory, for a person at a terminal',
  shell: "an interactive shell in a branch on the caller's terminal (a pty forkpoint owns): nothing a request can hold",
  'checkout-agent': "writes an image's layers into a new directory the caller names, outside the workspace (as checkout's local `into`)",
  clone: 'makes a new directory and a store of its own there: a service works on the store it was started on',
  pack: 'writes an image as one file where the caller says; push is the operation that sends an image elsewhere',
  unpack: "reads a pack file of the caller's into the store; pull is the operation that fetches an image",
  ci: "gates CI: runs the caller's entrypoint and reads and writes golden files in the caller's repository",
  claude: "Claude Code's hooks: installs them into the workspace's .claude/settings.json and is the hook Claude Code runs",
  llm: "loads a model from the caller's disk and runs it on the caller's CPU (node-llama-cpp)",
  machine: 'microVM sandboxes: QEMU processes that outlive the call, their consoles and exec, a group of subcommands',
}

/** The operation a service call names (`POST /v1/<name>`), or undefined. */
export function findOperation(table: readonly AnyOperation[], name: string, { query = false } = {}): AnyOperation | undefined {
  return table.find((op) => op.name === name && (op.query === true) === query)
}
