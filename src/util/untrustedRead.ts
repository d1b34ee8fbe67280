import { constants } from 'node:fs'

/**
 * How a file that someone else may have put there (a cloned store, an unpacked layout, a workspace a sandboxed
 * command writes to) is opened to be read: never through a symlink (a link to `/dev/zero` would be read until memory
 * ends) and never waiting on a FIFO (an open would block until a writer came). The caller then reads it only when
 * `fstat` says it is a regular file.
 */
export const UNTRUSTED_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
