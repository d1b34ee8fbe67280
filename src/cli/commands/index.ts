import type { Command } from 'commander'
import { registerAbort } from './abort.js'
import { registerBranch } from './branch.js'
import { registerCheckout } from './checkout.js'
import { registerCheckoutAgent } from './checkoutAgent.js'
import { registerCi } from './ci.js'
import { registerClaude } from './claude.js'
import { registerClone } from './clone.js'
import { registerCommit } from './commit.js'
import { registerDemo } from './demo.js'
import { registerDiff } from './diff.js'
import { registerEffects } from './effects.js'
import { registerExplore } from './explore.js'
import { registerFork } from './fork.js'
import { registerGc } from './gc.js'
import { registerInit } from './init.js'
import { registerLog } from './log.js'
import { registerMcp } from './mcp.js'
import { registerLlm } from './llm.js'
import { registerMachine } from './machine.js'
import { registerMerge } from './merge.js'
import { registerReplay } from './replay.js'
import { registerRun } from './run.js'
import { registerRuns } from './runs.js'
import { registerServe } from './serve.js'
import { registerPack } from './pack.js'
import { registerPull } from './pull.js'
import { registerPush } from './push.js'
import { registerShell } from './shell.js'
import { registerShow } from './show.js'
import { registerSnapshot } from './snapshot.js'
import { registerSpeculate } from './speculate.js'
import { registerStatus } from './status.js'
import { registerTag } from './tag.js'
import { registerUi } from './ui.js'
import { registerUnpack } from './unpack.js'
import { registerVerify } from './verify.js'
import { registerWorker } from './worker.js'

/** Every CLI command, each registered from its own file. */
export const commands: Array<(program: Command) => void> = [
  registerInit,
  registerSnapshot,
  registerStatus,
  registerLog,
  registerShow,
  registerDiff,
  registerCheckout,
  registerCheckoutAgent,
  registerTag,
  registerFork,
  registerMerge,
  registerLlm,
  registerMachine,
  registerGc,
  registerVerify,
  registerRun,
  registerReplay,
  registerRuns,
  registerCi,
  registerPush,
  registerPull,
  registerClone,
  registerPack,
  registerUnpack,
  registerBranch,
  registerCommit,
  registerAbort,
  registerShell,
  registerMcp,
  registerServe,
  registerUi,
  registerClaude,
  registerSpeculate,
  registerExplore,
  registerWorker,
  registerEffects,
  registerDemo,
]
