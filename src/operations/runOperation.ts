import type { StoreLocator } from '../store/findStore.js'
import { checkArgs } from './checkArgs.js'
import { type AnyOperation, type OperationContext, remoteInput } from './operation.js'

/**
 * Run an operation on arguments not yet checked: the strict zod check of its input (less
 * the local fields, for a remote caller), then its handler.
 * @throws {UsageError} arguments the operation's schema refuses
 */
export async function runOperation(op: AnyOperation, where: StoreLocator, args: unknown, ctx: OperationContext): Promise<object> {
  const input = ctx.policy === null ? op.input : remoteInput(op)
  return op.run(where, checkArgs(op.name, input, args), ctx)
}
