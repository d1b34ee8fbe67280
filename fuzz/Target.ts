import type fc from 'fast-check'

/** The function under test for one target, opened once per target process: it gets an input and succeeds or throws. */
export type RunInput = (input: Buffer) => Promise<unknown>

/** How a target module opens a target by name in its process; `context` names the scratch directories the corpus made. */
export type OpenTarget = (name: string, context: Record<string, string>) => Promise<RunInput>

/** A target as the fuzzer drives it: the inputs it makes and the extension a finding is saved with. */
export interface FuzzTarget {
  name: string
  ext: string
  inputs: fc.Arbitrary<Buffer>
}
