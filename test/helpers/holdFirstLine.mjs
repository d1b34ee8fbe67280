// Preloaded into a command under test (NODE_OPTIONS=--import=…): the process stops for
// HOLD_FIRST_LINE_MS right after its first write to stdout, so that a signal sent the moment
// that line is read arrives before anything the command does after printing it.
const write = process.stdout.write.bind(process.stdout)
let held = false
process.stdout.write = (...args) => {
  const written = write(...args)
  if (!held) {
    held = true
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.env.HOLD_FIRST_LINE_MS))
  }
  return written
}
