import type { DemoStep } from './DemoContext.js'
import { patternsDemo } from './patternsDemo.js'
import { storeDemo } from './storeDemo.js'

/** The demo's acts, in order; each capability adds its own file here. */
export const demoSteps: Array<{ name: string; run: DemoStep }> = [
  { name: 'store', run: storeDemo },
  { name: 'patterns', run: patternsDemo },
]
