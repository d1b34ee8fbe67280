import type { HttpPolicy } from '../effects/httpPolicy.js'
import type { CommandValue } from '../patterns/runCandidate.js'
import type { CandidateStatus, CommandTask } from '../patterns/types.js'
import type { Digest } from '../objects/digest.js'

/** The BullMQ queue's name (its keys are `bull:forkpoint:…`). */
export const QUEUE_NAME = 'forkpoint'

/** What of a command candidate travels: the command, its score command, environment, network and limits. */
export type PortableCandidate = Pick<CommandTask, 'cmd' | 'score' | 'net' | 'env' | 'memory' | 'pids' | 'cpu'>

/** One candidate as a job: everything a worker needs, nothing of the submitter's process. It travels signed (jobSignature) and is checked against `fanoutJobSchema`. */
export interface FanoutJobData {
  /** The exploration this job belongs to (hex): cancellation and tags go by it. */
  group: string
  index: number
  /** The base image: its id, and where it is (`oci://…@sha256:<manifest>`). */
  base: { id: Digest; remote: string }
  /** The registry the base is in and the result goes to (`oci://HOST/REPO`); a worker serving another refuses the job. */
  registry: string
  candidate: PortableCandidate
  timeoutMs: number | null
  /** false: run unsandboxed, which only a worker started with `allowUnsandboxed` does (any other refuses the job). */
  isolate: boolean
  /** The submitter's HTTP effects policy: which requests wait in the outbox. */
  httpPolicy: HttpPolicy | null
  /** The result image's `createdAt`: fixed by the job, so a retried job makes the identical image. */
  createdAt: string
}

/** What a worker reports for a job (a candidate that failed is a result; only trouble of the machinery fails the job). */
export interface FanoutJobResult {
  status: CandidateStatus
  score: number | null
  value?: CommandValue
  error?: string
  /** A success's image, pushed untagged: `REGISTRY@manifest` names it; null otherwise. */
  image: { id: Digest; manifest: Digest } | null
  /** How many irreversible effects wait in the image's outbox (its `effects` layer). */
  deferred: number
  worker: string
  durationMs: number
}

/** Progress a worker reports on a job (BullMQ job progress). */
export interface FanoutJobProgress {
  phase: 'pulling' | 'running' | 'pushing'
  worker: string
}

export const jobId = (group: string, index: number): string => `${group}-${index}`

/** Redis pub/sub channel on which submitters announce cancelled explorations, and the key that remembers one. */
export const CANCEL_CHANNEL = 'forkpoint:fanout:cancel'
export const cancelledKey = (group: string): string => `forkpoint:fanout:cancelled:${group}`
