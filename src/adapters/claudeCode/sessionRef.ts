import { refComponent } from '../../store/refComponent.js'

/** The ref that holds a Claude Code session's latest image: `refs/claude/<session id>`. */
export function sessionRef(sessionId: unknown): string {
  return `refs/claude/${refComponent(sessionId, 'session_id')}`
}
