/**
 * The runtime's request protocol (docs/sandbox.md): a message is a 32-bit little-endian byte
 * count, then that many bytes of `key=value\0` fields. A key may repeat; order is kept.
 */
export type Fields = Array<[string, string]>

export function encodeMessage(fields: Fields): Buffer {
  const body = Buffer.concat(fields.map(([k, v]) => Buffer.from(`${k}=${v}\0`)))
  const head = Buffer.alloc(4)
  head.writeUInt32LE(body.length)
  return Buffer.concat([head, body])
}

/** Feeds bytes as they come; calls `onMessage` with each whole message's fields (first value of each key). */
export function messageReader(onMessage: (fields: Record<string, string>) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0)
  return (chunk) => {
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32LE(0)) {
      const end = 4 + pending.readUInt32LE(0)
      const fields: Record<string, string> = {}
      for (const field of pending.subarray(4, end).toString('utf8').split('\0')) {
        const eq = field.indexOf('=')
        if (eq > 0 && !(field.slice(0, eq) in fields)) fields[field.slice(0, eq)] = field.slice(eq + 1)
      }
      pending = pending.subarray(end)
      onMessage(fields)
    }
  }
}
