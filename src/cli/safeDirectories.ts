import { allowStoreDirectories } from '../store/storeOwner.js'

/** The stores another user owns that this command may use, as `FORKPOINT_SAFE_DIRECTORY` lists them (separated by ':'). */
export function allowSafeDirectories(env: NodeJS.ProcessEnv): void {
  allowStoreDirectories((env['FORKPOINT_SAFE_DIRECTORY'] ?? '').split(':'))
}
