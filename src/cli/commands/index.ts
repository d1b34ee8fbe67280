import type { Command } from 'commander'
import { registerCheckoutAgent } from './checkoutAgent.js'
import { registerCi } from './ci.js'
import { registerClaude } from './claude.js'
import { registerClone } from './clone.js'
import { registerDemo } from './demo.js'
import { registerInit } from './init.js'
import { registerMcp } from './mcp.js'
import { registerLlm } from './llm.js'
import { registerMachine } from './machine.js'
import { registerServe } from './serve.js'
import { registerPack } from './pack.js'
import { registerShell } from './shell.js'
import { registerUi } from './ui.js'
import { registerUnpack } from './unpack.js'
import { registerWorker } from './worker.js'

/** The CLI commands of their own, each registered from its own file (the operation table's are made from it: operationCommands.ts). */
export const commands: Array<(program: Command) => void> = [
  registerInit,
  registerCheckoutAgent,
  registerLlm,
  registerMachine,
  registerCi,
  registerClone,
  registerPack,
  registerUnpack,
  registerShell,
  registerMcp,
  registerServe,
  registerUi,
  registerClaude,
  registerWorker,
  registerDemo,
]
