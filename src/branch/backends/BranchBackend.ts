import type { BackendName, BranchState, HostView, ProcessId } from '../types.js'

/** How a branch's view was mounted: in a namespace holder, in the host's namespace, or neither (a plain directory). */
export interface Mounted {
  holder: ProcessId | null
  hostView?: HostView | undefined
}

/** How a branch's writable view is made from its read-only base layers; each backend passes one conformance suite. */
export interface BranchBackend {
  readonly name: BackendName
  /**
   * Where a new branch is to be mounted in the host's mount namespace, where every tool
   * sees it (a persistent one when that can be done here; one `onHost`, and one at `path`
   * when given), or undefined. Recorded before it is mounted, so that a crash leaves no
   * mount unfound.
   * @throws {UsageError} @throws {BackendUnavailableError} a `path` or `onHost` that cannot be had
   */
  hostViewFor(args: { persistent: boolean; onHost: boolean; path?: string }): HostView | undefined
  /**
   * Make the writable view inside the branch directory `dir` (at `hostView` when given, else
   * in a holder if one is needed); with `disk`, its writes capped at that many bytes.
   * @throws {BackendUnavailableError} `disk` where this backend cannot cap
   */
  create(args: { dir: string; layers: string[]; persistent: boolean; hostView?: HostView | undefined; disk?: number | undefined }): Promise<Mounted>
  /** Mount again a persistent branch whose holder or mount is gone (a reboot). Returns the new holder. */
  revive(state: BranchState, dir: string): Promise<ProcessId | null>
  /** The writable view as mounted: inside the holder's namespace when there is a holder. */
  viewMount(state: BranchState, dir: string): string
  /** The branch's base as one read-only directory. */
  base(state: BranchState, dir: string): string
  /** Where every change of the branch shows (an overlay's upper layer), or null: compare the whole view. */
  changeCandidates(dir: string): string | null
  /** Freeze the branch as it is now into `into`; returns the layers a child branch stacks on. */
  freeze(state: BranchState, dir: string, into: string): Promise<string[]>
  /** Unmount and stop the holder, leaving plain directories to remove. Safe to run again. */
  teardown(state: BranchState, dir: string): Promise<void>
}
