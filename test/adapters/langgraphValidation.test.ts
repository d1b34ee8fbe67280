import { rm } from 'node:fs/promises'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ForkpointSaver } from '../../src/adapters/langgraph/index.js'
import { storeWorkspace } from '../helpers/workspace.js'

// The validation suite is written for vitest with globals; this project runs without them.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it })
const { validate } = await import('@langchain/langgraph-checkpoint-validation')

const workspaces = new WeakMap<ForkpointSaver, string>()

for (const captureWorkspace of [true, false]) {
  validate({
    checkpointerName: `ForkpointSaver (captureWorkspace: ${captureWorkspace})`,
    async createCheckpointer() {
      const { dir, store } = await storeWorkspace({ 'notes.md': 'a workspace beside the threads\n' })
      const saver = new ForkpointSaver({ dir, store, captureWorkspace })
      workspaces.set(saver, dir)
      return saver
    },
    async destroyCheckpointer(saver) {
      await rm(workspaces.get(saver)!, { recursive: true, force: true })
    },
  })
}
