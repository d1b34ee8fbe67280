/** A thread of `FileWriters`: writes each batch of new files it is sent, synchronously, and answers with the first failure, if any. */
import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs'
import { parentPort } from 'node:worker_threads'
import type { WriteBatch, WriteReply } from './FileWriters.js'

parentPort!.on('message', ({ id, bytes, files }: WriteBatch) => {
  let reply: WriteReply = { id, failure: null }
  let at = 0
  for (const { path, mode, size } of files) {
    try {
      writeNew(typeof path === 'string' ? path : Buffer.from(path.buffer, path.byteOffset, path.byteLength), mode, new Uint8Array(bytes, at, size))
      at += size
    } catch (err) {
      const { code, message } = err as NodeJS.ErrnoException
      reply = { id, failure: { path: Buffer.from(path).toString(), code: code ?? null, message } }
      break
    }
  }
  parentPort!.postMessage(reply)
})

function writeNew(path: string | Buffer, mode: number, bytes: Uint8Array): void {
  const fd = openSync(path, 'wx', mode)
  try {
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at)
    fchmodSync(fd, mode) // exactly `mode`, past the umask
  } finally {
    closeSync(fd)
  }
}
