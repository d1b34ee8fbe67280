import { abort } from './branches/abort.js'
import { branch } from './branches/branch.js'
import { commit, commitAbort, commitContinue } from './branches/commit.js'
import { run } from './branches/run.js'
import { fork } from './images/fork.js'
import { merge, mergeAbort, mergeContinue } from './images/merge.js'
import { show } from './images/show.js'
import type { AnyOperation } from './operation.js'
import { WEB_VIEW_QUERIES } from './queries/webViewQueries.js'
import { pull } from './remotes/pull.js'
import { push } from './remotes/push.js'
import { replay } from './runs/replay.js'
import { runs } from './runs/runs.js'
import { checkout } from './workspace/checkout.js'
import { diff } from './workspace/diff.js'
import { log } from './workspace/log.js'
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
  commit,
  commitContinue,
  commitAbort,
  abort,
  run,
  fork,
  merge,
  mergeContinue,
  mergeAbort,
  show,
  runs,
  replay,
  scan,
  push,
  pull,
  tag,
  tagList,
  tagDelete,
  verify,
  gc,
  ...WEB_VIEW_QUERIES,
]

/** The operation a service call names (`POST /v1/<name>`), or undefined. */
export function findOperation(table: readonly AnyOperation[], name: string, { query = false } = {}): AnyOperation | undefined {
  return table.find((op) => op.name === name && (op.query === true) === query)
}
