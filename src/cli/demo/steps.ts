import type { DemoStep } from './DemoContext.js'
import { branchDemo } from './branchDemo.js'
import { imageDemo } from './imageDemo.js'
import { patternsDemo } from './patternsDemo.js'
import { registryDemo } from './registryDemo.js'
import { storeDemo } from './storeDemo.js'
import { traceDemo } from './traceDemo.js'

/** The demo's acts, in order; each capability adds its own file here. */
export const demoSteps: Array<{ name: string; run: DemoStep }> = [
  { name: 'image', run: imageDemo },
  { name: 'store', run: storeDemo },
  { name: 'trace', run: traceDemo },
  { name: 'branch', run: branchDemo },
  { name: 'patterns', run: patternsDemo },
  { name: 'registry', run: registryDemo },
]
