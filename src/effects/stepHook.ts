/** Told each durable step of a commit's outbox by name; a test stops the process there to show every crash point is safe. */
export type StepHook = (step: string) => Promise<void>

export const noSteps: StepHook = async () => undefined
