export { ExitCode, ForkpointError, UsageError, InternalError, CorruptDataError, isForkpointError } from './ForkpointError.js'
export {
  StoreNotFoundError,
  UnsafeStoreOwnerError,
  ObjectNotFoundError,
  AmbiguousIdError,
  DigestMismatchError,
  MalformedObjectError,
  UnsafePathError,
  LockTimeoutError,
  RefConflictError,
  StoreCorruptError,
} from './storeErrors.js'
export { DirtyWorkspaceError, TargetNotEmptyError, MergeConflictError, UnsupportedFileError, PathLimitError, FileWriteError } from './worldErrors.js'
export {
  RunArtifactError,
  RunNotFoundError,
  ReplayDivergenceError,
  ReplayNotPossibleError,
  OfflineViolationError,
  EncryptionKeyError,
  DecryptionError,
  UntrustedCommandError,
  AgentFailedError,
} from './traceErrors.js'
export { JsonTooDeepError } from './jsonErrors.js'
export { BranchError, ConflictError, BranchStaleError, BranchNotFoundError, BranchExistsError, BranchBusyError, BackendUnavailableError, SandboxError } from './branchErrors.js'
export { BranchStateError } from './branchErrors.js'
export { PatternError, PatternCancelledError, PatternCallbackError } from './patternErrors.js'
export { RemoteSpecError, RegistryRequestError, RegistryAuthError, RemoteImageNotFoundError, InvalidImageError, InvalidPackError, SignatureError } from './registryErrors.js'
export { InputNotFoundError, MissingPackageError } from './inputErrors.js'
export { MalformedTensorFileError } from './modelErrors.js'
export { MachineError, MachineNotFoundError, MachineUnavailableError, AcceleratorFailedError, GuestStoppedError, PageScriptError } from './machineErrors.js'
export { FunctionCandidateError, InvalidJobError, QueueUnreachableError, WorkerRegistryError } from './fanoutErrors.js'
export { LedgerTamperedError, EffectKeyConflictError, EffectToolMissingError, EffectsPolicyError } from './effectErrors.js'
export { RequestRefusedError } from './serviceErrors.js'
