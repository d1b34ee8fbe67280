/**
 * Settles at the first SIGINT or SIGTERM. A command that serves until stopped takes it
 * before it prints that it is ready: until a listener is there, a signal's default action
 * ends the process without its clean-up, and whoever read the line may stop it at once.
 */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop).off('SIGTERM', stop) // a second one ends the process as usual
      resolve(signal)
    }
    process.on('SIGINT', stop).on('SIGTERM', stop)
  })
}
