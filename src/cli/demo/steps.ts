import type { DemoStep } from './DemoContext.js'

/** The demo's acts, in order; each capability adds its own file here. */
export const demoSteps: Array<{ name: string; run: DemoStep }> = []
