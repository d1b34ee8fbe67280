import { MAX_AGENT_LINE_BYTES } from './GuestChannel.js'

/**
 * A guest agent's bytes, split into lines. A long answer arrives in many pieces: each is
 * searched for its line ends once and joined once, so a line costs its length, not its
 * length squared. A line past MAX_AGENT_LINE_BYTES is given up (`tooLong`) instead of
 * held: a guest is not trusted to end its lines.
 */
export class AgentLines {
  private pending: Buffer[] = []
  private pendingBytes = 0

  constructor(
    private readonly line: (bytes: Buffer) => void,
    private readonly tooLong: () => void,
  ) {}

  push(bytes: Buffer): void {
    let from = 0
    for (let end = bytes.indexOf(0x0a); end >= 0; end = bytes.indexOf(0x0a, from)) {
      const whole = this.pending.length === 0 ? bytes.subarray(from, end) : Buffer.concat([...this.pending, bytes.subarray(from, end)])
      this.pending = []
      this.pendingBytes = 0
      from = end + 1
      this.line(whole)
    }
    if (from < bytes.length) {
      this.pending.push(bytes.subarray(from))
      this.pendingBytes += bytes.length - from
    }
    if (this.pendingBytes > MAX_AGENT_LINE_BYTES) {
      this.pending = []
      this.pendingBytes = 0
      this.tooLong()
    }
  }
}
