import type { Command } from 'commander'
import { registerCheckout } from './checkout.js'
import { registerDemo } from './demo.js'
import { registerDiff } from './diff.js'
import { registerExplore } from './explore.js'
import { registerGc } from './gc.js'
import { registerInit } from './init.js'
import { registerLog } from './log.js'
import { registerShow } from './show.js'
import { registerSnapshot } from './snapshot.js'
import { registerSpeculate } from './speculate.js'
import { registerStatus } from './status.js'
import { registerTag } from './tag.js'
import { registerVerify } from './verify.js'

/** Every CLI command, each registered from its own file. */
export const commands: Array<(program: Command) => void> = [
  registerInit,
  registerSnapshot,
  registerStatus,
  registerLog,
  registerShow,
  registerDiff,
  registerCheckout,
  registerTag,
  registerGc,
  registerVerify,
  registerSpeculate,
  registerExplore,
  registerDemo,
]
