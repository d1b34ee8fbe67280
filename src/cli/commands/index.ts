import type { Command } from 'commander'
import { registerDemo } from './demo.js'
import { registerInit } from './init.js'

/** Every CLI command, each registered from its own file. */
export const commands: Array<(program: Command) => void> = [
  registerInit,
  registerDemo,
]
