import { nameOfRefComponent, refComponent } from '../../store/refComponent.js'

export const THREAD_REFS = 'refs/threads/'

/** The ref that holds a thread's latest image: `refs/threads/<thread id>` (`refComponent` spells ids a ref name cannot). */
export function threadRef(threadId: unknown): string {
  return THREAD_REFS + refComponent(threadId, 'thread_id')
}

/** The thread id a ref under `refs/threads/` holds the image of. */
export function threadIdOf(ref: string): string {
  return nameOfRefComponent(ref.slice(THREAD_REFS.length))
}
